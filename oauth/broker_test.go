package oauth

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/oauthtest"
)

// opened opens a flow that principal started and binds it to principal's
// browser, returning the flow, its launch path and that browser's cookie.
func opened(t *testing.T, b *Broker, principal, state string) (*flow, string, *http.Cookie) {
	t.Helper()
	f, key, err := b.open("srv", principal, principal, "https://as.example/authorize?state="+state, "https://as.example")
	if err != nil {
		t.Fatal(err)
	}
	c := b.bindStarter(f.id)
	if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/oauth/" || c.Name != CookieName || c.Secure {
		t.Fatalf("browser cookie %+v", c)
	}
	return f, "/oauth/launch/" + f.id + "?k=" + url.QueryEscape(key), c
}

// launch answers GET path with the cookies.
func launch(b *Broker, method, path string, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	for _, c := range cookies {
		req.AddCookie(c)
	}
	w := httptest.NewRecorder()
	b.ServeLaunch(w, req)
	return w
}

// launched opens a flow for principal and launches it from the starter's
// browser, returning the flow and that browser's binding cookie.
func launched(t *testing.T, b *Broker, principal, state string) (*flow, *http.Cookie) {
	t.Helper()
	f, path, c := opened(t, b, principal, state)
	w := launch(b, http.MethodGet, path, c)
	if w.Code != http.StatusFound || !strings.HasPrefix(w.Header().Get("Location"), "https://as.example/authorize") {
		t.Fatalf("launch answered %d %q", w.Code, w.Header().Get("Location"))
	}
	// The launch is single use.
	if w := launch(b, http.MethodGet, path, c); w.Code != http.StatusGone {
		t.Fatalf("a second launch answered %d, want 410", w.Code)
	}
	return f, c
}

// asked opens path in a browser with the cookies (none: another browser)
// and checks that it answers the confirmation page, launching nothing. It
// returns the page's text, the cookie it set and its confirmation token.
func asked(t *testing.T, b *Broker, f *flow, path string, cookies ...*http.Cookie) (string, *http.Cookie, string) {
	t.Helper()
	w := launch(b, http.MethodGet, path, cookies...)
	if w.Code != http.StatusOK || w.Header().Get("Location") != "" {
		t.Fatalf("launch answered %d Location %q, want the confirmation page", w.Code, w.Header().Get("Location"))
	}
	if f.st != FlowPending {
		t.Fatalf("the flow is %s after the confirmation page, want pending", f.st)
	}
	for _, h := range []string{"Cache-Control", "X-Frame-Options"} {
		if w.Header().Get(h) == "" {
			t.Errorf("no %s on the confirmation page", h)
		}
	}
	// Under no-referrer a browser's POST says Origin: null; same-origin
	// still sends the launch URL to no other site.
	if rp := w.Header().Get("Referrer-Policy"); rp != "same-origin" {
		t.Errorf("Referrer-Policy %q on the confirmation page, want same-origin", rp)
	}
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("the confirmation page may be framed: %q", csp)
	}
	cs := w.Result().Cookies()
	if len(cs) != 1 || cs[0].Name != CookieName || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteLaxMode || cs[0].Path != "/oauth/" {
		t.Fatalf("the confirmation page's cookie %+v", cs)
	}
	m := confirmToken.FindStringSubmatch(w.Body.String())
	if m == nil {
		t.Fatalf("no confirmation token in %s", w.Body.String())
	}
	return oauthtest.PageText(w.Body.String()), cs[0], m[1]
}

var confirmToken = regexp.MustCompile(`name="confirm" value="([0-9a-f]+)"`)

