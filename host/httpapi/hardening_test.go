package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testbin"
)

// parseConfig parses an HCL config for a test, failing on any error.
func parseConfig(t *testing.T, src string) *config.Config {
	t.Helper()
	cfg, diags := config.Parse([]byte(src), "t.hcl", config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return cfg
}

// TestOriginFromCredential: the origin policies see is decided by how the
// request authenticated, never by what the client says. A principal's
// token is "api" and cannot claim "user" or "app"; the WebShell credential
// it is exchanged for is "user" (and may say "app" for an App's requests);
// a principal with webshell = false cannot get one.
func TestOriginFromCredential(t *testing.T) {
	t.Parallel()
	cfg := parseConfig(t, `
policy "no-api-echo" {
  phase   = "call"
  effect  = "deny"
  when    = "origin == 'api' && tool.name == 'echo'"
  message = "echo is for people"
}
policy "hide-add-from-api" {
  phase  = "list"
  effect = "deny"
  when   = "origin == 'api' && tool.name == 'add'"
}
`)
	cfg.Servers = []config.Server{stdioServer("fx", testbin.Build(t, wellbehavedPkg))}
	cfg.Principals = []config.Principal{
		{Name: "alice", Token: aliceToken},
		{Name: "bob", Token: bobToken, APIOnly: true},
	}
	cfg.Admins = []string{"alice"}
	e := newEnvConfig(t, cfg)
	sid := e.createSession(t, aliceToken, "origin").ID
	echo := func(origin string) string {
		return mustJSON(callBody{Server: "fx", Tool: "echo", Arguments: map[string]any{"text": "hi"}, Origin: origin})
	}

	// The API token: its calls are "api" whatever the body says.
	wantError(t, e.do(t, "POST", callPath(sid), aliceToken, echo("")), http.StatusForbidden, "denied_by_policy")
	wantError(t, e.do(t, "POST", callPath(sid), aliceToken, echo("api")), http.StatusForbidden, "denied_by_policy")
	for _, claim := range []string{"user", "app"} {
		ae := wantError(t, e.do(t, "POST", callPath(sid), aliceToken, echo(claim)), http.StatusForbidden, "forbidden")
		if !strings.Contains(ae.Error.Message, "decided by how the request authenticated") {
			t.Errorf("claiming %q: %q", claim, ae.Error.Message)
		}
	}
	wantError(t, e.do(t, "GET", "/api/v1/tools?origin=user", aliceToken, ""), http.StatusForbidden, "forbidden")
	if hasTool(t, e, aliceToken, "add") {
		t.Error("the list rule for origin api did not hide add from the API token")
	}
	// App requests are the WebShell's only.
	wantError(t, e.do(t, "POST", "/api/v1/sessions/"+sid+"/app-messages", aliceToken, `{"appEntryId":"x","content":[]}`), http.StatusForbidden, "forbidden")
	wantError(t, e.do(t, "POST", "/api/v1/sessions/"+sid+"/app-links", aliceToken, `{"appEntryId":"x","url":"https://example.com"}`), http.StatusForbidden, "forbidden")

	// The WebShell credential: "user".
	ws := e.signIn(t, aliceToken)
	for _, claim := range []string{"", "user"} {
		r := e.do(t, "POST", callPath(sid), ws, echo(claim))
		wantStatus(t, r, http.StatusOK)
		var en struct {
			Origin string `json:"origin"`
			Status string `json:"status"`
		}
		if err := json.Unmarshal(r.body, &en); err != nil || en.Origin != "user" || en.Status != "ok" {
			t.Errorf("WebShell call (origin %q): %s", claim, r.body)
		}
	}
	wantError(t, e.do(t, "POST", callPath(sid), ws, echo("api")), http.StatusForbidden, "forbidden")
	if !hasTool(t, e, ws, "add") {
		t.Error("the WebShell credential does not see add")
	}
	me := decode[map[string]any](t, e.do(t, "GET", "/api/v1/me", ws, ""))
	if me["origin"] != "user" || me["name"] != "alice" {
		t.Errorf("me with the WebShell credential: %v", me)
	}

	// The exchange itself.
	signIn := func(token string, opts ...reqOpt) response {
		return e.do(t, "POST", "/api/v1/webshell/session", token, "", opts...)
	}
	browser := []reqOpt{withHeader("Origin", e.base), withHeader("Sec-Fetch-Site", "same-origin")}
	wantError(t, signIn(aliceToken), http.StatusForbidden, "forbidden")                                        // no Origin: not a page
	wantError(t, signIn(aliceToken, withHeader("Origin", e.base), withHeader("Sec-Fetch-Site", "cross-site")), // another site's page
		http.StatusForbidden, "forbidden")
	wantError(t, signIn(aliceToken, withHeader("Origin", "http://evil.example")), http.StatusForbidden, "forbidden")
	wantError(t, signIn(ws, browser...), http.StatusUnauthorized, "unauthorized") // a credential is not a token
	wantError(t, signIn(wrongToken, browser...), http.StatusUnauthorized, "unauthorized")
	wantError(t, signIn("", browser...), http.StatusUnauthorized, "unauthorized")
	nw := wantError(t, signIn(bobToken, browser...), http.StatusForbidden, "no_webshell")
	if !strings.Contains(nw.Error.Message, "webshell = false") {
		t.Errorf("bob's refusal: %q", nw.Error.Message)
	}
	if again := e.signIn(t, aliceToken); again != ws {
		t.Errorf("a second sign-in gave another credential")
	}
	// A forged credential of the right shape is refused.
	wantError(t, e.do(t, "GET", "/api/v1/me", ws[:len(ws)-2]+"AA", ""), http.StatusUnauthorized, "unauthorized")
}

// hasTool reports whether token's tools listing has a tool called name.
func hasTool(t *testing.T, e *testEnv, token, name string) bool {
	t.Helper()
	r := e.do(t, "GET", "/api/v1/tools", token, "")
	wantStatus(t, r, http.StatusOK)
	for _, tl := range decode[struct {
		Tools []host.ToolView `json:"tools"`
	}](t, r).Tools {
		if tl.Name == name {
			return true
		}
	}
	return false
}

// TestEventStreamsEndWhenCredentialRevoked: a reload that rotates a
// principal's token ends its open event streams (the token's and the
// WebShell credential's), one that removes a principal ends its streams,
// and the streams of everyone else go on and see the config event. The
// revoked credentials are refused from then on.
func TestEventStreamsEndWhenCredentialRevoked(t *testing.T) {
	t.Parallel()
	bin := testbin.Build(t, wellbehavedPkg)
	carol := "carol-token-0123456789abcdef"
	principals := func(bob string, withCarol bool) []config.Principal {
		ps := []config.Principal{
			{Name: "alice", Token: aliceToken},
			{Name: "bob", Token: bob},
		}
		if withCarol {
			ps = append(ps, config.Principal{Name: "carol", Token: carol})
		}
		return ps
	}
	cfg := &config.Config{Servers: []config.Server{stdioServer("fx", bin)}, Principals: principals(bobToken, true)}
	e := newEnvConfig(t, cfg)
	carolWS := e.signIn(t, carol)

	alice := e.openEvents(t, aliceToken)
	bobAPI := e.openEvents(t, bobToken)
	bobWS := e.openEvents(t, e.bobWS)
	carolAPI := e.openEvents(t, carolWS)

	next := &config.Config{Servers: cfg.Servers, Principals: principals("bob-rotated-token-0123456789", false), Admins: []string{"alice"}}
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	if _, err := e.h.Reload(ctx, next); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*eventStream{"bob's token": bobAPI, "bob's WebShell credential": bobWS, "removed carol": carolAPI} {
		if ev, ok := s.waitEnd(t); !ok {
			t.Errorf("%s: the stream stayed open (got %s %s)", name, ev.Type, ev.Data)
		}
	}
	alice.next(t, "the config event", func(ev sseEvent) bool { return ev.Type == "config" })

	// What was revoked stays revoked; a call of alice's reaches only her.
	for _, tok := range []string{bobToken, e.bobWS, carol, carolWS} {
		wantError(t, e.do(t, "GET", "/api/v1/events", tok, ""), http.StatusUnauthorized, "unauthorized")
	}
	sid := e.createSession(t, aliceToken, "after").ID
	en := e.call(t, aliceToken, sid, callBody{Server: "fx", Tool: "echo", Arguments: map[string]any{"text": "x"}})
	alice.next(t, "alice's entry", isEvent("entry", en.CallID))
}

// waitEnd waits for the stream to end, failing at waitBound. It returns
// false and the event when an event that is not a server status arrives
// first (a server event may be in flight at the reload).
func (s *eventStream) waitEnd(t *testing.T) (sseEvent, bool) {
	t.Helper()
	timer := time.NewTimer(waitBound)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				return sseEvent{}, true
			}
			if ev.Type != "server" {
				return ev, false
			}
		case <-timer.C:
			t.Fatalf("the stream did not end within %s", waitBound)
		}
	}
}

