package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// askerServer is a 2025-11-25 server that asks its client during calls:
// ask elicits a name, sample asks for a sampled message, whoami names the
// upstream session the call came on, and hold waits until its release
// channel is closed.
func askerServer(release <-chan struct{}, started chan<- struct{}) *mcp.Server {
	up := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	obj := json.RawMessage(`{"type":"object"}`)
	up.AddTool(&mcp.Tool{Name: "ask", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
			Message:         "What is your name?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}},
		})
		if err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "elicitation failed: " + err.Error()}}}, nil
		}
		name, _ := res.Content["name"].(string)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action + ":" + name}}}, nil
	})
	up.AddTool(&mcp.Tool{Name: "sample", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{
			MaxTokens: 10,
			Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "say hi"}}},
		})
		if err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "sampling failed: " + err.Error()}}}, nil
		}
		tc, _ := res.Content.(*mcp.TextContent)
		if tc == nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "sampling: no text"}}}, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sampled:" + tc.Text}}}, nil
	})
	up.AddTool(&mcp.Tool{Name: "whoami", InputSchema: obj}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: req.Session.ID()}}}, nil
	})
	up.AddTool(&mcp.Tool{Name: "hold", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case started <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: req.Session.ID()}}}, nil
	})
	return up
}

// serveLegacyUpstream serves up statefully (2025-11-25 sessions, each with
// its own id) on loopback and returns a per-client server block for it.
func serveLegacyUpstream(t *testing.T, name string, up *mcp.Server, maxSessions int) config.Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil)}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return config.Server{
		Name: name, Transport: config.TransportStreamableHTTP, URL: "http://" + ln.Addr().String(),
		VersionNegotiation: config.NegotiationLegacy, DiscoveryTimeout: 20 * time.Second, CallTimeout: time.Minute,
		Enabled: true, Apps: config.AppsAuto, SessionMode: config.SessionPerClient, MaxClientSessions: maxSessions,
	}
}

// answering is a legacy client that answers elicitation with name and
// sampling with text.
func answering(name, text string) *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if req.Params.Message != "What is your name?" {
				return nil, fmt.Errorf("unexpected question %q", req.Params.Message)
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": name}}, nil
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "test", Role: "assistant", Content: &mcp.TextContent{Text: text}}, nil
		},
	}
}

func callText(t *testing.T, cs *mcp.ClientSession, tool string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitBound)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("tools/call %s: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("tools/call %s: tool error %q", tool, textOf(res))
	}
	return textOf(res)
}

func clientSessions(e *env, server string) int {
	for _, s := range e.h.Servers() {
		if s.Name == server {
			return s.ClientSessions
		}
	}
	return -1
}

