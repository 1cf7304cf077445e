package oauth

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// launched opens a flow for principal and launches it, returning the flow,
// its state and the binding cookie the launch set.
func launched(t *testing.T, b *Broker, principal, state string) (*flow, *http.Cookie) {
	t.Helper()
	f, key, err := b.open("srv", principal, "https://as.example/authorize?state="+state, "https://as.example")
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	b.ServeLaunch(w, httptest.NewRequest(http.MethodGet, "/oauth/launch/"+f.id+"?k="+url.QueryEscape(key), nil))
	if w.Code != http.StatusFound || !strings.HasPrefix(w.Header().Get("Location"), "https://as.example/authorize") {
		t.Fatalf("launch answered %d %q", w.Code, w.Header().Get("Location"))
	}
	cookies := w.Result().Cookies()
	if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteLaxMode || cookies[0].Path != "/oauth/callback" {
		t.Fatalf("binding cookie %+v", cookies)
	}
	// The launch is single use.
	w = httptest.NewRecorder()
	b.ServeLaunch(w, httptest.NewRequest(http.MethodGet, "/oauth/launch/"+f.id+"?k="+url.QueryEscape(key), nil))
	if w.Code != http.StatusGone {
		t.Fatalf("a second launch answered %d, want 410", w.Code)
	}
	return f, cookies[0]
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
	if w := <-done; w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/#signin=srv" {
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
		f, key, err := b.open("srv", "alice", "https://as.example/a?state=s"+string(rune('a'+i)), "")
		if err != nil {
			t.Fatal(err)
		}
		flows, keys = append(flows, f), append(keys, key)
	}
	if _, _, err := b.open("srv", "alice", "https://as.example/a?state=over", ""); err == nil {
		t.Fatalf("a %d. open flow was accepted", MaxOpenFlows+1)
	}
	if _, _, err := b.open("srv", "bob", "https://as.example/a?state=bob", ""); err != nil {
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