// TestEventStreamLimits: one principal may open DefaultMaxSubscribersPerPrincipal
// streams; the next answers 429 with Retry-After, while another principal
// still gets one, and closing a stream frees its place.
func TestEventStreamLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// open opens one of bob's streams and returns its status; the stream
	// stays open until cancel.
	open := func(ctx context.Context) int {
		req, _ := http.NewRequestWithContext(ctx, "GET", e.base+"/api/v1/events", nil)
		req.Header.Set("Authorization", "Bearer "+bobToken)
		resp, err := e.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp.StatusCode
	}
	var streams []context.CancelFunc
	for i := 0; i < maxSubscribers; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		if status := open(ctx); status != http.StatusOK {
			t.Fatalf("stream %d: status %d", i, status)
		}
		streams = append(streams, cancel)
	}
	r := e.do(t, "GET", "/api/v1/events", bobToken, "")
	ae := wantError(t, r, http.StatusTooManyRequests, "too_many_streams")
	if r.header.Get("Retry-After") == "" || !strings.Contains(ae.Error.Message, strconv.Itoa(maxSubscribers)) {
		t.Errorf("429 without Retry-After or the limit: %q, %q", r.header.Get("Retry-After"), ae.Error.Message)
	}
	e.openEvents(t, aliceToken) // another principal is not affected
	streams[0]()
	// The closed stream's handler returns soon after its client hangs up.
	deadline := time.Now().Add(waitBound)
	for {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		status := open(ctx)
		if status == http.StatusOK {
			break
		}
		cancel()
		if time.Now().After(deadline) {
			t.Fatalf("a closed stream's place was not freed: status %d", status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestNonAdminView: a principal who is not an admin sees only the servers
// its list rules leave it, without process details, and gets 404 for the
// prompts, resources and App capabilities of the others; /metrics is the
// admins'. Server events are filtered and redacted the same way.
func TestNonAdminView(t *testing.T) {
	t.Parallel()
	cfg := parseConfig(t, `
policy "ops-only" {
  phase  = "list"
  effect = "deny"
  when   = "server == 'ops' && !('ops' in principal.groups)"
}
`)
	bin := testbin.Build(t, wellbehavedPkg)
	cfg.Servers = []config.Server{stdioServer("fx", bin), stdioServer("ops", bin)}
	cfg.Admins = []string{"alice"}
	e := newEnvConfig(t, cfg)
	bobEvents := e.openEvents(t, bobToken)
	aliceEvents := e.openEvents(t, aliceToken)

	type statusList struct {
		Servers []map[string]any `json:"servers"`
	}
	bob := decode[statusList](t, e.do(t, "GET", "/api/v1/servers", bobToken, "")).Servers
	if len(bob) != 1 || bob[0]["name"] != "fx" {
		t.Fatalf("bob sees %v, want only fx", bob)
	}
	for _, k := range []string{"pid", "lastError"} {
		if _, ok := bob[0][k]; ok {
			t.Errorf("bob sees %s: %v", k, bob[0][k])
		}
	}
	alice := decode[statusList](t, e.do(t, "GET", "/api/v1/servers", aliceToken, "")).Servers
	if len(alice) != 2 {
		t.Fatalf("alice (admin) sees %d servers, want 2", len(alice))
	}
	if pid, _ := alice[1]["pid"].(float64); pid <= 0 {
		t.Errorf("alice does not see ops' pid: %v", alice[1])
	}
	for _, path := range []string{"/api/v1/servers/ops/prompts", "/api/v1/servers/ops/resources", "/api/v1/servers/ops/app-capabilities"} {
		ae := wantError(t, e.do(t, "GET", path, bobToken, ""), http.StatusNotFound, "not_found")
		if want := `no server named "ops" (configured: fx)`; ae.Error.Message != want {
			t.Errorf("%s: %q, want %q (the hidden server is not among the known ones)", path, ae.Error.Message, want)
		}
		wantStatus(t, e.do(t, "GET", path, aliceToken, ""), http.StatusOK)
	}
	wantError(t, e.do(t, "POST", "/api/v1/servers/ops/refresh", bobToken, ""), http.StatusNotFound, "not_found")
	wantStatus(t, e.do(t, "GET", "/api/v1/servers/fx/prompts", bobToken, ""), http.StatusOK)
	wantError(t, e.do(t, "GET", "/metrics", bobToken, ""), http.StatusForbidden, "forbidden")
	wantStatus(t, e.do(t, "GET", "/metrics", aliceToken, ""), http.StatusOK)

	// A status change of each server: bob's stream carries fx's, redacted,
	// and never ops'; alice's carries both with their pids.
	for _, name := range []string{"ops", "fx"} {
		wantStatus(t, e.do(t, "POST", "/api/v1/servers/"+name+"/refresh", aliceToken, ""), http.StatusOK)
	}
	isServer := func(name string) func(sseEvent) bool {
		return func(ev sseEvent) bool {
			var st map[string]any
			return ev.Type == "server" && json.Unmarshal(ev.Data, &st) == nil && st["name"] == name
		}
	}
	fx := bobEvents.next(t, "fx's status", isServer("fx"))
	for _, ev := range bobEvents.seen {
		if isServer("ops")(ev) {
			t.Errorf("bob's stream carried ops' status: %s", ev.Data)
		}
	}
	if strings.Contains(string(fx.Data), `"pid"`) {
		t.Errorf("bob's fx status has a pid: %s", fx.Data)
	}
	ops := aliceEvents.next(t, "ops' status", isServer("ops"))
	if !strings.Contains(string(ops.Data), `"pid"`) {
		t.Errorf("alice's ops status lacks its pid: %s", ops.Data)
	}
}

// TestRateLimit: a principal's rate_limit answers 429 with Retry-After
// beyond its rate and beyond its concurrent calls, nothing is recorded for
// a refused call, and other principals are not affected.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{Servers: []config.Server{stdioServer("fx", testbin.Build(t, wellbehavedPkg))}}
	cfg.Principals = []config.Principal{
		{Name: "alice", Token: aliceToken},
		// A rate so low that no refill happens during the test.
		{Name: "bob", Token: bobToken, RateLimit: config.RateLimit{CallsPerSecond: 0.001, Burst: 3}},
		{Name: "carol", Token: "carol-token-0123456789abcdef", RateLimit: config.RateLimit{ConcurrentCalls: 1}},
	}
	e := newEnvConfig(t, cfg)
	echo := mustJSON(callBody{Server: "fx", Tool: "echo", Arguments: map[string]any{"text": "x"}})

	sid := e.createSession(t, bobToken, "rate").ID
	for i := 0; i < 3; i++ {
		wantStatus(t, e.do(t, "POST", callPath(sid), bobToken, echo), http.StatusOK)
	}
	r := e.do(t, "POST", callPath(sid), e.bobWS, echo) // the WebShell credential shares the limit
	ae := wantError(t, r, http.StatusTooManyRequests, "rate_limited")
	if ra, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || ra < 1 {
		t.Errorf("Retry-After %q", r.header.Get("Retry-After"))
	}
	if !strings.Contains(ae.Error.Message, "calls per second") {
		t.Errorf("message %q", ae.Error.Message)
	}
	if n := len(e.entries(t, bobToken, sid, "").Entries); n != 3 {
		t.Errorf("%d entries, want the 3 admitted calls", n)
	}
	// alice has no limit (the test sets none).
	asid := e.createSession(t, aliceToken, "free").ID
	for i := 0; i < 10; i++ {
		wantStatus(t, e.do(t, "POST", callPath(asid), aliceToken, echo), http.StatusOK)
	}

	// carol: one call at a time.
	carol := "carol-token-0123456789abcdef"
	csid := e.createSession(t, carol, "one at a time").ID
	events := e.openEvents(t, carol)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	slowDone := make(chan response, 1)
	go func() {
		r, _ := e.send(ctx, "POST", callPath(csid), carol, mustJSON(callBody{Server: "fx", Tool: "slow", Arguments: map[string]any{"ms": 600000}, CallID: "slow-1"}))
		slowDone <- r
	}()
	events.next(t, "the slow call's start", isEvent("call_started", "slow-1"))
	r = e.do(t, "POST", callPath(csid), carol, echo)
	ae = wantError(t, r, http.StatusTooManyRequests, "rate_limited")
	if !strings.Contains(ae.Error.Message, "concurrent_calls") || r.header.Get("Retry-After") == "" {
		t.Errorf("concurrency refusal %q, Retry-After %q", ae.Error.Message, r.header.Get("Retry-After"))
	}
	wantStatus(t, e.do(t, "DELETE", callPath(csid)+"/slow-1", carol, ""), http.StatusAccepted)
	<-slowDone
	wantStatus(t, e.do(t, "POST", callPath(csid), carol, echo), http.StatusOK)
}

// maxSubscribers is the host's default bound on one principal's event
// streams.
const maxSubscribers = 32
