package host_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/upstream"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/oauthtest"
	"github.com/mcphost/mcphost/oauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// oauthHost is a host with one OAuth server, its sign-in routes served on
// 127.0.0.1, and a store in dataDir.
type oauthHost struct {
	h      *host.Host
	routes *httptest.Server
}

func startOAuthHost(t *testing.T, dataDir, url string, principals []config.Principal, edit ...func(*config.Server)) *oauthHost {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(dataDir, "mcphost.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var base string
	routes := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }))
	base = routes.URL
	transport := config.TransportStreamableHTTP
	if strings.HasSuffix(url, "/sse") {
		transport = config.TransportSSE
	}
	cfg := &config.Config{DataDir: dataDir, Principals: principals, Servers: []config.Server{{
		Name: "prot", Transport: transport, URL: url, VersionNegotiation: config.NegotiationLegacy,
		DiscoveryTimeout: 10 * time.Second, CallTimeout: 10 * time.Second, Enabled: true,
		Auth: &config.Auth{Type: config.AuthOAuth, Tokens: config.TokensPrincipal},
	}}}
	for _, e := range edit {
		e(&cfg.Servers[0])
	}
	h, err := host.New(cfg, host.Options{Store: st, OAuthBaseURL: base, Restart: true})
	if err != nil {
		t.Fatal(err)
	}
	routes.Config.Handler = h.OAuthHandler()
	h.Start(t.Context())
	t.Cleanup(func() { h.Close(); st.Close(); routes.Close() })
	if err := h.WaitSettled(t.Context()); err != nil {
		t.Fatal(err)
	}
	return &oauthHost{h: h, routes: routes}
}

// waitState waits for the server to reach state (the supervisor signals
// through OnStatus-driven snapshots; this polls the snapshot the host keeps).
func waitState(t *testing.T, h *host.Host, who string, want upstream.State) host.ServerStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	ev, unsub, err := h.Subscribe(host.Caller{Principal: host.Principal{Name: who}, Admin: true})
	if err != nil {
		t.Fatal(err)
	}
	defer unsub()
	for {
		st, err := h.ServerFor(ctx, host.Caller{Principal: host.Principal{Name: who}, Admin: true}, "prot")
		if err != nil {
			t.Fatal(err)
		}
		if st.State == want {
			return st
		}
		select {
		case <-ctx.Done():
			t.Fatalf("server is %s (%s), want %s", st.State, st.LastError, want)
		case <-ev:
		}
	}
}

func signInVia(t *testing.T, oh *oauthHost, who host.Caller) {
	t.Helper()
	f, err := oh.h.StartSignIn(t.Context(), who, "prot")
	if err != nil {
		t.Fatalf("StartSignIn: %v", err)
	}
	l, err := oauthtest.OpenLaunch(t.Context(), oauthtest.NewBrowser(), f.LaunchURL)
	if err != nil {
		t.Fatal(err)
	}
	if l.Status != http.StatusOK || !strings.Contains(oauthtest.PageText(l.Page), "Signed in to prot") {
		t.Fatalf("the callback answered %d: %s", l.Status, oauthtest.PageText(l.Page))
	}
}

