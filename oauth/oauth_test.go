package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/oauthtest"
)

// rig is a manager with its routes served on 127.0.0.1, a protected MCP
// server and its authorization server.
type rig struct {
	m      *Manager
	store  Store
	as     *oauthtest.AS
	server *oauthtest.Server
	daemon *httptest.Server
	logs   *bytes.Buffer
	client *http.Client // the server's HTTP client, through the transport
}

func testKey() []byte { return bytes.Repeat([]byte{7}, 32) }

func newRig(t *testing.T, st Store, shared bool) *rig {
	t.Helper()
	as := oauthtest.NewAS(t)
	srv := oauthtest.NewServer(t, as)
	return newRigWith(t, st, as, srv, shared)
}

func newRigWith(t *testing.T, st Store, as *oauthtest.AS, srv *oauthtest.Server, shared bool, more ...func(*Options)) *rig {
	t.Helper()
	if st == nil {
		st = NewMemoryStore()
	}
	sealer, err := NewSealer(testKey())
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{store: st, as: as, server: srv, logs: &bytes.Buffer{}}
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, r.logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var base string
	opts := Options{BaseURL: func() string { return base }, Store: st, Sealer: sealer, Logger: logger}
	for _, f := range more {
		f(&opts)
	}
	m, err := NewManager(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	r.daemon = httptest.NewServer(m.Handler())
	t.Cleanup(r.daemon.Close)
	base = r.daemon.URL
	m.SetServers([]ServerConfig{{Name: "srv", URL: srv.URL, Shared: shared}})
	r.m = m
	r.client = r.clientFor("alice")
	return r
}

// clientFor is the HTTP client of principal's own upstream session.
func (r *rig) clientFor(principal string) *http.Client {
	return &http.Client{Transport: r.m.Transport("srv", principal, http.DefaultTransport), Timeout: 10 * time.Second}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// browser is a client that follows redirects and keeps cookies.
func browser(t *testing.T) *http.Client {
	t.Helper()
	return oauthtest.NewBrowser()
}

// keepCookie puts f's browser cookie in b's jar, as a browser does with the
// Set-Cookie of the API's answer.
func (r *rig) keepCookie(t *testing.T, b *http.Client, f Flow) {
	t.Helper()
	if f.BrowserCookie == nil {
		t.Fatal("StartSignIn gave no browser cookie")
	}
	u, _ := url.Parse(r.daemon.URL)
	b.Jar.SetCookies(u, []*http.Cookie{f.BrowserCookie})
}

// mcpCall posts one JSON-RPC request through the transport.
func (r *rig) mcpCall(t *testing.T, ctx context.Context) (*http.Response, error) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.server.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := r.client.Do(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return resp, err
}

// signIn signs principal in through the broker with b, as the WebShell
// does: b keeps the cookie of the start request (as the WebShell's browser
// does from the API's answer) and opens the launch URL, which goes on
// without asking.
func (r *rig) signIn(t *testing.T, principal string, b *http.Client) {
	t.Helper()
	ctx := context.Background()
	f, err := r.m.StartSignIn(ctx, "srv", Caller{Principal: principal, Owner: true})
	if err != nil {
		t.Fatalf("StartSignIn: %v", err)
	}
	if !strings.HasPrefix(f.LaunchURL, r.daemon.URL+"/oauth/launch/") {
		t.Fatalf("launch URL %q is not the daemon's", f.LaunchURL)
	}
	r.keepCookie(t, b, f)
	l, err := oauthtest.OpenLaunch(ctx, b, f.LaunchURL)
	if err != nil {
		t.Fatal(err)
	}
	if want := "/#signin=srv&for=" + principal; l.Asked != "" || l.Status != http.StatusSeeOther || l.Location != want {
		t.Fatalf("the launch asked %q, then the callback answered %d Location %q, want %q", l.Asked, l.Status, l.Location, want)
	}
	got, ok := r.m.FlowStatus(ctx, f.ID, principal, time.Second)
	if !ok || got.State != FlowDone {
		t.Fatalf("flow %+v", got)
	}
}

func TestSignInCallRefreshRotation(t *testing.T) {
	r := newRig(t, nil, false)
	ctx := context.Background()
	// Before a sign-in: auth_required, never a loop.
	_, err := r.mcpCall(t, ctx)
	var ar *AuthRequiredError
	if !errors.As(err, &ar) || ar.Server != "srv" {
		t.Fatalf("before sign-in: %v, want *AuthRequiredError", err)
	}
	r.signIn(t, "alice", browser(t))
	resp, err := r.mcpCall(t, ctx)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("after sign-in: %v %v", resp, err)
	}
	// Expire the access token: the next request refreshes with resource,
	// the rotated refresh token is stored, the old one never reused.
	r.as.Invalidate()
	before := len(r.as.Requests())
	resp, err = r.mcpCall(t, ctx)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("after invalidation: %v %v", resp, err)
	}
	var refreshes []oauthtest.Request
	for _, q := range r.as.Requests()[before:] {
		if q.Path == "/token" && q.Form.Get("grant_type") == "refresh_token" {
			refreshes = append(refreshes, q)
		}
	}
	if len(refreshes) != 1 {
		t.Fatalf("%d refreshes, want 1 forced refresh on the 401", len(refreshes))
	}
	if got := refreshes[0].Form.Get("resource"); got != r.server.URL {
		t.Errorf("refresh resource = %q, want %q", got, r.server.URL)
	}
	rec, err := r.store.LoadCredential(ctx, "srv", "alice")
	if err != nil || rec == nil {
		t.Fatalf("stored: %v %v", rec, err)
	}
	if rec.Generation < 2 {
		t.Errorf("generation %d after a refresh, want ≥ 2", rec.Generation)
	}
	// A second forced refresh uses the rotated token (the AS refuses a replay).
	r.as.Invalidate()
	if resp, err := r.mcpCall(t, ctx); err != nil || resp.StatusCode != 200 {
		t.Fatalf("second refresh: %v %v", resp, err)
	}
}

