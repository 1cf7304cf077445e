package oauth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// FuzzTokenResponse: a token endpoint's answer either gives a bearer token
// with an access token, or an error that never repeats the body (it may
// hold secrets) beyond the bounded error code and description.
func FuzzTokenResponse(f *testing.F) {
	for _, seed := range []string{
		`{"access_token":"a","token_type":"Bearer","expires_in":3600,"refresh_token":"r","scope":"x y"}`,
		`{"access_token":"a","expires_in":"60"}`,
		`{"error":"invalid_grant","error_description":"expired"}`,
		`{"access_token":"a","token_type":"mac"}`,
		`{"access_token":"a","expires_in":-1}`,
		`not json`, ``, `null`, `[]`,
	} {
		f.Add(200, []byte(seed))
		f.Add(400, []byte(seed))
	}
	now := time.Unix(1e9, 0)
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		tok, _, err := parseTokenResponse(status, body, now)
		if err != nil {
			if tok != nil {
				t.Fatal("a token and an error")
			}
			var te *TokenError
			if errors.As(err, &te) && (len(te.Error()) > 400) {
				t.Fatalf("unbounded error text: %d bytes", len(te.Error()))
			}
			return
		}
		if status != 200 || tok.AccessToken == "" || tok.TokenType != "Bearer" {
			t.Fatalf("accepted %d %+v", status, tok)
		}
		if !tok.Expiry.IsZero() && tok.Expiry.Before(now) {
			t.Fatalf("expiry in the past: %v", tok.Expiry)
		}
	})
}

// FuzzCallback: whatever the query and cookie, a callback without an open,
// launched flow whose state and cookie match is refused (4xx) and never
// redirects; a page never echoes unescaped markup.
func FuzzCallback(f *testing.F) {
	f.Add("code=c&state=s&iss=x", "f_x.secret")
	f.Add("error=access_denied&error_description=%3Cscript%3E&state=s", "")
	f.Add("state=", "junk")
	b := newBroker(func() string { return "http://127.0.0.1:7777" })
	fl, _, err := b.open("srv", "alice", "alice", "https://as.example/authorize?state=known", "https://as.example")
	if err != nil {
		f.Fatal(err)
	}
	fl.st = FlowLaunched
	fl.cookieHash = hash("right-secret")
	f.Fuzz(func(t *testing.T, query, cookie string) {
		req := httptest.NewRequest(http.MethodGet, "/oauth/callback", nil)
		req.URL.RawQuery = query
		if cookie != "" {
			req.Header.Set("Cookie", CookieName+"="+cookie)
		}
		w := httptest.NewRecorder()
		b.ServeCallback(w, req)
		if strings.Contains(cookie, "right-secret") && strings.Contains(query, "state=known") {
			return // may be the real answer
		}
		if w.Code < 400 || w.Code >= 500 {
			t.Fatalf("answered %d to %q with cookie %q", w.Code, query, cookie)
		}
		if strings.Contains(w.Body.String(), "<script") {
			t.Fatal("unescaped markup in the page")
		}
	})
}

// FuzzLaunch: whatever the method, query, cookie, body and browser headers,
// a launch goes on to the authorization server (a redirect) only with the
// flow's key and either the starter's browser cookie (GET) or, from the
// daemon's own origin, a confirmation token that matches the request's
// cookie (POST); everything else leaves the flow pending, and no page
// echoes markup.
func FuzzLaunch(f *testing.F) {
	b := newBroker(func() string { return "http://127.0.0.1:7777" })
	fl, _, err := b.open("srv", "alice", "alice", "https://as.example/authorize?state=known", "https://as.example")
	if err != nil {
		f.Fatal(err)
	}
	const key, start, page = "right-key", "start-secret", "page-secret"
	token := b.confirmToken(fl.id, page)
	f.Add("GET", "k="+key, fl.id+"."+start, "", "", "")
	f.Add("POST", "k="+key, fl.id+"."+page, "confirm="+token, "http://127.0.0.1:7777", "same-origin")
	f.Add("POST", "k="+key, fl.id+"."+page, "confirm="+token, "https://evil.example", "cross-site")
	f.Add("POST", "k=x", "junk", "confirm=%3Cscript%3E", "null", "")
	f.Add("GET", "k=%3Cscript%3E", "", "", "", "none")
	f.Fuzz(func(t *testing.T, method, query, cookie, body, origin, site string) {
		if method != http.MethodGet && method != http.MethodPost {
			method = http.MethodPost
		}
		b.mu.Lock()
		fl.st, fl.keyHash, fl.startHash, fl.cookieHash = FlowPending, hash(key), hash(start), [32]byte{}
		b.mu.Unlock()
		req := httptest.NewRequest(method, "/oauth/launch/"+fl.id, strings.NewReader(body))
		req.URL.RawQuery = query
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if cookie != "" {
			req.Header.Set("Cookie", CookieName+"="+cookie)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if site != "" {
			req.Header.Set("Sec-Fetch-Site", site)
		}
		w := httptest.NewRecorder()
		b.ServeLaunch(w, req)
		b.mu.Lock()
		st := fl.st
		b.mu.Unlock()
		if w.Code >= 300 && w.Code < 400 {
			q, _ := url.ParseQuery(query)
			id, secret, _ := strings.Cut(cookie, ".")
			form, _ := url.ParseQuery(body)
			viaStarter := method == http.MethodGet && secret == start
			confirmed := method == http.MethodPost && form.Get("confirm") == b.confirmToken(fl.id, secret) && b.sameOrigin(req)
			if q.Get("k") != key || id != fl.id || !(viaStarter || confirmed) {
				t.Fatalf("%s ?%s with cookie %q, body %q, Origin %q, Sec-Fetch-Site %q: redirected", method, query, cookie, body, origin, site)
			}
			if st != FlowLaunched || !strings.HasPrefix(w.Header().Get("Location"), "https://as.example/") {
				t.Fatalf("redirected to %q with the flow %s", w.Header().Get("Location"), st)
			}
			return
		}
		if st != FlowPending {
			t.Fatalf("answered %d and the flow is %s", w.Code, st)
		}
		if strings.Contains(w.Body.String(), "<script") {
			t.Fatal("unescaped markup in the page")
		}
	})
}
