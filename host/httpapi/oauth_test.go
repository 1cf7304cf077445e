package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/httpapi"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/oauthtest"
	"github.com/mcphost/mcphost/oauth"
)

// oauthDaemon serves httpapi for a host with one per-principal OAuth
// server, prot, on 127.0.0.1; it returns the daemon's base URL.
func oauthDaemon(t *testing.T, as *oauthtest.AS) string {
	t.Helper()
	prot := oauthtest.NewServer(t, as)
	dir := t.TempDir()
	st, err := store.Open(t.Context(), filepath.Join(dir, "mcphost.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{
		DataDir:    dir,
		Principals: []config.Principal{{Name: "alice", Token: aliceToken}, {Name: "bob", Token: bobToken}},
		Servers: []config.Server{{
			Name: "prot", Transport: config.TransportStreamableHTTP, URL: prot.URL, VersionNegotiation: config.NegotiationLegacy,
			DiscoveryTimeout: 10 * time.Second, CallTimeout: 10 * time.Second, Enabled: true,
			Auth: &config.Auth{Type: config.AuthOAuth, Tokens: config.TokensPrincipal},
		}},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	h, err := host.New(cfg, host.Options{Store: st, OAuthBaseURL: base})
	if err != nil {
		ln.Close()
		st.Close()
		t.Fatal(err)
	}
	handler := httpapi.New(h, httpapi.Options{Hosts: []string{ln.Addr().String()}, Version: "test"})
	h.Start(t.Context())
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.Serve(ctx, ln, handler) }()
	t.Cleanup(func() {
		cancel()
		<-served
		h.Close()
		st.Close()
	})
	return base
}

// startSignIn asks the API, as alice, for a sign-in of prot and returns the
// flow and the answer's cookies.
func startSignIn(t *testing.T, base string) (oauth.Flow, []*http.Cookie) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/api/v1/servers/prot/auth/start", nil)
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("start answered %d: %v %v", resp.StatusCode, raw, err)
	}
	b, _ := json.Marshal(raw)
	var f oauth.Flow
	json.Unmarshal(b, &f)
	for _, c := range resp.Cookies() {
		if strings.Contains(string(b), c.Value) {
			t.Fatal("the answer's JSON carries the browser cookie")
		}
	}
	return f, resp.Cookies()
}

// TestOAuthLaunchBoundToTheStarter: the API's answer to alice's start
// binds the launch to her browser (an HttpOnly, SameSite=Lax cookie for
// /oauth/); her browser opens the launch URL straight to the authorization
// server and comes back to the WebShell, which the redirect tells whose
// credential was stored. The same URL in a browser without the cookie
// answers the confirmation page naming alice and prot, and launches only
// when it is confirmed from that page; the callback's page then says whose
// credential was stored.
func TestOAuthLaunchBoundToTheStarter(t *testing.T) {
	as := oauthtest.NewAS(t)
	base := oauthDaemon(t, as)
	u, _ := url.Parse(base)

	t.Run("the starter's browser", func(t *testing.T) {
		f, cookies := startSignIn(t, base)
		if f.Principal != "alice" || len(cookies) != 1 {
			t.Fatalf("flow %+v, cookies %+v", f, cookies)
		}
		if c := cookies[0]; c.Name != oauth.CookieName || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/oauth/" {
			t.Fatalf("the browser cookie %+v", c)
		}
		b := oauthtest.NewBrowser()
		b.Jar.SetCookies(u, cookies)
		l, err := oauthtest.OpenLaunch(t.Context(), b, f.LaunchURL)
		if err != nil {
			t.Fatal(err)
		}
		if l.Asked != "" || l.Status != http.StatusSeeOther || l.Location != "/#signin=prot&for=alice" {
			t.Fatalf("asked %q, then %d Location %q", l.Asked, l.Status, l.Location)
		}
	})

	t.Run("another browser", func(t *testing.T) {
		f, _ := startSignIn(t, base)
		resp, err := oauthtest.NewBrowser().Get(f.LaunchURL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Request.URL.Host != u.Host {
			t.Fatalf("the launch URL answered %d at %s, want the confirmation page", resp.StatusCode, resp.Request.URL.Host)
		}
		l, err := oauthtest.OpenLaunch(t.Context(), oauthtest.NewBrowser(), f.LaunchURL)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(l.Asked, "Sign in to prot for alice?") {
			t.Fatalf("the confirmation page said %q", l.Asked)
		}
		if text := oauthtest.PageText(l.Page); l.Status != http.StatusOK || !strings.Contains(text, "Signed in to prot as alice; the credential is stored for alice.") {
			t.Fatalf("the callback answered %d: %s", l.Status, text)
		}
	})

	t.Run("a cross-site confirmation", func(t *testing.T) {
		f, _ := startSignIn(t, base)
		body := strings.NewReader(url.Values{"confirm": {"x"}}.Encode())
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, f.LaunchURL, body)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "https://evil.example")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		resp, err := oauthtest.NewBrowser().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || resp.Request.URL.Host != u.Host {
			t.Fatalf("answered %d at %s", resp.StatusCode, resp.Request.URL.Host)
		}
		req, _ = http.NewRequestWithContext(t.Context(), http.MethodGet, fmt.Sprintf("%s/api/v1/auth/flows/%s", base, f.ID), nil)
		req.Header.Set("Authorization", "Bearer "+aliceToken)
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var got oauth.Flow
		json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if got.State != oauth.FlowPending {
			t.Fatalf("the flow is %q, want pending", got.State)
		}
	})
}
