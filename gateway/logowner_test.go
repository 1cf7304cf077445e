package gateway_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// logListener is a legacy gateway client that keeps the log messages it
// hears, in order.
type logListener struct {
	cs    *mcp.ClientSession
	mu    sync.Mutex
	heard []string
	more  chan struct{} // a message was heard (capacity 1)
}

func listenLogs(t *testing.T, e *env, token string) *logListener {
	t.Helper()
	l := &logListener{more: make(chan struct{}, 1)}
	l.cs = e.connect(t, "/mcp", token, legacyVersion, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			s, _ := r.Params.Data.(string)
			l.mu.Lock()
			l.heard = append(l.heard, s)
			l.mu.Unlock()
			select {
			case l.more <- struct{}{}:
			default:
			}
		},
	})
	if err := l.cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	return l
}

// waitHeard waits until the client has heard msg and returns all it heard.
func (l *logListener) waitHeard(t *testing.T, msg string) []string {
	t.Helper()
	timeout := time.After(waitBound)
	for {
		l.mu.Lock()
		heard := slices.Clone(l.heard)
		l.mu.Unlock()
		if slices.Contains(heard, msg) {
			return heard
		}
		select {
		case <-l.more:
		case <-timeout:
			t.Fatalf("%q never heard; heard %q", msg, heard)
		}
	}
}

func (l *logListener) call(t *testing.T, tool string, args map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitBound)
	defer cancel()
	res, err := l.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %+v", tool, err, res)
	}
}

// holdServer is an in-process server with the elicit fixture's say, hold
// and release tools (testdata/servers/elicit), logging on each call's own
// stream.
func holdServer() *mcp.Server {
	up := mcp.NewServer(&mcp.Implementation{Name: "holder", Version: "1"}, nil)
	var holds sync.Map // id → chan struct{}
	holdOf := func(id string) chan struct{} {
		ch, _ := holds.LoadOrStore(id, make(chan struct{}))
		return ch.(chan struct{})
	}
	arg := func(req *mcp.CallToolRequest, name string) string {
		var args map[string]any
		_ = json.Unmarshal(req.Params.Arguments, &args)
		s, _ := args[name].(string)
		return s
	}
	say := func(ctx context.Context, req *mcp.CallToolRequest, text string) {
		_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: text})
	}
	done := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}
	obj := json.RawMessage(`{"type":"object"}`)
	up.AddTool(&mcp.Tool{Name: "say", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		say(ctx, req, arg(req, "text"))
		return done, nil
	})
	up.AddTool(&mcp.Tool{Name: "hold", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		say(ctx, req, "held "+arg(req, "id"))
		select {
		case <-holdOf(arg(req, "id")):
			return done, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	up.AddTool(&mcp.Tool{Name: "release", InputSchema: obj}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		close(holdOf(arg(req, "id")))
		return done, nil
	})
	return up
}

// TestLogMessagesStayWithTheirCall: a shared stdio server logs during
// bob's call while alice's call runs on it too (research/redteam.md F9).
// The message names no call, so mcphost cannot tell whose it is: by
// default (log_messages = "own") neither client hears it, and alice never
// does; with log_messages = "all" both do, as the operator chose. With
// session_mode = "per_client" the message comes on bob's own session, and
// from a Streamable HTTP server on his call's own stream, so bob hears it
// and alice does not. What a server logs while only one call runs on it
// is that call's: each client hears its own "held" and "done". (Before:
// alice heard bob's message in every case.)
func TestLogMessagesStayWithTheirCall(t *testing.T) {
	bin := testbin.Build(t, "github.com/mcphost/mcphost/testdata/servers/elicit")
	const secret = "bob: card 4111-1111-1111-1111"
	for _, tc := range []struct {
		name, mode, logs string
		http             bool
		alice, bob       []string // what each hears, in order
	}{
		{"shared/own", config.SessionShared, config.LogMessagesOwn, false,
			[]string{"held a", "alice: done"}, []string{"bob: done"}},
		{"shared/all", config.SessionShared, config.LogMessagesAll, false,
			[]string{"held a", secret, "alice: done"}, []string{secret, "bob: done"}},
		{"per_client", config.SessionPerClient, config.LogMessagesOwn, false,
			[]string{"held a", "alice: done"}, []string{secret, "bob: done"}},
		{"shared/all/streamable_http", config.SessionShared, config.LogMessagesAll, true,
			[]string{"held a", "alice: done"}, []string{secret, "bob: done"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := stdioServer("lg", bin)
			if tc.http {
				s = serveLegacyUpstream(t, "lg", holdServer(), 0)
			}
			s.SessionMode, s.LogMessages = tc.mode, tc.logs
			if tc.mode == config.SessionPerClient {
				s.MaxClientSessions = 4
			}
			e := newEnvServers(t, []config.Server{s})
			alice, bob := listenLogs(t, e, aliceToken), listenLogs(t, e, bobToken)

			// alice's call runs (it has logged that it does) while bob's
			// logs his secret.
			held := make(chan error, 1)
			go func() {
				_, err := alice.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "lg__hold", Arguments: map[string]any{"id": "a"}})
				held <- err
			}()
			alice.waitHeard(t, "held a")
			bob.call(t, "lg__say", map[string]any{"text": secret})
			alice.call(t, "lg__release", map[string]any{"id": "a"})
			if err := <-held; err != nil {
				t.Fatal(err)
			}
			// Each client then calls alone: what it hears comes after
			// anything it heard before.
			alice.call(t, "lg__say", map[string]any{"text": "alice: done"})
			bob.call(t, "lg__say", map[string]any{"text": "bob: done"})
			if got := alice.waitHeard(t, "alice: done"); !slices.Equal(got, tc.alice) {
				t.Errorf("alice heard %q, want %q", got, tc.alice)
			}
			if got := bob.waitHeard(t, "bob: done"); !slices.Equal(got, tc.bob) {
				t.Errorf("bob heard %q, want %q", got, tc.bob)
			}
			if tc.logs == config.LogMessagesOwn && slices.ContainsFunc(alice.heard, func(s string) bool { return strings.HasPrefix(s, "bob") }) {
				t.Error("alice heard bob's log message")
			}
		})
	}
}
