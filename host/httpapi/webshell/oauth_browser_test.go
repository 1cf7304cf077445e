package webshell_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/oauthtest"
	"github.com/mcphost/mcphost/oauth"
)

// oauthDaemon is a daemon with an OAuth server, prot, behind a Go
// authorization server whose users are subject.
func oauthDaemon(t *testing.T, subject string) (*daemon, *oauthtest.AS, *oauthtest.Server) {
	t.Helper()
	as := oauthtest.NewAS(t)
	as.Subject = subject
	prot := oauthtest.NewServer(t, as)
	d := newDaemonWith(t, func(cfg *config.Config, _ string) {
		cfg.DataDir = t.TempDir()
		cfg.Servers = append(cfg.Servers, config.Server{
			Name: "prot", Transport: config.TransportStreamableHTTP, URL: prot.URL,
			VersionNegotiation: config.NegotiationLegacy, DiscoveryTimeout: 20 * time.Second, CallTimeout: time.Minute, Enabled: true,
			Auth: &config.Auth{Type: config.AuthOAuth, Tokens: config.TokensPrincipal},
		})
	})
	return d, as, prot
}

// TestSignInFromTheWebShell: a server behind a Go authorization server
// shows "Sign in" on its card; the click takes this tab through the
// launch URL (without a confirmation: this browser started it), the
// authorization server and /oauth/callback back to the WebShell, still
// signed in to it, which says whose credential was stored; the server
// becomes ready and its tool answers with the signed-in subject. No token
// reaches the page.
func TestSignInFromTheWebShell(t *testing.T) {
	d, as, prot := oauthDaemon(t, "alice@example")
	tb := newTab(t)
	tb.login(d)
	card := `[data-testid=server-list] ` + tid("server-prot")
	tb.waitFor("prot to need a sign-in", `document.querySelector(`+jsString(card)+`)?.dataset.status === 'needs_auth'`)
	tb.click(tid("signin-prot"))
	// The tab leaves for the authorization server and comes back: a poll
	// that the navigation interrupts is started again.
	tb.waitAcross("the sign-in round trip to end on the WebShell, which says whose credential was stored",
		`location.pathname === '/' && location.hash === '' && [...document.querySelectorAll('.toast-text')].some((e) => e.textContent === 'Signed in to prot as alice; the credential is stored for alice.')`)
	tb.waitFor("prot to be ready", `document.querySelector(`+jsString(card)+`)?.dataset.status === 'ready'`)
	tb.waitFor("the event stream to be live", `document.getElementById('live')?.dataset.state === 'live'`)
	if got := eval[string](tb, `location.hash`); got != "" {
		t.Errorf("the address bar keeps %q after the sign-in", got)
	}

	tb.selectTool("prot.whoami")
	e := tb.call(1)
	if e.Status != "ok" || !strings.Contains(e.Result, "subject=alice@example") {
		t.Fatalf("whoami entry = %+v, want the signed-in subject", e)
	}
	// A step-up: the server now wants a scope the token lacks. The call
	// fails, the card asks for more access, the same round trip grants it,
	// and the call then works.
	prot.RequireScope("write")
	tb.click(tid("call-button"))
	tb.waitFor("prot to ask for more access", `document.querySelector(`+jsString(card)+`)?.dataset.status === 'needs_auth' && (document.querySelector(`+jsString(tid("signin-prot"))+`)?.textContent ?? '').includes('more access')`)
	tb.click(tid("signin-prot"))
	tb.waitAcross("the step-up round trip to end on the WebShell with prot ready",
		`location.pathname === '/' && location.hash === '' && document.querySelector(`+jsString(card)+`)?.dataset.status === 'ready'`)
	tb.waitFor("the event stream to be live", `document.getElementById('live')?.dataset.state === 'live'`)
	tb.selectTool("prot.whoami")
	okEntries := `[...document.querySelectorAll('` + entrySel + `')].filter((e) => e.dataset.status === 'ok').length`
	before := eval[int](tb, okEntries)
	tb.click(tid("call-button"))
	tb.waitFor("the call after the step-up to succeed", fmt.Sprintf("%s > %d", okEntries, before))

	// The card says who is signed in where, and signs out.
	tb.click(tid("server-details-toggle-prot"))
	tb.waitVisible(tid("signout-prot"))
	if txt := eval[string](tb, `document.querySelector(`+jsString(tid("server-signin-prot"))+`).textContent`); !strings.Contains(txt, "as alice") || !strings.Contains(txt, "at "+as.URL) {
		t.Errorf("the card's sign-in says %q", txt)
	}

	// No token in the DOM, the storage, or the cookies the page can read.
	page := eval[string](tb, `document.documentElement.outerHTML + JSON.stringify(Object.entries(sessionStorage)) + JSON.stringify(Object.entries(localStorage)) + document.cookie`)
	for _, tok := range prot.Seen() {
		if strings.Contains(page, tok) {
			t.Fatal("a token reached the page")
		}
	}
	if strings.Contains(page, "test-refresh-") {
		t.Fatal("a refresh token reached the page")
	}
	tb.click(tid("signout-prot"))
	tb.waitFor("prot to need a sign-in again", `document.querySelector(`+jsString(card)+`)?.dataset.status === 'needs_auth'`)
}

// TestSignInLinkInAnotherBrowser: alice's launch URL opened in another
// browser (its own cookies; a colleague she sent it to) shows a page that
// names alice and prot and stays there: nothing goes to the authorization
// server until its user continues. When the user does (the operator of
// `mcphost auth login`, say), the sign-in completes and the callback's
// page says whose credential was stored. Before, the link went straight to
// the authorization server and stored the colleague's account for alice
// (research/redteam.md F3).
func TestSignInLinkInAnotherBrowser(t *testing.T) {
	d, as, _ := oauthDaemon(t, "colleague@example")
	ctx, cancel := context.WithTimeout(t.Context(), waitBound)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, d.base+"/api/v1/servers/prot/auth/start", nil)
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var f oauth.Flow
	err = json.NewDecoder(resp.Body).Decode(&f)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("start answered %d: %v", resp.StatusCode, err)
	}

	tb := newTabWith(t, chromedp.WithNewBrowserContext())
	tb.navigate(f.LaunchURL)
	tb.waitFor("the confirmation page", `document.querySelector('h1')?.textContent === 'Sign in to prot for alice?'`)
	if got := eval[string](tb, `location.href`); got != f.LaunchURL {
		t.Fatalf("the browser left the confirmation page for %s", eval[string](tb, `location.origin + location.pathname`))
	}
	for _, q := range as.Requests() {
		if q.Path == "/authorize" {
			t.Fatal("the browser went to the authorization server before anyone confirmed")
		}
	}
	tb.click(`button[type=submit]`)
	tb.waitAcross("the callback's page to say whose credential was stored",
		`location.pathname === '/oauth/callback' && (document.body?.textContent ?? '').includes('Signed in to prot as alice; the credential is stored for alice.')`)
}

// waitAcross is waitFor across navigations: a poll that a navigation ends
// is started again on the new page, until the bound.
func (tb *tab) waitAcross(what, expr string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitBound)
	defer cancel()
	var err error
	for ctx.Err() == nil {
		if _, err = chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(50*time.Millisecond))); err == nil {
			return
		}
	}
	tb.fatalf("waiting for %s: %v", what, err)
}