// confirm posts the confirmation of path with token, the cookies and the
// headers.
func confirm(b *Broker, path, token string, header http.Header, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(url.Values{"confirm": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header[k] = v
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	w := httptest.NewRecorder()
	b.ServeLaunch(w, req)
	return w
}

// sameSite are the headers of a browser's POST from the daemon's own page.
var sameSite = http.Header{"Origin": {"http://127.0.0.1:7777"}, "Sec-Fetch-Site": {"same-origin"}}

// TestLaunchInAnotherBrowserAsksFirst: the launch URL opened in a browser
// that is not the starter's (no cookie, another flow's, a guessed one)
// answers a page that names the server, the principal the credential is
// stored for and the authorization server, escaped, and launches nothing:
// no redirect, the flow stays pending. Before, any browser was sent on to
// the authorization server and signed the link's maker in with its own
// account (research/redteam.md F3).
func TestLaunchInAnotherBrowserAsksFirst(t *testing.T) {
	b := newBroker(func() string { return "http://127.0.0.1:7777" })
	f, path, _ := opened(t, b, "alice", "s1")
	_, _, bobCookie := opened(t, b, "bob", "s2")
	for _, tc := range []struct {
		name    string
		cookies []*http.Cookie
	}{
		{"no cookie", nil},
		{"another flow's cookie", []*http.Cookie{bobCookie}},
		{"a guessed cookie", []*http.Cookie{{Name: CookieName, Value: f.id + ".guess"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, _, _ := asked(t, b, f, path, tc.cookies...)
			for _, want := range []string{"Sign in to srv for alice?", "stored for the mcphost principal alice", "as.example", "Continue only if you started this sign-in yourself"} {
				if !strings.Contains(text, want) {
					t.Errorf("the page does not say %q: %s", want, text)
				}
			}
		})
	}

	// Every value on the page is escaped.
	hostile, key, err := b.open(`<img src=x>`, `<script>alert(1)</script>`, `<b>bob</b>`, "https://as.example/authorize?state=s3", "https://as.example")
	if err != nil {
		t.Fatal(err)
	}
	w := launch(b, http.MethodGet, "/oauth/launch/"+hostile.id+"?k="+key)
	if body := w.Body.String(); w.Code != http.StatusOK || strings.Contains(body, "<script>") || strings.Contains(body, "<img") || strings.Contains(body, "<b>") {
		t.Fatalf("answered %d with unescaped markup:\n%s", w.Code, body)
	}
}

// TestLaunchConfirmation: the confirmation launches the flow only as a
// POST from the page in the browser it was shown in (its cookie and
// token), from the daemon's own origin; anything else is refused and the
// flow stays pending. The confirmed browser's callback then stores the
// credential and its page says for whom.
func TestLaunchConfirmation(t *testing.T) {
	b := newBroker(func() string { return "http://127.0.0.1:7777" })
	f, path, starterCookie := opened(t, b, "alice", "s1")
	_, cookie, token := asked(t, b, f, path)
	_, otherCookie, otherToken := asked(t, b, f, path)
	for _, tc := range []struct {
		name    string
		path    string
		token   string
		header  http.Header
		cookies []*http.Cookie
		want    int
	}{
		{"no cookie (a cross-site form: Lax cookies stay home)", path, token, sameSite, nil, 403},
		{"another browser's token", path, otherToken, sameSite, []*http.Cookie{cookie}, 403},
		{"no token", path, "", sameSite, []*http.Cookie{cookie}, 403},
		{"the starter's cookie without the page", path, "", sameSite, []*http.Cookie{starterCookie}, 403},
		{"a cross-site POST", path, token, http.Header{"Origin": {"https://evil.example"}, "Sec-Fetch-Site": {"cross-site"}}, []*http.Cookie{cookie}, 403},
		{"a same-site POST from another port", path, token, http.Header{"Origin": {"http://127.0.0.1:8080"}, "Sec-Fetch-Site": {"same-site"}}, []*http.Cookie{cookie}, 403},
		{"Origin null", path, token, http.Header{"Origin": {"null"}}, []*http.Cookie{cookie}, 403},
		{"a foreign Origin without Sec-Fetch-Site", path, token, http.Header{"Origin": {"https://evil.example"}}, []*http.Cookie{cookie}, 403},
		{"a cross-site POST that claims the daemon's Origin", path, token, http.Header{"Origin": {"http://127.0.0.1:7777"}, "Sec-Fetch-Site": {"cross-site"}}, []*http.Cookie{cookie}, 403},
		{"a wrong launch key", "/oauth/launch/" + f.id + "?k=wrong", token, sameSite, []*http.Cookie{cookie}, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := confirm(b, tc.path, tc.token, tc.header, tc.cookies...)
			if w.Code != tc.want || w.Header().Get("Location") != "" {
				t.Fatalf("answered %d Location %q, want %d", w.Code, w.Header().Get("Location"), tc.want)
			}
			if f.st != FlowPending {
				t.Fatalf("the flow is %s, want pending", f.st)
			}
		})
	}
	if w := launch(b, http.MethodPut, path, cookie); w.Code != http.StatusMethodNotAllowed {
		t.Fatalf("PUT answered %d", w.Code)
	}

	w := confirm(b, path, token, sameSite, cookie)
	if w.Code != http.StatusSeeOther || !strings.HasPrefix(w.Header().Get("Location"), "https://as.example/authorize") || f.st != FlowLaunched {
		t.Fatalf("the confirmation answered %d %q, flow %s", w.Code, w.Header().Get("Location"), f.st)
	}
	if w := confirm(b, path, otherToken, sameSite, otherCookie); w.Code != http.StatusGone {
		t.Fatalf("a second confirmation answered %d, want 410", w.Code)
	}
	// The other browser's callback is refused; the confirmed one's is
	// taken, and its page says whose credential was stored.
	if w := callback(b, "code=c&state=s1", otherCookie); w.Code != http.StatusBadRequest {
		t.Fatalf("the other browser's callback answered %d", w.Code)
	}
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() { done <- callback(b, "code=c1&state=s1", cookie) }()
	if r := <-f.result; r.code != "c1" {
		t.Fatalf("delivered %+v", r)
	}
	b.finish(f, nil)
	w = <-done
	if text := oauthtest.PageText(w.Body.String()); w.Code != http.StatusOK || !strings.Contains(text, "Signed in to srv as alice; the credential is stored for alice.") {
		t.Fatalf("the callback answered %d: %s", w.Code, text)
	}
}

// TestCallbackNeedsTheLaunchingBrowser: a callback whose binding cookie
// is missing, belongs to another flow, or to a browser that was only
// shown the confirmation page is refused: nothing is delivered (so nothing
// is stored), and the page says which sign-in it was and why.
func TestCallbackNeedsTheLaunchingBrowser(t *testing.T) {
	b := newBroker(func() string { return "http://127.0.0.1:7777" })
	f, path, _ := opened(t, b, "alice", "s1")
	_, shown, _ := asked(t, b, f, path)
	_, cookie, token := asked(t, b, f, path)
	if w := confirm(b, path, token, sameSite, cookie); w.Code != http.StatusSeeOther {
		t.Fatalf("the confirmation answered %d", w.Code)
	}
	_, bobCookie := launched(t, b, "bob", "s2")
	for _, tc := range []struct {
		name   string
		cookie *http.Cookie
		why    string
	}{
		{"no cookie", nil, "did not open its sign-in link"},
		{"another flow's cookie", bobCookie, "belongs to another sign-in"},
		{"a browser only shown the page", shown, "belongs to another sign-in, or to an older page of this one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := callback(b, "code=c&state=s1", tc.cookie)
			text := oauthtest.PageText(w.Body.String())
			if w.Code != http.StatusBadRequest || !strings.Contains(text, "sign-in to srv for alice") || !strings.Contains(text, tc.why) || !strings.Contains(text, "Nothing was stored") {
				t.Fatalf("answered %d: %s", w.Code, text)
			}
			select {
			case r := <-f.result:
				t.Fatalf("the flow got an answer: %+v", r)
			default:
			}
		})
	}
}

// TestSharedSignInNamesItsStarter: a shared credential's flow is followed
// by the admin who started it, and its pages say the credential is shared.
func TestSharedSignInNamesItsStarter(t *testing.T) {
	b := newBroker(func() string { return "http://127.0.0.1:7777" })
	f, key, err := b.open("srv", SharedPrincipal, "carol", "https://as.example/authorize?state=s1", "https://as.example")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := b.Get(f.id, "carol"); !ok || v.Principal != SharedPrincipal {
		t.Fatalf("carol follows %+v, %v", v, ok)
	}
	if _, ok := b.Get(f.id, SharedPrincipal); ok {
		t.Fatal("the flow is followed by its credential key, not its starter")
	}
	text, _, _ := asked(t, b, f, "/oauth/launch/"+f.id+"?k="+key)
	if !strings.Contains(text, "shared credential of srv") || !strings.Contains(text, "carol started this sign-in") {
		t.Fatalf("the page: %s", text)
	}
}

// TestBrowserCookieOverHTTPS: over https the binding cookie is Secure and
// __Host- (no other host of the domain can set it).
func TestBrowserCookieOverHTTPS(t *testing.T) {
	b := newBroker(func() string { return "https://mcphost.example" })
	f, _, err := b.open("srv", "alice", "alice", "https://as.example/authorize?state=s1", "https://as.example")
	if err != nil {
		t.Fatal(err)
	}
	c := b.bindStarter(f.id)
	if c.Name != "__Host-"+CookieName || c.Path != "/" || !c.Secure || !c.HttpOnly {
		t.Fatalf("cookie %+v", c)
	}
}

func callback(b *Broker, query string, c *http.Cookie) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, "/oauth/callback?"+query, nil)
	if c != nil {
		req.AddCookie(c)
	}
	w := httptest.NewRecorder()
	b.ServeCallback(w, req)
	return w
}

