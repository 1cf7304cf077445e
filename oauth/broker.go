package oauth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Bounds of the broker.
const (
	// FlowTTL is how long a sign-in may take from its start to the callback.
	FlowTTL = 10 * time.Minute
	// MaxOpenFlows is how many unfinished sign-ins one principal may have.
	MaxOpenFlows = 3
	// callbackWait is how long the callback waits for the code exchange
	// before it answers the browser.
	callbackWait = 15 * time.Second
)

// CookieName is the binding cookie the launch route sets and the callback
// requires.
const CookieName = "mcphost_oauth"

// FlowState is where a sign-in is.
type FlowState string

// The states of a flow.
const (
	FlowPending  FlowState = "pending"  // launch URL issued, not opened yet
	FlowLaunched FlowState = "launched" // the browser went to the authorization server
	FlowDone     FlowState = "done"     // signed in
	FlowFailed   FlowState = "failed"   // the sign-in failed (Error says why)
)

// Flow is what the API says of a sign-in: never a secret but the launch
// URL, and that only to the principal who started it.
type Flow struct {
	ID        string    `json:"flowId"`
	Server    string    `json:"server"`
	LaunchURL string    `json:"launchUrl,omitempty"`
	ExpiresAt time.Time `json:"expiresAt"`
	State     FlowState `json:"state"`
	Error     string    `json:"error,omitempty"`
}

// callbackResult is what came back on the redirect.
type callbackResult struct {
	code, state, iss string
	err              error
}

// flow is one pending sign-in.
type flow struct {
	id, state, server, principal string
	authURL                      string
	expectedIssuer               string
	keyHash, cookieHash          [32]byte
	expires                      time.Time
	st                           FlowState
	errText                      string
	result                       chan callbackResult // the callback's answer, buffered 1
	finished                     chan struct{}       // closed when the exchange has ended
}

// Broker holds the pending sign-ins and serves /oauth/launch/ and
// /oauth/callback. Flows live in memory: a restart loses the open ones,
// and the user starts again.
type Broker struct {
	base func() string // scheme://host[:port] of the daemon, the redirect's origin
	now  func() time.Time

	mu      sync.Mutex
	byID    map[string]*flow
	byState map[string]*flow
}

func newBroker(base func() string) *Broker {
	return &Broker{base: func() string { return strings.TrimRight(base(), "/") }, now: time.Now, byID: map[string]*flow{}, byState: map[string]*flow{}}
}

// RedirectURL is the callback URL every authorization request names.
func (b *Broker) RedirectURL() string { return b.base() + "/oauth/callback" }

func randomText() string { return rand.Text() }

func hash(s string) [32]byte { return sha256.Sum256([]byte(s)) }

// open registers a flow for the authorization URL the SDK built, and
// returns it with its launch key.
func (b *Broker) open(server, principal, authURL, expectedIssuer string) (*flow, string, error) {
	u, err := url.Parse(authURL)
	if err != nil {
		return nil, "", fmt.Errorf("oauth: authorization URL: %w", err)
	}
	state := u.Query().Get("state")
	if state == "" {
		return nil, "", errors.New("oauth: the authorization URL carries no state")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sweep()
	open := 0
	for _, f := range b.byID {
		if f.principal == principal && (f.st == FlowPending || f.st == FlowLaunched) {
			open++
		}
	}
	if open >= MaxOpenFlows {
		return nil, "", fmt.Errorf("oauth: %d sign-ins are already open for this principal; finish one or wait %s", open, FlowTTL)
	}
	key := randomText()
	f := &flow{
		id: "f_" + randomText()[:16], state: state, server: server, principal: principal,
		authURL: authURL, expectedIssuer: expectedIssuer,
		keyHash: hash(key), expires: b.now().Add(FlowTTL), st: FlowPending,
		result: make(chan callbackResult, 1), finished: make(chan struct{}),
	}
	b.byID[f.id] = f
	b.byState[state] = f
	return f, key, nil
}

// rekey gives an open, not yet launched flow a new launch key (a second
// "Sign in" while the first is pending reuses its flow).
func (b *Broker) rekey(f *flow) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if f.st != FlowPending || b.now().After(f.expires) {
		return "", false
	}
	key := randomText()
	f.keyHash = hash(key)
	return key, true
}

func (b *Broker) launchURL(f *flow, key string) string {
	return b.base() + "/oauth/launch/" + f.id + "?k=" + url.QueryEscape(key)
}

// finish records how the flow ended.
func (b *Broker) finish(f *flow, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-f.finished:
		return
	default:
	}
	if err != nil {
		f.st, f.errText = FlowFailed, err.Error()
	} else {
		f.st = FlowDone
	}
	delete(b.byState, f.state)
	close(f.finished)
}

// sweep forgets expired flows; under mu.
func (b *Broker) sweep() {
	now := b.now()
	for id, f := range b.byID {
		if now.After(f.expires.Add(FlowTTL)) {
			delete(b.byID, id)
			delete(b.byState, f.state)
		}
	}
}

// Get returns a flow of principal (ok false for a flow that does not exist
// or is someone else's).
func (b *Broker) Get(id, principal string) (Flow, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f, ok := b.byID[id]
	if !ok || f.principal != principal {
		return Flow{}, false
	}
	return f.view(), true
}

// viewOf returns what the API says of f.
func (b *Broker) viewOf(f *flow) Flow {
	b.mu.Lock()
	defer b.mu.Unlock()
	return f.view()
}

// view is what the API says of f; under b.mu.
func (f *flow) view() Flow {
	return Flow{ID: f.id, Server: f.server, ExpiresAt: f.expires, State: f.st, Error: f.errText}
}