func TestConcurrentExpiryOneRefresh(t *testing.T) {
	r := newRig(t, nil, false)
	r.signIn(t, "alice", browser(t))
	// Expired where it is stored and in memory: a refresh is due (the
	// refresh reads the stored row again and would take a fresh one).
	rec, _ := r.store.LoadCredential(context.Background(), "srv", "alice")
	rec.Expiry = time.Now().Add(-time.Minute)
	rec.Generation++
	if err := r.store.SaveCredential(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	c := r.m.credential("srv", "alice")
	c.mu.Lock()
	c.rec, c.tok.Expiry = rec, rec.Expiry
	c.mu.Unlock()
	before := len(r.as.Requests())
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			resp, err := r.mcpCall(t, context.Background())
			if err == nil && resp.StatusCode != 200 {
				err = errors.New(resp.Status)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for _, q := range r.as.Requests()[before:] {
		if q.Form.Get("grant_type") == "refresh_token" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d refreshes for 20 concurrent requests at expiry, want 1", n)
	}
}

func TestRefusedRefreshDropsCredential(t *testing.T) {
	r := newRig(t, nil, false)
	r.signIn(t, "alice", browser(t))
	r.as.Invalidate()
	r.as.RejectAll = true
	_, err := r.mcpCall(t, context.Background())
	var ar *AuthRequiredError
	if !errors.As(err, &ar) {
		t.Fatalf("got %v, want *AuthRequiredError", err)
	}
	if rec, _ := r.store.LoadCredential(context.Background(), "srv", "alice"); rec != nil {
		t.Fatal("the refused credential is still stored")
	}
}

func TestPersistenceAcrossRestart(t *testing.T) {
	st := NewMemoryStore()
	r := newRig(t, st, false)
	r.signIn(t, "alice", browser(t))
	// A new manager over the same store (a restarted daemon) uses the
	// stored credential without a sign-in, refreshing it with the stored
	// client.
	r2 := newRigWith(t, st, r.as, r.server, false)
	r.as.Invalidate()
	resp, err := r2.mcpCall(t, context.Background())
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("after restart: %v %v", resp, err)
	}
}

func TestTamperedRowRejected(t *testing.T) {
	st := NewMemoryStore()
	r := newRig(t, st, false)
	r.signIn(t, "alice", browser(t))
	rec, _ := st.LoadCredential(context.Background(), "srv", "alice")
	// Swap the row to another principal: the AAD no longer matches.
	moved := *rec
	moved.Principal, moved.Generation = "bob", 1
	if err := st.SaveCredential(context.Background(), &moved); err != nil {
		t.Fatal(err)
	}
	r2 := newRigWith(t, st, r.as, r.server, false)
	c := r2.m.credential("srv", "bob")
	_, err := c.token(context.Background())
	var ae *AuthError
	if !errors.As(err, &ae) || !errors.Is(err, ErrUnsealed) {
		t.Fatalf("moved row: %v, want an *AuthError wrapping ErrUnsealed", err)
	}
	// A flipped byte fails too.
	rec.AccessToken[len(rec.AccessToken)-1] ^= 1
	rec.Generation++
	_ = st.SaveCredential(context.Background(), rec)
	c = newRigWith(t, st, r.as, r.server, false).m.credential("srv", "alice")
	if _, err := c.token(context.Background()); !errors.Is(err, ErrUnsealed) {
		t.Fatalf("tampered row: %v, want ErrUnsealed", err)
	}
}

func TestIssuerChangeDropsCredential(t *testing.T) {
	r := newRig(t, nil, false)
	r.signIn(t, "alice", browser(t))
	as2 := oauthtest.NewAS(t)
	r.server.Migrate(as2)
	_, err := r.mcpCall(t, context.Background())
	var ar *AuthRequiredError
	if !errors.As(err, &ar) {
		t.Fatalf("after the issuer changed: %v, want *AuthRequiredError", err)
	}
	if rec, _ := r.store.LoadCredential(context.Background(), "srv", "alice"); rec != nil {
		t.Fatal("the credential of the old issuer is still stored")
	}
	for _, q := range as2.Requests() {
		if q.Path == "/token" {
			t.Fatalf("the new authorization server was sent a token request: %v", q.Path)
		}
	}
}

func TestSignOutRevokes(t *testing.T) {
	r := newRig(t, nil, false)
	r.signIn(t, "alice", browser(t))
	if err := r.m.SignOut(context.Background(), "srv", Caller{Principal: "alice"}); err != nil {
		t.Fatal(err)
	}
	if n := len(r.as.Revoked()); n != 2 {
		t.Errorf("%d tokens revoked, want 2 (refresh and access)", n)
	}
	if rec, _ := r.store.LoadCredential(context.Background(), "srv", "alice"); rec != nil {
		t.Fatal("signed out but still stored")
	}
	// A failing revocation still deletes the row.
	r.signIn(t, "alice", browser(t))
	r.as.RevokeFails = true
	if err := r.m.SignOut(context.Background(), "srv", Caller{Principal: "alice"}); err != nil {
		t.Fatal(err)
	}
	if rec, _ := r.store.LoadCredential(context.Background(), "srv", "alice"); rec != nil {
		t.Fatal("revocation failed and the row stayed")
	}
}

func TestPrincipalsHaveTheirOwnTokens(t *testing.T) {
	r := newRig(t, nil, false)
	r.as.Subject = "alice"
	r.signIn(t, "alice", browser(t))
	// Bob's session sends bob's credential: none yet.
	bob := r.clientFor("bob")
	r.client = bob
	var ar *AuthRequiredError
	if _, err := r.mcpCall(t, context.Background()); !errors.As(err, &ar) || ar.Principal != "bob" {
		t.Fatalf("bob before signing in: %v, want auth_required for bob", err)
	}
	r.as.Subject = "bob"
	r.signIn(t, "bob", browser(t))
	if resp, err := r.mcpCall(t, context.Background()); err != nil || resp.StatusCode != 200 {
		t.Fatalf("bob: %v %v", resp, err)
	}
	a, _ := r.store.LoadCredential(context.Background(), "srv", "alice")
	b, _ := r.store.LoadCredential(context.Background(), "srv", "bob")
	if a == nil || b == nil || bytes.Equal(a.AccessToken, b.AccessToken) {
		t.Fatal("alice and bob do not have their own credentials")
	}
	st, _ := r.m.Statuses(context.Background(), "", "bob", false)
	if len(st) != 1 || st[0].Principal != "bob" {
		t.Fatalf("bob sees %+v, want only his own", st)
	}
}

func TestSharedNeedsAdmin(t *testing.T) {
	r := newRig(t, nil, true)
	r.m.SetServers([]ServerConfig{{Name: "srv", URL: r.server.URL, Shared: true, Admins: []string{"ops"}}})
	if _, err := r.m.StartSignIn(context.Background(), "srv", Caller{Principal: "bob"}); !errors.Is(err, ErrForbidden) {
		t.Fatalf("bob: %v, want ErrForbidden", err)
	}
	if _, err := r.m.StartSignIn(context.Background(), "srv", Caller{Principal: "carol", Groups: []string{"ops"}}); err != nil {
		t.Fatalf("an admin: %v", err)
	}
}

func TestResourceMismatchContactsNoAS(t *testing.T) {
	as := oauthtest.NewAS(t)
	srv := oauthtest.NewServer(t, as)
	// A server whose metadata names another resource.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource") {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"resource": "https://evil.example.com/mcp", "authorization_servers": []string{as.URL}})
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://`+r.Host+`/.well-known/oauth-protected-resource/mcp"`)
		w.WriteHeader(401)
	}))
	defer evil.Close()
	r := newRigWith(t, nil, as, srv, false)
	r.m.SetServers([]ServerConfig{{Name: "srv", URL: evil.URL + "/mcp"}})
	_, err := r.m.StartSignIn(context.Background(), "srv", Caller{Principal: "alice"})
	var ae *AuthError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "names another resource") {
		t.Fatalf("got %v, want an auth_error about the resource", err)
	}
	if n := len(as.Requests()); n != 0 {
		t.Fatalf("the authorization server got %d requests", n)
	}
}