// waitClientSessions waits until server has n per-client sessions.
func waitClientSessions(t *testing.T, e *env, server string, n int) {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for clientSessions(e, server) != n {
		if time.Now().After(deadline) {
			t.Fatalf("%s has %d per-client sessions, want %d", server, clientSessions(e, server), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPerClientSessions: with session_mode = "per_client" a legacy
// server's elicitation and sampling requests reach the gateway client that
// made the call, over its own upstream session, even with two clients
// calling at once; other doors and 2026-07-28 clients keep the shared
// session; a client's sessions end with it.
func TestPerClientSessions(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	e := newEnvServers(t, []config.Server{serveLegacyUpstream(t, "asker", askerServer(release, nil), 8)})
	alice := e.connect(t, "/mcp/servers/asker", aliceToken, legacyVersion, answering("Alice", "hi from alice's model"))
	bob := e.connect(t, "/mcp/servers/asker", bobToken, legacyVersion, answering("Bob", "hi from bob's model"))

	// Concurrent calls from both clients: each answer comes from its own
	// client, never the other's.
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 10 {
		for _, c := range []struct {
			cs   *mcp.ClientSession
			want string
		}{{alice, "accept:Alice"}, {bob, "accept:Bob"}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := c.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
				switch {
				case err != nil:
					errs <- fmt.Errorf("call %d: %v", i, err)
				case textOf(res) != c.want:
					errs <- fmt.Errorf("call %d: got %q, want %q", i, textOf(res), c.want)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := callText(t, alice, "sample"); got != "sampled:hi from alice's model" {
		t.Errorf("alice's sample = %q", got)
	}
	if got := callText(t, bob, "sample"); got != "sampled:hi from bob's model" {
		t.Errorf("bob's sample = %q", got)
	}

	// Each client has an upstream session of its own; the host's other
	// doors use the shared one, and so does a 2026-07-28 client (it has no
	// session to be asked on).
	aliceUp, bobUp := callText(t, alice, "whoami"), callText(t, bob, "whoami")
	shared, err := e.h.CallTool(t.Context(), host.CallToolRequest{Server: "asker", Tool: "whoami", Arguments: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	sharedUp := textOf(shared)
	if aliceUp == bobUp || aliceUp == sharedUp || bobUp == sharedUp || sharedUp == "" {
		t.Fatalf("upstream sessions: alice %q, bob %q, shared %q; want three different ones", aliceUp, bobUp, sharedUp)
	}
	if again := callText(t, alice, "whoami"); again != aliceUp {
		t.Fatalf("alice's second call came on upstream session %q, her first on %q", again, aliceUp)
	}
	modern := e.connect(t, "/mcp/servers/asker", aliceToken, modernVersion, nil)
	if got := callText(t, modern, "whoami"); got != sharedUp {
		t.Fatalf("a 2026-07-28 client's call came on %q, want the shared session %q", got, sharedUp)
	}
	waitClientSessions(t, e, "asker", 2)

	// A client that declared no elicitation is not asked: the server learns
	// it cannot ask (what it does then is up to it).
	mute := e.connect(t, "/mcp/servers/asker", aliceToken, legacyVersion, nil)
	res, err := mute.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(textOf(res), "elicitation") {
		t.Fatalf("ask from a client without elicitation: %v, %+v", err, res)
	}
	waitClientSessions(t, e, "asker", 3)

	// Leaving closes the client's upstream session.
	mute.Close()
	bob.Close()
	waitClientSessions(t, e, "asker", 1)
}

// TestPerClientCap: at max_client_sessions the least recently used idle
// session makes room; when every one is busy the call waits for one to go
// idle and then gets a session of its own, never the shared one (where
// what the server asks would not reach it).
func TestPerClientCap(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{}, 1)
	e := newEnvServers(t, []config.Server{serveLegacyUpstream(t, "asker", askerServer(release, started), 1)})
	a := e.connect(t, "/mcp/servers/asker", aliceToken, legacyVersion, answering("A", "a"))
	b := e.connect(t, "/mcp/servers/asker", aliceToken, legacyVersion, answering("B", "b"))
	shared, err := e.h.CallTool(t.Context(), host.CallToolRequest{Server: "asker", Tool: "whoami", Arguments: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	sharedUp := textOf(shared)

	aUp := callText(t, a, "whoami")
	bUp := callText(t, b, "whoami") // a's idle session is closed for b's
	if aUp == bUp || aUp == sharedUp || bUp == sharedUp {
		t.Fatalf("a %q, b %q, shared %q: want three different sessions", aUp, bUp, sharedUp)
	}
	waitClientSessions(t, e, "asker", 1)

	// b holds the one session; a's call waits for it to go idle.
	events, stop, err := e.h.Subscribe(host.Caller{Principal: host.Principal{Name: "alice"}})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	held := make(chan string, 1)
	go func() {
		res, err := b.CallTool(t.Context(), &mcp.CallToolParams{Name: "hold", Arguments: map[string]any{}})
		if err != nil {
			held <- "error: " + err.Error()
			return
		}
		held <- textOf(res)
	}()
	select {
	case <-started:
	case <-time.After(waitBound):
		t.Fatal("the held call did not start")
	}
	waited := make(chan string, 1)
	go func() { waited <- callText(t, a, "whoami") }()
	waitCallStarted(t, events, "whoami")
	close(release)
	if got := <-held; got != bUp {
		t.Fatalf("b's held call came on %q, want its own %q", got, bUp)
	}
	if got := <-waited; got == sharedUp || got == bUp {
		t.Fatalf("at the cap with every session busy, a's call came on %q (shared %q, b's %q), want a session of a's own", got, sharedUp, bUp)
	}
}

// waitCallStarted waits for the event of a recorded call of tool starting.
func waitCallStarted(t *testing.T, events <-chan host.Event, tool string) {
	t.Helper()
	timeout := time.After(waitBound)
	for {
		select {
		case ev := <-events:
			if cs, ok := ev.Data.(host.CallStarted); ok && ev.Type == "call_started" && cs.Tool == tool {
				return
			}
		case <-timeout:
			t.Fatalf("no call of %s started", tool)
		}
	}
}

// TestPerClientShare: one principal whose clients keep calls running
// holds at most max_client_sessions_per_principal of the per-client
// sessions (default a quarter of max_client_sessions, here 1 of 4): its
// other clients' calls wait, and another principal's call still gets a
// session of its own, where the server's question reaches its client.
// All of the first principal's calls end well once its first is released.
// (Before: its four clients took all four sessions, the other principal's
// call took the shared session, and its elicitation was declined,
// research/redteam.md F10.)
func TestPerClientShare(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{}, 4)
	e := newEnvServers(t, []config.Server{serveLegacyUpstream(t, "asker", askerServer(release, started), 4)})
	events, stop, err := e.h.Subscribe(host.Caller{Principal: host.Principal{Name: "bob"}})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 4 {
		cs := e.connect(t, "/mcp/servers/asker", bobToken, legacyVersion, answering("Bob", "b"))
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(t.Context(), waitBound)
			defer cancel()
			if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hold", Arguments: map[string]any{}}); err != nil || res.IsError {
				errs <- fmt.Errorf("bob's hold %d: %v %+v", i, err, res)
			}
		}()
	}
	for range 4 {
		waitCallStarted(t, events, "hold")
	}
	select {
	case <-started:
	case <-time.After(waitBound):
		t.Fatal("no hold started")
	}

	alice := e.connect(t, "/mcp/servers/asker", aliceToken, legacyVersion, answering("Alice", "a"))
	if got := callText(t, alice, "ask"); got != "accept:Alice" {
		t.Errorf("alice's call while bob holds his share: %q, want her own answer", got)
	}
	if n := clientSessions(e, "asker"); n != 2 {
		t.Errorf("%d per-client sessions, want bob's one and alice's", n)
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestPerClientStdio: a stdio server in per-client mode runs a process
// per client, and the processes end with their clients.
func TestPerClientStdio(t *testing.T) {
	s := stdioServer("fx", testbin.Build(t, wellbehavedPkg))
	s.SessionMode, s.MaxClientSessions, s.MaxClientSessionsPerPrincipal = config.SessionPerClient, 4, 4
	e := newEnvServers(t, []config.Server{s})
	var clients []*mcp.ClientSession
	for range 3 {
		cs := e.connect(t, "/mcp/servers/fx", aliceToken, legacyVersion, nil)
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
		if err != nil || textOf(res) != "x" {
			t.Fatalf("echo: %v %+v", err, res)
		}
		clients = append(clients, cs)
	}
	waitClientSessions(t, e, "fx", 3)
	for _, cs := range clients {
		cs.Close()
	}
	waitClientSessions(t, e, "fx", 0)
}

// TestPerClientSilentClient: a client that never answers the server's
// question holds only its own call: cancelling the call ends it and the
// question, and the client's next call works; another client is not held
// meanwhile.
func TestPerClientSilentClient(t *testing.T) {
	e := newEnvServers(t, []config.Server{serveLegacyUpstream(t, "asker", askerServer(nil, nil), 8)})
	asked, stop := make(chan struct{}, 1), make(chan struct{})
	silent := e.connect(t, "/mcp/servers/asker", aliceToken, legacyVersion, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked <- struct{}{}
			// go-sdk's server sends no cancellation for a request it gave
			// up on, so the handler waits until the test ends (before the
			// client is closed: Close waits for its handlers).
			select {
			case <-ctx.Done():
			case <-stop:
			}
			return nil, errors.New("no answer")
		},
	})
	t.Cleanup(func() { close(stop) })
	other := e.connect(t, "/mcp/servers/asker", bobToken, legacyVersion, answering("Bob", "b"))

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := silent.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
		done <- err
	}()
	select {
	case <-asked:
	case <-time.After(waitBound):
		t.Fatal("the silent client was never asked")
	}
	if got := callText(t, other, "ask"); got != "accept:Bob" {
		t.Fatalf("another client's call while one is silent: %q", got)
	}
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a cancelled call succeeded")
		}
	case <-time.After(waitBound):
		t.Fatal("cancelling the silent client's call did not end it")
	}
	// Alice's entry of the call says it was cancelled (once the host has
	// seen the cancellation and recorded it).
	for deadline := time.Now().Add(waitBound); lastStatus(t, e, "ask") != store.StatusCancelled; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the silent client's entry is %q, want %q", lastStatus(t, e, "ask"), store.StatusCancelled)
		}
	}
	if got := callText(t, silent, "whoami"); got == "" {
		t.Fatal("the silent client's next call failed")
	}
}