// wait returns the flow's channel that closes when it has ended.
func (b *Broker) wait(id, principal string) (<-chan struct{}, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f, ok := b.byID[id]
	if !ok || f.principal != principal {
		return nil, false
	}
	return f.finished, true
}

// secureHeaders are on every answer of the two routes.
func secureHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	h.Set("X-Content-Type-Options", "nosniff")
}

func page(w http.ResponseWriter, status int, title, text string) {
	secureHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><meta charset=utf-8><title>%s</title><h1>%s</h1><p>%s</p><p><a href=\"/\">Back to mcphost</a></p>\n",
		html.EscapeString(title), html.EscapeString(title), html.EscapeString(text))
}

// ServeLaunch serves GET /oauth/launch/ID?k=KEY: a single-use redirect to
// the authorization server that sets the binding cookie.
func (b *Broker) ServeLaunch(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		page(w, http.StatusMethodNotAllowed, "Method not allowed", "The sign-in link is opened with GET.")
		return
	}
	id := strings.TrimPrefix(r.URL.Path, "/oauth/launch/")
	key := r.URL.Query().Get("k")
	b.mu.Lock()
	f, ok := b.byID[id]
	if !ok || key == "" {
		b.mu.Unlock()
		page(w, http.StatusNotFound, "Unknown sign-in", "This sign-in link is unknown or has expired. Start the sign-in again.")
		return
	}
	kh := hash(key)
	if subtle.ConstantTimeCompare(kh[:], f.keyHash[:]) != 1 {
		b.mu.Unlock()
		page(w, http.StatusNotFound, "Unknown sign-in", "This sign-in link is unknown or has expired. Start the sign-in again.")
		return
	}
	if f.st != FlowPending || b.now().After(f.expires) {
		b.mu.Unlock()
		page(w, http.StatusGone, "Sign-in link already used", "Each sign-in link works once. Start the sign-in again.")
		return
	}
	secret := randomText()
	f.cookieHash = hash(secret)
	f.st = FlowLaunched
	authURL := f.authURL
	b.mu.Unlock()

	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: f.id + "." + secret, Path: "/oauth/callback",
		MaxAge: int(FlowTTL / time.Second), HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: strings.HasPrefix(b.base(), "https://"),
	})
	secureHeaders(w)
	http.Redirect(w, r, authURL, http.StatusFound)
}

// ServeCallback serves GET /oauth/callback: the authorization server's
// redirect. It accepts the answer only for a known state whose flow was
// launched in this browser (the cookie), once.
func (b *Broker) ServeCallback(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		page(w, http.StatusMethodNotAllowed, "Method not allowed", "The authorization server redirects here with GET.")
		return
	}
	q := r.URL.Query()
	state := q.Get("state")
	b.mu.Lock()
	f, ok := b.byState[state]
	if !ok || state == "" {
		b.mu.Unlock()
		page(w, http.StatusBadRequest, "Unknown sign-in", "This answer does not belong to a sign-in in progress (wrong or expired state, or it was already used). Start the sign-in again.")
		return
	}
	c, err := r.Cookie(CookieName)
	ch := [32]byte{}
	cookieFlow, secret := "", ""
	if err == nil {
		cookieFlow, secret, _ = strings.Cut(c.Value, ".")
		ch = hash(secret)
	}
	if err != nil || cookieFlow != f.id || secret == "" || subtle.ConstantTimeCompare(ch[:], f.cookieHash[:]) != 1 || f.st != FlowLaunched {
		b.mu.Unlock()
		page(w, http.StatusBadRequest, "Sign-in started elsewhere", "This answer belongs to a sign-in that was not started from this browser. Start the sign-in again from mcphost.")
		return
	}
	if b.now().After(f.expires) {
		b.mu.Unlock()
		page(w, http.StatusGone, "Sign-in expired", "This sign-in took too long. Start it again.")
		return
	}
	// Single use: the state is gone once an answer is taken.
	delete(b.byState, state)
	res := callbackResult{code: q.Get("code"), state: state, iss: q.Get("iss")}
	if e := q.Get("error"); e != "" || res.code == "" {
		res.err = callbackError(q, f.expectedIssuer)
	}
	f.result <- res
	finished, server := f.finished, f.server
	b.mu.Unlock()

	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/oauth/callback", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode})
	t := time.NewTimer(callbackWait)
	defer t.Stop()
	select {
	case <-finished:
	case <-t.C:
		page(w, http.StatusAccepted, "Signing in", "mcphost is still finishing the sign-in to "+server+". You can close this page and look at the server's card.")
		return
	case <-r.Context().Done():
		return
	}
	b.mu.Lock()
	st, text := f.st, f.errText
	b.mu.Unlock()
	if st != FlowDone {
		page(w, http.StatusBadGateway, "Sign-in failed", "Signing in to "+server+" failed: "+text)
		return
	}
	secureHeaders(w)
	http.Redirect(w, r, "/#signin="+url.QueryEscape(server), http.StatusSeeOther)
}

// callbackError describes an error answer of the authorization server. Its
// error code and description are shown only when the answer's iss is the
// expected issuer or absent (RFC 9207: a mismatched answer is not acted on
// or displayed).
func callbackError(q url.Values, expectedIssuer string) error {
	if iss := q.Get("iss"); iss != "" && iss != expectedIssuer {
		return errors.New("the authorization server's answer names another issuer; it was ignored")
	}
	code := q.Get("error")
	if code == "" {
		return errors.New("the authorization server's answer has neither a code nor an error")
	}
	msg := "the authorization server refused: " + clip(code, 64)
	if d := q.Get("error_description"); d != "" {
		msg += ": " + clip(d, 200)
	}
	return errors.New(msg)
}

// clip bounds untrusted text shown to the user.
func clip(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