func TestBrokerRefusesWhatDoesNotMatch(t *testing.T) {
	b := newBroker(func() string { return "http://127.0.0.1:7777" })
	alice, aliceCookie := launched(t, b, "alice", "state-a")
	_, bobCookie := launched(t, b, "bob", "state-b")

	for _, tc := range []struct {
		name   string
		query  string
		cookie *http.Cookie
		want   int
	}{
		{"wrong state", "code=c&state=state-x", aliceCookie, 400},
		{"no cookie", "code=c&state=state-a", nil, 400},
		{"a code for another principal's flow", "code=c&state=state-a", bobCookie, 400},
		{"a forged cookie", "code=c&state=state-a", &http.Cookie{Name: CookieName, Value: alice.id + ".guess"}, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if w := callback(b, tc.query, tc.cookie); w.Code != tc.want {
				t.Fatalf("answered %d, want %d", w.Code, tc.want)
			}
			select {
			case <-alice.result:
				t.Fatal("the flow got an answer")
			default:
			}
		})
	}
	// The right answer is delivered once; a replayed code is refused.
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() { done <- callback(b, "code=c1&state=state-a&iss=https%3A%2F%2Fas.example", aliceCookie) }()
	r := <-alice.result
	if r.code != "c1" || r.state != "state-a" || r.iss != "https://as.example" || r.err != nil {
		t.Fatalf("delivered %+v", r)
	}
	b.finish(alice, nil)
	if w := <-done; w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/#signin=srv&for=alice" {
		t.Fatalf("callback answered %d %q", w.Code, w.Header().Get("Location"))
	}
	if w := callback(b, "code=c1&state=state-a", aliceCookie); w.Code != 400 {
		t.Fatalf("a replayed code answered %d", w.Code)
	}
	for _, h := range []string{"Cache-Control", "Referrer-Policy", "Content-Security-Policy"} {
		if callback(b, "state=nope", nil).Header().Get(h) == "" {
			t.Errorf("no %s on the callback's answer", h)
		}
	}
}

