package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// send sends one raw request to the gateway; token and sid may be empty.
func (e *env) send(t *testing.T, method, path, token, sid, body string) answer {
	t.Helper()
	h := http.Header{}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	if sid != "" {
		h.Set("Mcp-Session-Id", sid)
		h.Set("Mcp-Protocol-Version", legacyVersion)
	}
	return e.do(t, method, path, h, body)
}

// do sends one raw request to the gateway with a JSON body (when body is
// not empty), accepting JSON or an event stream, and the headers h.
func (e *env) do(t *testing.T, method, path string, h http.Header, body string) answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequestWithContext(t.Context(), method, e.base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range h {
		req.Header[k] = v
	}
	if host := h.Get("Host"); host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: b}
}

// openSession sends initialize (and initialized when it succeeds) as
// token and returns the answer and the session id.
func (e *env) openSession(t *testing.T, token string) (answer, string) {
	t.Helper()
	a := e.send(t, http.MethodPost, "/mcp", token, "", initializeBody)
	sid := a.header.Get("Mcp-Session-Id")
	if a.status == http.StatusOK {
		if sid == "" {
			t.Fatal("initialize: 200 without Mcp-Session-Id")
		}
		if b := e.send(t, http.MethodPost, "/mcp", token, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); b.status != http.StatusAccepted {
			t.Fatalf("initialized: %d %s", b.status, b.body)
		}
	}
	return a, sid
}

// mustOpen is openSession that fails the test unless the session opened.
func (e *env) mustOpen(t *testing.T, token string) string {
	t.Helper()
	a, sid := e.openSession(t, token)
	if a.status != http.StatusOK {
		t.Fatalf("initialize: %d %s, want 200", a.status, a.body)
	}
	return sid
}

// wantRefused checks a 429 with Retry-After and a JSON-RPC error whose
// message contains want.
func wantRefused(t *testing.T, a answer, want string) {
	t.Helper()
	if a.status != http.StatusTooManyRequests {
		t.Fatalf("status %d (%s), want 429", a.status, a.body)
	}
	if n, err := strconv.Atoi(a.header.Get("Retry-After")); err != nil || n < 1 {
		t.Errorf("Retry-After %q, want whole seconds ≥ 1", a.header.Get("Retry-After"))
	}
	if code, msg := a.rpcError(t); code != -32000 || !strings.Contains(msg, want) {
		t.Errorf("error %d %q, want -32000 naming %q", code, msg, want)
	}
}

// TestSessionCaps: 2025-11-25 sessions are capped per principal and in
// all, 429 beyond with Retry-After and a JSON-RPC error naming the
// setting; a go-sdk client is refused too; a DELETE frees its slot at once,
// requests that open no session hold none, and so does a session that
// timed out (research/redteam.md F6).
func TestSessionCaps(t *testing.T) {
	bin := testbin.Build(t, wellbehavedPkg)
	e := newEnvConfig(t, &config.Config{Servers: []config.Server{stdioServer("fx", bin)},
		Gateway: config.Gateway{MaxSessionsPerPrincipal: 2, MaxSessions: 3}})

	a1 := e.mustOpen(t, aliceToken)
	e.mustOpen(t, aliceToken)
	a, _ := e.openSession(t, aliceToken)
	wantRefused(t, a, "max_sessions_per_principal")
	client := mcp.NewClient(&mcp.Implementation{Name: "held", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: e.base + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{token: aliceToken, next: http.DefaultTransport}}}
	ctx, cancel := context.WithTimeout(t.Context(), waitBound)
	defer cancel()
	if cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion}); err == nil {
		cs.Close()
		t.Fatal("go-sdk's client opened a third session of alice")
	}

	b1 := e.mustOpen(t, bobToken)
	a, _ = e.openSession(t, bobToken)
	wantRefused(t, a, "max_sessions")

	if d := e.send(t, http.MethodDelete, "/mcp", aliceToken, a1, ""); d.status != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", d.status, d.body)
	}
	e.mustOpen(t, aliceToken) // the deleted session's slot

	if d := e.send(t, http.MethodDelete, "/mcp", bobToken, b1, ""); d.status != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", d.status, d.body)
	}
	for range 5 { // requests without a session that do not initialize one
		if a := e.send(t, http.MethodPost, "/mcp", bobToken, "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); a.status/100 == 2 && a.header.Get("Mcp-Session-Id") != "" {
			t.Fatalf("tools/list without a session opened one: %d %s", a.status, a.body)
		}
	}
	e.mustOpen(t, bobToken)

	t.Run("timeout", func(t *testing.T) {
		e := newEnvConfig(t, &config.Config{Servers: []config.Server{stdioServer("fx", bin)},
			Gateway: config.Gateway{MaxSessionsPerPrincipal: 1, MaxSessions: 1, SessionTimeout: 200 * time.Millisecond}})
		first := e.mustOpen(t, aliceToken)
		// Polling until the first session's timeout frees its slot,
		// bounded by waitBound.
		waitFor(t, "a session after the first timed out", func() bool {
			a, _ := e.openSession(t, aliceToken)
			if a.status != http.StatusOK && a.status != http.StatusTooManyRequests {
				t.Fatalf("initialize: %d %s", a.status, a.body)
			}
			return a.status == http.StatusOK
		})
		if a := e.send(t, http.MethodPost, "/mcp", aliceToken, first, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); a.status != http.StatusNotFound {
			t.Fatalf("the first session answered %d after its slot was taken, want 404 (timed out)", a.status)
		}
	})
}