func TestHostileAuthorizationServers(t *testing.T) {
	huge := bytes.Repeat([]byte(" "), 2<<20)
	cases := []struct {
		name    string
		handler http.HandlerFunc
		timeout time.Duration
	}{
		{"redirects to another origin", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://127.0.0.2:1/.well-known/oauth-authorization-server", http.StatusFound)
		}, 5 * time.Second},
		{"huge metadata", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"issuer":`))
			w.Write(huge)
		}, 5 * time.Second},
		{"slow metadata", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		}, 200 * time.Millisecond},
		{"mismatched issuer", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"issuer": "https://attacker.example.com", "authorization_endpoint": "https://attacker.example.com/a",
				"token_endpoint": "https://attacker.example.com/t", "code_challenge_methods_supported": []string{"S256"}})
		}, 5 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := httptest.NewServer(tc.handler)
			defer bad.Close()
			prot := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource") {
					w.Header().Set("Content-Type", "application/json")
					json.NewEncoder(w).Encode(map[string]any{"resource": "http://" + r.Host + "/mcp", "authorization_servers": []string{bad.URL}})
					return
				}
				w.Header().Set("WWW-Authenticate", `Bearer`)
				w.WriteHeader(401)
			}))
			defer prot.Close()
			sealer, _ := NewSealer(testKey())
			m, err := NewManager(Options{BaseURL: func() string { return "http://127.0.0.1:1" }, Sealer: sealer, HTTPClient: NewHTTPClient(tc.timeout)})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			m.SetServers([]ServerConfig{{Name: "srv", URL: prot.URL + "/mcp"}})
			_, err = m.StartSignIn(context.Background(), "srv", Caller{Principal: "alice"})
			var ae *AuthError
			if !errors.As(err, &ae) {
				t.Fatalf("got %v, want an *AuthError", err)
			}
		})
	}
}

func TestNoSecretInLogsOrStatus(t *testing.T) {
	r := newRig(t, nil, false)
	r.signIn(t, "alice", browser(t))
	r.as.Invalidate()
	if _, err := r.mcpCall(t, context.Background()); err != nil {
		t.Fatal(err)
	}
	st, err := r.m.Statuses(context.Background(), "", "alice", true)
	if err != nil || len(st) != 1 {
		t.Fatalf("status %v %v", st, err)
	}
	raw, _ := json.Marshal(st)
	out := r.logs.String() + string(raw)
	for _, secret := range []string{"test-token-", "test-refresh-", "code-"} {
		if strings.Contains(out, secret) {
			t.Errorf("%q appears in the logs or the status", secret)
		}
	}
	for _, tok := range r.server.Seen() {
		if strings.Contains(out, tok) {
			t.Errorf("a token appears in the logs or the status")
		}
	}
}

func TestStepUpCap(t *testing.T) {
	c := &Credential{m: &Manager{}, server: "srv", principal: "alice"}
	ch := &challenge{status: 403, header: http.Header{"Www-Authenticate": {`Bearer error="insufficient_scope", scope="admin"`}}}
	for i := range MaxStepUps {
		if _, ok := c.required(ch).(*AuthRequiredError); !ok {
			t.Fatalf("step-up %d refused early", i)
		}
		c.countAuthz([]string{"admin"})
	}
	if _, ok := c.required(ch).(*AuthError); !ok {
		t.Fatalf("after %d step-ups: %v, want *AuthError", MaxStepUps, c.required(ch))
	}
}

func TestSealer(t *testing.T) {
	s, _ := NewSealer(testKey())
	sealed, err := s.Seal("secret", tableTokens, "srv", "alice", "https://as")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("secret")) {
		t.Fatal("the sealed value holds the plaintext")
	}
	if got, err := s.Open(sealed, tableTokens, "srv", "alice", "https://as"); err != nil || got != "secret" {
		t.Fatalf("open: %q %v", got, err)
	}
	for _, tc := range []struct{ table, server, principal, issuer string }{
		{tableClients, "srv", "alice", "https://as"},
		{tableTokens, "other", "alice", "https://as"},
		{tableTokens, "srv", "bob", "https://as"},
		{tableTokens, "srv", "alice", "https://as2"},
	} {
		if _, err := s.Open(sealed, tc.table, tc.server, tc.principal, tc.issuer); !errors.Is(err, ErrUnsealed) {
			t.Errorf("opened for %v: %v", tc, err)
		}
	}
	other, _ := NewSealer(bytes.Repeat([]byte{8}, 32))
	if _, err := other.Open(sealed, tableTokens, "srv", "alice", "https://as"); !errors.Is(err, ErrUnsealed) {
		t.Errorf("another key opened it: %v", err)
	}
}

func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	noEnv := func(string) string { return "" }
	k1, err := LoadKey(dir, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	k2, err := LoadKey(dir, noEnv)
	if err != nil || !bytes.Equal(k1, k2) {
		t.Fatalf("second load: %v", err)
	}
	if err := os.Chmod(filepath.Join(dir, KeyFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(dir, noEnv); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a world-readable key file: %v", err)
	}
	env := func(string) string { return "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=" }
	if k, err := LoadKey("", env); err != nil || k[0] != 1 {
		t.Fatalf("env key: %v", err)
	}
	if _, err := LoadKey("", func(string) string { return "c2hvcnQ=" }); err == nil {
		t.Fatal("a short env key was accepted")
	}
}

// TestSecondSignInReusesTheOpenFlow: asking again while a sign-in waits
// gives the same flow with a new launch key (one authorization request at
// the authorization server, not two); the old link stops working.
func TestSecondSignInReusesTheOpenFlow(t *testing.T) {
	r := newRig(t, nil, false)
	ctx := context.Background()
	f1, err := r.m.StartSignIn(ctx, "srv", Caller{Principal: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	f2, err := r.m.StartSignIn(ctx, "srv", Caller{Principal: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if f1.ID != f2.ID || f1.LaunchURL == f2.LaunchURL {
		t.Fatalf("flows %s and %s, URLs equal: %v", f1.ID, f2.ID, f1.LaunchURL == f2.LaunchURL)
	}
	b := browser(t)
	r.keepCookie(t, b, f1) // the first answer's cookie no longer binds
	resp, err := b.Get(f1.LaunchURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("the replaced launch URL answered %d", resp.StatusCode)
	}
	if l, err := oauthtest.OpenLaunch(ctx, b, f2.LaunchURL); err != nil || l.Asked == "" || l.Status != http.StatusOK {
		t.Fatalf("the launch with the replaced browser cookie: %+v, %v; want the confirmation page first, then the callback's page", l, err)
	}
	n := 0
	for _, q := range r.as.Requests() {
		if q.Path == "/authorize" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d authorization requests, want 1", n)
	}
}

// TestSignInRightAfterOneEnds: a start made while the previous sign-in is
// finishing (its credential stored, the hosts being told) gets a launch of
// its own. It used to join the ending one, which had given its launch to
// its own starter only, and failed after 15 s; this is how the WebShell's
// second "Sign in" on a busy daemon answered 500.
func TestSignInRightAfterOneEnds(t *testing.T) {
	var once sync.Once
	ending, release := make(chan struct{}), make(chan struct{})
	as := oauthtest.NewAS(t)
	r := newRigWith(t, nil, as, oauthtest.NewServer(t, as), false, func(o *Options) {
		o.OnChange = func(string, string) {
			once.Do(func() {
				close(ending)
				<-release
			})
		}
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.signIn(t, "alice", browser(t))
	}()
	<-ending
	go func() {
		// The second start joins the ending sign-in before this lets it end.
		time.Sleep(200 * time.Millisecond)
		close(release)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f, err := r.m.StartSignIn(ctx, "srv", Caller{Principal: "alice", Owner: true})
	if err != nil {
		t.Fatalf("the start right after a sign-in: %v", err)
	}
	<-done
	b := browser(t)
	r.keepCookie(t, b, f)
	l, err := oauthtest.OpenLaunch(ctx, b, f.LaunchURL)
	if err != nil || l.Status != http.StatusSeeOther {
		t.Fatalf("the second launch: %+v, %v", l, err)
	}
}

// TestStartsWhileDiscoveringShareOneFlow: starts made while the first is
// still discovering the authorization server all get the one flow, the
// last start's link being the one that works (as for starts made after it
// opened, TestSecondSignInReusesTheOpenFlow).
func TestStartsWhileDiscoveringShareOneFlow(t *testing.T) {
	as := oauthtest.NewAS(t)
	as.MetadataDelay = 300 * time.Millisecond
	r := newRigWith(t, nil, as, oauthtest.NewServer(t, as), false)
	ctx := context.Background()
	var wg sync.WaitGroup
	flows := make([]Flow, 3)
	errs := make([]error, 3)
	for i := range flows {
		wg.Go(func() {
			flows[i], errs[i] = r.m.StartSignIn(ctx, "srv", Caller{Principal: "alice"})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
		if flows[i].ID != flows[0].ID {
			t.Fatalf("flows %s and %s", flows[0].ID, flows[i].ID)
		}
	}
}

// TestSignInLinkInAnotherBrowser: a launch URL opened in a browser that
// did not start the sign-in (a colleague's, who is signed in at the
// authorization server) stops at the confirmation page naming the
// principal and the server: the authorization server is not asked and
// nothing is stored. Before, the colleague's account was stored for the
// link's maker (research/redteam.md F3).
func TestSignInLinkInAnotherBrowser(t *testing.T) {
	r := newRig(t, nil, false)
	r.as.Subject = "victim"
	ctx := context.Background()
	f, err := r.m.StartSignIn(ctx, "srv", Caller{Principal: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := browser(t).Get(f.LaunchURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := oauthtest.PageText(string(body))
	if resp.StatusCode != http.StatusOK || resp.Request.URL.String() != f.LaunchURL || !strings.Contains(text, "Sign in to srv for bob?") {
		t.Fatalf("the link answered %d at %s: %s", resp.StatusCode, resp.Request.URL, text)
	}
	for _, q := range r.as.Requests() {
		if q.Path == "/authorize" {
			t.Fatal("the browser was sent to the authorization server before anyone confirmed")
		}
	}
	if rec, _ := r.store.LoadCredential(ctx, "srv", "bob"); rec != nil {
		t.Fatal("a credential was stored for bob")
	}
	if got, _ := r.m.FlowStatus(ctx, f.ID, "bob", 0); got.State != FlowPending {
		t.Fatalf("the flow is %s, want pending", got.State)
	}
}

// TestSignInConfirmedInAnotherBrowser: the sign-in of `mcphost auth
// login`, whose link the operator opens in a browser that did not start it
// (maybe on another machine): the confirmation page names the principal,
// the user continues, and the callback's page says whose credential was
// stored; the credential works.
func TestSignInConfirmedInAnotherBrowser(t *testing.T) {
	r := newRig(t, nil, false)
	r.as.Subject = "alice@example"
	ctx := context.Background()
	f, err := r.m.StartSignIn(ctx, "srv", Caller{Principal: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if f.Principal != "alice" {
		t.Fatalf("the flow's principal is %q", f.Principal)
	}
	l, err := oauthtest.OpenLaunch(ctx, browser(t), f.LaunchURL)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(l.Asked, "Sign in to srv for alice?") {
		t.Fatalf("the confirmation page said %q", l.Asked)
	}
	if text := oauthtest.PageText(l.Page); l.Status != http.StatusOK || !strings.Contains(text, "Signed in to srv as alice; the credential is stored for alice.") {
		t.Fatalf("the callback answered %d: %s", l.Status, text)
	}
	if got, ok := r.m.FlowStatus(ctx, f.ID, "alice", time.Second); !ok || got.State != FlowDone {
		t.Fatalf("flow %+v", got)
	}
	if resp, err := r.mcpCall(t, ctx); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("a call after the sign-in: %v %v", resp, err)
	}
}