func TestBrokerErrorAnswerAndIssuer(t *testing.T) {
	b := newBroker(func() string { return "http://127.0.0.1:7777" })
	f, c := launched(t, b, "alice", "s1")
	go callback(b, "error=access_denied&error_description=%3Cb%3Eno%3C%2Fb%3E&state=s1&iss=https%3A%2F%2Fevil.example", c)
	r := <-f.result
	if r.err == nil || strings.Contains(r.err.Error(), "access_denied") {
		t.Fatalf("an error answer from another issuer was shown: %v", r.err)
	}
	b.finish(f, r.err)

	f, c = launched(t, b, "alice", "s2")
	go callback(b, "error=access_denied&state=s2", c)
	r = <-f.result
	if r.err == nil || !strings.Contains(r.err.Error(), "access_denied") {
		t.Fatalf("the error answer: %v", r.err)
	}
	b.finish(f, r.err)
}

func TestBrokerCapAndExpiry(t *testing.T) {
	now := time.Unix(1e9, 0)
	b := newBroker(func() string { return "http://127.0.0.1:7777" })
	b.now = func() time.Time { return now }
	var keys []string
	var flows []*flow
	for i := range MaxOpenFlows {
		f, key, err := b.open("srv", "alice", "alice", "https://as.example/a?state=s"+string(rune('a'+i)), "")
		if err != nil {
			t.Fatal(err)
		}
		flows, keys = append(flows, f), append(keys, key)
	}
	if _, _, err := b.open("srv", "alice", "alice", "https://as.example/a?state=over", ""); err == nil {
		t.Fatalf("a %d. open flow was accepted", MaxOpenFlows+1)
	}
	if _, _, err := b.open("srv", "bob", "bob", "https://as.example/a?state=bob", ""); err != nil {
		t.Fatalf("bob is capped by alice's flows: %v", err)
	}
	w := httptest.NewRecorder()
	b.ServeLaunch(w, httptest.NewRequest(http.MethodGet, "/oauth/launch/"+flows[1].id+"?k=wrong", nil))
	if w.Code != http.StatusNotFound {
		t.Fatalf("a wrong launch key answered %d", w.Code)
	}
	now = now.Add(FlowTTL + time.Second)
	w = httptest.NewRecorder()
	b.ServeLaunch(w, httptest.NewRequest(http.MethodGet, "/oauth/launch/"+flows[0].id+"?k="+url.QueryEscape(keys[0]), nil))
	if w.Code != http.StatusGone {
		t.Fatalf("an expired launch answered %d", w.Code)
	}
	if _, ok := b.Get(flows[0].id, "bob"); ok {
		t.Fatal("bob sees alice's flow")
	}
}