// TestInitializeRateLimited: opening a session counts against the
// principal's rate_limit; past it, 429 with the time to wait.
func TestInitializeRateLimited(t *testing.T) {
	e := newEnvConfig(t, &config.Config{
		Servers: []config.Server{stdioServer("fx", testbin.Build(t, wellbehavedPkg))},
		Principals: []config.Principal{
			{Name: "alice", Token: aliceToken, RateLimit: config.RateLimit{CallsPerSecond: 1.0 / 3600, Burst: 2}},
			{Name: "bob", Token: bobToken},
		},
	})
	e.mustOpen(t, aliceToken)
	e.mustOpen(t, aliceToken)
	a, _ := e.openSession(t, aliceToken)
	wantRefused(t, a, "calling faster than its limit")
	if n, _ := strconv.Atoi(a.header.Get("Retry-After")); n < 60 {
		t.Errorf("Retry-After %q, want the bucket's wait (about an hour)", a.header.Get("Retry-After"))
	}
	e.mustOpen(t, bobToken) // another principal's budget
}

// sseStream is an open SSE answer read on a goroutine of its own: each
// data line is sent on events, and ended is closed when the body ends.
type sseStream struct {
	events chan string
	ended  chan struct{}
}

func readSSE(t *testing.T, resp *http.Response) *sseStream {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("stream: %d %s", resp.StatusCode, b)
	}
	s := &sseStream{events: make(chan string, 64), ended: make(chan struct{})}
	t.Cleanup(func() { resp.Body.Close() })
	go func() {
		defer close(s.ended)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				select {
				case s.events <- data:
				default:
				}
			}
		}
	}()
	return s
}

// getStream opens the standalone GET stream of a legacy session.
func (e *env) getStream(t *testing.T, token, sid string) *sseStream {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, e.base+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", legacyVersion)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return readSSE(t, resp)
}

// listenStream opens a 2026-07-28 subscriptions/listen stream for
// tools/list_changed and waits for its acknowledgement.
func (e *env) listenStream(t *testing.T, token string) *sseStream {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": map[string]any{
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    modernVersion,
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "held", "version": "1"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		},
		"notifications": map[string]any{"toolsListChanged": true},
	}})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.base+"/mcp", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Protocol-Version", modernVersion)
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	s := readSSE(t, resp)
	select {
	case ev := <-s.events:
		if !strings.Contains(ev, "notifications/subscriptions/acknowledged") {
			t.Fatalf("listen: first event %s, want the acknowledgement", ev)
		}
	case <-s.ended:
		t.Fatal("listen: the stream ended before its acknowledgement")
	case <-time.After(waitBound):
		t.Fatal("listen: no acknowledgement")
	}
	return s
}

// TestRevokedTokenEndsStreams: a reload that rotates bob's token ends his
// legacy GET stream and his 2026-07-28 listen stream at once and closes
// his session (404 afterwards, even with the new token); alice's stream of
// the same endpoint hears the reload's list_changed and her session
// serves on (research/redteam.md F12).
func TestRevokedTokenEndsStreams(t *testing.T) {
	e := newEnv(t, []string{"fx"})
	bobSID := e.mustOpen(t, bobToken)
	bobGET := e.getStream(t, bobToken, bobSID)
	bobListen := e.listenStream(t, bobToken)
	aliceSID := e.mustOpen(t, aliceToken)
	aliceGET := e.getStream(t, aliceToken, aliceSID)

	const rotated = "bob-rotated-0123456789abcdef0123"
	cfg := *e.cfg
	cfg.Principals = []config.Principal{cfg.Principals[0], {Name: "bob", Token: rotated}}
	cfg.Servers = append(slices.Clone(cfg.Servers), stdioServer("extra", testbin.Build(t, wellbehavedPkg)))
	if _, err := e.h.Reload(t.Context(), &cfg); err != nil {
		t.Fatal(err)
	}

	for name, s := range map[string]*sseStream{"GET": bobGET, "listen": bobListen} {
		select {
		case <-s.ended:
		case <-time.After(waitBound):
			t.Fatalf("bob's %s stream is still open after his token was rotated", name)
		}
	}
	for heard := false; !heard; {
		select {
		case ev := <-aliceGET.events:
			heard = strings.Contains(ev, "notifications/tools/list_changed")
		case <-aliceGET.ended:
			t.Fatal("alice's GET stream ended at a reload that did not touch her token")
		case <-time.After(waitBound):
			t.Fatal("alice's GET stream heard no tools/list_changed after the reload")
		}
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	if a := e.send(t, http.MethodPost, "/mcp", aliceToken, aliceSID, list); a.status != http.StatusOK {
		t.Fatalf("alice's session after the reload: %d %s", a.status, a.body)
	}
	if a := e.send(t, http.MethodPost, "/mcp", bobToken, bobSID, list); a.status != http.StatusUnauthorized {
		t.Fatalf("bob's old token: %d, want 401", a.status)
	}
	// The session is closed from a goroutine of the gateway's: poll until
	// it is, bounded by waitBound.
	waitFor(t, "bob's session to be closed", func() bool {
		return e.send(t, http.MethodPost, "/mcp", rotated, bobSID, list).status == http.StatusNotFound
	})
	e.mustOpen(t, rotated)
}