func TestOAuthServerThroughTheHost(t *testing.T) {
	as := oauthtest.NewAS(t)
	srv := oauthtest.NewServer(t, as)
	dataDir := t.TempDir()
	alice := config.Principal{Name: "alice", Token: "alice-token-0123456789"}
	bob := config.Principal{Name: "bob", Token: "bob-token-0123456789ab"}
	oh := startOAuthHost(t, dataDir, srv.URL, []config.Principal{alice, bob})

	// Not signed in: needs_auth, not failed, no restarts, no backoff.
	st := waitState(t, oh.h, "alice", host.StateNeedsAuth)
	if st.Restarts != 0 || !st.NextAttempt.IsZero() {
		t.Fatalf("needs_auth with restarts=%d next=%v", st.Restarts, st.NextAttempt)
	}
	var ar *oauth.AuthRequiredError
	_, err := oh.h.CallTool(t.Context(), host.CallToolRequest{Principal: host.Principal{Name: "alice"}, Server: "prot", Tool: "whoami", Arguments: json.RawMessage(`{}`)})
	if !errors.As(err, &ar) || !strings.Contains(err.Error(), "mcphost auth login prot") {
		t.Fatalf("call before sign-in: %v, want auth_required with the login hint", err)
	}

	signInVia(t, oh, host.Caller{Principal: host.Principal{Name: "alice"}})
	waitState(t, oh.h, "alice", host.StateReady)
	res, err := oh.h.CallTool(t.Context(), host.CallToolRequest{Principal: host.Principal{Name: "alice"}, Server: "prot", Tool: "whoami", Arguments: json.RawMessage(`{}`)})
	if err != nil || res.IsError {
		t.Fatalf("alice's call: %v %v", res, err)
	}
	// A recorded call: neither its transcript entry nor any event alice
	// receives holds a token.
	ev, unsub, err := oh.h.Subscribe(host.Caller{Principal: host.Principal{Name: "alice"}})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := oh.h.CreateSession(t.Context(), host.Principal{Name: "alice"}, "oauth")
	if err != nil {
		t.Fatal(err)
	}
	entry, err := oh.h.Call(t.Context(), host.SessionCall{Principal: host.Principal{Name: "alice"}, SessionID: sess.ID, Server: "prot", Tool: "whoami", Arguments: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	entries, _, err := oh.h.Entries(t.Context(), host.Principal{Name: "alice"}, sess.ID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	seenText, _ := json.Marshal(entries)
	seenText = append(seenText, mustJSON(entry)...)
	unsub()
	for e := range ev {
		seenText = append(seenText, mustJSON(e.Data)...)
	}
	for _, tok := range srv.Seen() {
		if strings.Contains(string(seenText), tok) {
			t.Fatal("a token in the transcript or the events")
		}
	}
	// Bob never rides on alice's token: his own session needs his sign-in.
	_, err = oh.h.CallTool(t.Context(), host.CallToolRequest{Principal: host.Principal{Name: "bob"}, Server: "prot", Tool: "whoami", Arguments: json.RawMessage(`{}`)})
	if !errors.As(err, &ar) {
		t.Fatalf("bob's call: %v, want auth_required", err)
	}
	stat, err := oh.h.AuthStatus(t.Context(), host.Caller{Principal: host.Principal{Name: "alice"}}, "")
	if err != nil || len(stat) != 1 || stat[0].Principal != "alice" {
		t.Fatalf("status %+v %v", stat, err)
	}
	raw, _ := json.Marshal(stat)
	for _, tok := range srv.Seen() {
		if strings.Contains(string(raw), tok) {
			t.Fatal("a token in the status")
		}
	}
	// The database holds no token in the clear.
	oh.h.Close()
	for _, name := range []string{"mcphost.db", "mcphost.db-wal"} {
		b, err := os.ReadFile(filepath.Join(dataDir, name))
		if err != nil {
			continue
		}
		if strings.Contains(string(b), "test-token-") || strings.Contains(string(b), "test-refresh-") {
			t.Fatalf("%s holds a token in the clear", name)
		}
	}

	// A restart: the stored credential connects without a sign-in, even
	// after the access token expired (refresh with the stored client).
	as.Invalidate()
	oh2 := startOAuthHost(t, dataDir, srv.URL, []config.Principal{alice, bob})
	waitState(t, oh2.h, "alice", host.StateReady)
	if _, err := oh2.h.CallTool(t.Context(), host.CallToolRequest{Principal: host.Principal{Name: "alice"}, Server: "prot", Tool: "whoami", Arguments: json.RawMessage(`{}`)}); err != nil {
		t.Fatalf("after restart: %v", err)
	}
	// Signing out ends the session: needs_auth again, and the tokens were revoked.
	if err := oh2.h.SignOut(t.Context(), host.Caller{Principal: host.Principal{Name: "alice"}}, "prot"); err != nil {
		t.Fatal(err)
	}
	waitState(t, oh2.h, "alice", host.StateNeedsAuth)
	if len(as.Revoked()) == 0 {
		t.Fatal("nothing revoked on sign-out")
	}
}

// TestCacheScopePerPrincipal: two principals signed in to one server with
// two tokens get two upstream sessions; each sees its own tool list (the
// server lists only_for_SUBJECT) and its own results, never the other's,
// though both lists are cached by the host.
func TestCacheScopePerPrincipal(t *testing.T) {
	as := oauthtest.NewAS(t)
	srv := oauthtest.NewServer(t, as)
	alice := config.Principal{Name: "alice", Token: "alice-token-0123456789"}
	bob := config.Principal{Name: "bob", Token: "bob-token-0123456789ab"}
	oh := startOAuthHost(t, t.TempDir(), srv.URL, []config.Principal{alice, bob})
	for _, who := range []string{"alice", "bob"} {
		as.Subject = who
		waitStateStart(t, oh.h, who)
		signInVia(t, oh, host.Caller{Principal: host.Principal{Name: who}})
		waitState(t, oh.h, who, host.StateReady)
	}
	for _, tc := range []struct{ who, other string }{{"alice", "bob"}, {"bob", "alice"}, {"alice", "bob"}} {
		tools, err := oh.h.ToolsFor(t.Context(), host.Principal{Name: tc.who}, host.OriginAPI, "prot")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range tools {
			names = append(names, tl.Tool.Name)
		}
		got := strings.Join(names, ",")
		if !strings.Contains(got, "only_for_"+tc.who) || strings.Contains(got, "only_for_"+tc.other) {
			t.Fatalf("%s sees tools %s", tc.who, got)
		}
		res, err := oh.h.CallTool(t.Context(), host.CallToolRequest{Principal: host.Principal{Name: tc.who}, Server: "prot", Tool: "whoami", Arguments: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(res); !strings.Contains(string(b), "subject="+tc.who) {
			t.Fatalf("%s's call answered %s", tc.who, b)
		}
		// The other principal's tool is unknown to this one.
		if _, err := oh.h.CallTool(t.Context(), host.CallToolRequest{Principal: host.Principal{Name: tc.who}, Server: "prot", Tool: "only_for_" + tc.other, Arguments: json.RawMessage(`{}`)}); err == nil {
			t.Fatalf("%s called %s's tool", tc.who, tc.other)
		}
	}
	// Both sessions' lists are in the host cache, each in its own space.
	if st := oh.h.CacheStats(); st.Entries < 2 {
		t.Fatalf("cache stats %+v: the two sessions' lists are not cached", st)
	}
}

// waitStateStart makes who's session exist (a listing starts it) and
// waits for its first state.
func waitStateStart(t *testing.T, h *host.Host, who string) {
	t.Helper()
	h.ServersFor(t.Context(), host.Caller{Principal: host.Principal{Name: who}})
	waitState(t, h, who, host.StateNeedsAuth)
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// TestOAuthOverSSE: a server on the 2024-11-05 HTTP+SSE transport asks for
// a sign-in the same way (its transport has no OAuth hook in go-sdk; the
// host's HTTP client carries the credential).
func TestOAuthOverSSE(t *testing.T) {
	as := oauthtest.NewAS(t)
	as.Subject = "alice"
	srv := oauthtest.NewServer(t, as)
	alice := config.Principal{Name: "alice", Token: "alice-token-0123456789"}
	oh := startOAuthHost(t, t.TempDir(), srv.SSEURL, []config.Principal{alice})
	waitStateStart(t, oh.h, "alice")
	signInVia(t, oh, host.Caller{Principal: host.Principal{Name: "alice"}})
	waitState(t, oh.h, "alice", host.StateReady)
	res, err := oh.h.CallTool(t.Context(), host.CallToolRequest{Principal: host.Principal{Name: "alice"}, Server: "prot", Tool: "whoami", Arguments: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(res); !strings.Contains(string(b), "subject=alice") {
		t.Fatalf("answered %s", b)
	}
}

// TestAuthIsNoEraEvidence: a server that answers every request with a
// Bearer challenge, negotiated with version_negotiation = "auto", waits in
// needs_auth without restarts, and its 401s leave no era verdict.
func TestAuthIsNoEraEvidence(t *testing.T) {
	as := oauthtest.NewAS(t)
	srv := oauthtest.NewServer(t, as)
	dataDir := t.TempDir()
	dbPath := filepath.Join(dataDir, "mcphost.db")
	st, err := store.Open(t.Context(), dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{DataDir: dataDir, Servers: []config.Server{{
		Name: "prot", Transport: config.TransportStreamableHTTP, URL: srv.URL, VersionNegotiation: config.NegotiationAuto,
		HTTPProbeTimeout: config.HTTPProbeTimeoutFallback, DiscoveryTimeout: 10 * time.Second, CallTimeout: 10 * time.Second, Enabled: true,
		Auth: &config.Auth{Type: config.AuthOAuth, Tokens: config.TokensShared},
	}}}
	h, err := host.New(cfg, host.Options{Store: st, OAuthBaseURL: "http://127.0.0.1:1", Restart: true})
	if err != nil {
		t.Fatal(err)
	}
	h.Start(t.Context())
	if err := h.WaitSettled(t.Context()); err != nil {
		t.Fatal(err)
	}
	s, _ := h.Server("prot")
	if s.State != host.StateNeedsAuth || s.Restarts != 0 || s.Era != "" {
		t.Fatalf("status %+v, want needs_auth without restarts or era", s)
	}
	h.Close()
	st.Close()
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM era_cache`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d era verdicts stored for a server that only answered 401", n)
	}
}

// TestStepUpFromACall: a call the server refuses with insufficient_scope
// fails with auth_required and puts the caller's session in needs_auth
// with the reason (the WebShell's "Grant more access"); signing in again
// asks for the union of the scopes, and the call then works.
func TestStepUpFromACall(t *testing.T) {
	as := oauthtest.NewAS(t)
	srv := oauthtest.NewServer(t, as)
	alice := config.Principal{Name: "alice", Token: "alice-token-0123456789"}
	oh := startOAuthHost(t, t.TempDir(), srv.URL, []config.Principal{alice}, func(s *config.Server) { s.Auth.Scopes = []string{"read"} })
	waitStateStart(t, oh.h, "alice")
	signInVia(t, oh, host.Caller{Principal: host.Principal{Name: "alice"}})
	waitState(t, oh.h, "alice", host.StateReady)
	srv.RequireScope("write")
	call := func() error {
		_, err := oh.h.CallTool(t.Context(), host.CallToolRequest{Principal: host.Principal{Name: "alice"}, Server: "prot", Tool: "whoami", Arguments: json.RawMessage(`{}`)})
		return err
	}
	var ar *oauth.AuthRequiredError
	if err := call(); !errors.As(err, &ar) || ar.Reason != "insufficient_scope" {
		t.Fatalf("the refused call: %v, want auth_required (insufficient_scope)", err)
	}
	st := waitState(t, oh.h, "alice", host.StateNeedsAuth)
	if !strings.Contains(st.LastError, "insufficient_scope") || !strings.Contains(st.LastError, "write") {
		t.Fatalf("needs_auth says %q", st.LastError)
	}
	signInVia(t, oh, host.Caller{Principal: host.Principal{Name: "alice"}})
	waitState(t, oh.h, "alice", host.StateReady)
	if err := call(); err != nil {
		t.Fatalf("after the step-up: %v", err)
	}
	var last string
	for _, q := range as.Requests() {
		if q.Path == "/authorize" {
			last = q.Form.Get("scope")
		}
	}
	if !strings.Contains(last, "write") || !strings.Contains(last, "read") {
		t.Fatalf("the step-up asked for %q, want the union with the granted scopes", last)
	}
}

// TestPerPrincipalOfferings: with a per-principal OAuth server, a
// signed-in principal's prompts, resources, prompt and resource reads go
// to its own session, as its tools do (they failed with needs_auth: only
// tool calls and tool lists found the principal's session), and another
// principal who has not signed in gets the sign-in error, not alice's.
func TestPerPrincipalOfferings(t *testing.T) {
	as := oauthtest.NewAS(t)
	srv := oauthtest.NewServer(t, as)
	alice := config.Principal{Name: "alice", Token: "alice-token-0123456789"}
	bob := config.Principal{Name: "bob", Token: "bob-token-0123456789ab"}
	oh := startOAuthHost(t, t.TempDir(), srv.URL, []config.Principal{alice, bob})
	who := host.Caller{Principal: host.Principal{Name: "alice"}, Origin: host.OriginAPI}
	signInVia(t, oh, who)
	waitState(t, oh.h, "alice", host.StateReady)
	ctx := t.Context()

	tools, err := oh.h.ToolsFor(ctx, who.Principal, host.OriginAPI, "prot")
	if err != nil || len(tools) != 2 {
		t.Fatalf("ToolsFor = %d tools, %v", len(tools), err)
	}
	prompts, err := oh.h.PromptsFor(ctx, who, "prot")
	if err != nil || len(prompts) != 1 || !strings.HasPrefix(prompts[0].Name, "greet_") {
		t.Fatalf("PromptsFor = %v, %v; want one greet_ prompt", prompts, err)
	}
	res, _, err := oh.h.ResourcesFor(ctx, who, "prot")
	if err != nil || len(res) != 1 {
		t.Fatalf("ResourcesFor = %v, %v", res, err)
	}
	read, err := oh.h.ReadResource(ctx, who, "", "prot", "test://whoami", nil)
	if err != nil || len(read.Contents) != 1 || !strings.HasPrefix(read.Contents[0].Text, "subject=") {
		t.Fatalf("ReadResource = %v, %v", read, err)
	}
	got, err := oh.h.GetPrompt(ctx, who, "", "prot", &mcp.GetPromptParams{Name: prompts[0].Name}, nil)
	if err != nil || len(got.Messages) != 1 {
		t.Fatalf("GetPrompt = %v, %v", got, err)
	}

	bobC := host.Caller{Principal: host.Principal{Name: "bob"}, Origin: host.OriginAPI}
	var ar *oauth.AuthRequiredError
	if _, err := oh.h.ReadResource(ctx, bobC, "", "prot", "test://whoami", nil); !errors.As(err, &ar) {
		t.Fatalf("bob's read: %v, want auth_required", err)
	}
	if _, err := oh.h.GetPrompt(ctx, bobC, "", "prot", &mcp.GetPromptParams{Name: prompts[0].Name}, nil); !errors.As(err, &ar) {
		t.Fatalf("bob's prompt: %v, want auth_required", err)
	}
}

// TestSignInFromALazyCall: a server that asks for a token only when a
// tool is called (the lazy-auth pattern: it connects and lists without
// one) refuses the call with auth_required and waits for a sign-in; the
// sign-in works, whether or not this daemon saw the call's 401 (a call
// made elsewhere, by the CLI without the daemon, leaves it none: before,
// the sign-in probed the server, got HTTP 200 and said the server does
// not ask for authorization); the signed-in call then goes through.
func TestSignInFromALazyCall(t *testing.T) {
	for _, callFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("call first %v", callFirst), func(t *testing.T) {
			as := oauthtest.NewAS(t)
			as.Subject = "alice-upstream"
			srv := oauthtest.NewServer(t, as)
			srv.ProtectCallsOnly()
			alice := config.Principal{Name: "alice", Token: "alice-token-0123456789"}
			oh := startOAuthHost(t, t.TempDir(), srv.URL, []config.Principal{alice})
			who := host.Caller{Principal: host.Principal{Name: "alice"}, Origin: host.OriginAPI}
			waitState(t, oh.h, "alice", host.StateReady)
			call := func() (*mcp.CallToolResult, error) {
				return oh.h.CallTool(t.Context(), host.CallToolRequest{Principal: who.Principal, Server: "prot", Tool: "whoami", Arguments: json.RawMessage(`{}`)})
			}
			if callFirst {
				var ar *oauth.AuthRequiredError
				if _, err := call(); !errors.As(err, &ar) {
					t.Fatalf("the call without a sign-in: %v, want auth_required", err)
				}
				st := waitState(t, oh.h, "alice", host.StateNeedsAuth)
				if !strings.Contains(st.LastError, "sign in") {
					t.Errorf("needs_auth says %q", st.LastError)
				}
			}
			signInVia(t, oh, who)
			waitState(t, oh.h, "alice", host.StateReady)
			res, err := call()
			if err != nil {
				t.Fatalf("the call after the sign-in: %v", err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "subject=alice-upstream" {
				t.Fatalf("the call answered %q, want alice's", got)
			}
		})
	}
}
