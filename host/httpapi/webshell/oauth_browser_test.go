package webshell_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/oauthtest"
)

// TestSignInFromTheWebShell: a server behind a Go authorization server
// shows "Sign in" on its card; the click takes this tab through the
// launch URL, the authorization server and /oauth/callback back to the
// WebShell, still signed in to it; the server becomes ready and its tool
// answers with the signed-in subject. No token reaches the page.
func TestSignInFromTheWebShell(t *testing.T) {
	as := oauthtest.NewAS(t)
	as.Subject = "alice@example"
	prot := oauthtest.NewServer(t, as)
	d := newDaemonWith(t, func(cfg *config.Config, _ string) {
		cfg.DataDir = t.TempDir()
		cfg.Servers = append(cfg.Servers, config.Server{
			Name: "prot", Transport: config.TransportStreamableHTTP, URL: prot.URL,
			VersionNegotiation: config.NegotiationLegacy, DiscoveryTimeout: 20 * time.Second, CallTimeout: time.Minute, Enabled: true,
			Auth: &config.Auth{Type: config.AuthOAuth, Tokens: config.TokensPrincipal},
		})
	})
	tb := newTab(t)
	tb.login(d)
	card := `[data-testid=server-list] ` + tid("server-prot")
	tb.waitFor("prot to need a sign-in", `document.querySelector(`+jsString(card)+`)?.dataset.status === 'needs_auth'`)
	tb.click(tid("signin-prot"))
	// The tab leaves for the authorization server and comes back: a poll
	// that the navigation interrupts is started again.
	tb.waitAcross("the sign-in round trip to end on the WebShell with prot ready",
		`location.pathname === '/' && location.hash === '' && document.querySelector(`+jsString(card)+`)?.dataset.status === 'ready'`)
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
