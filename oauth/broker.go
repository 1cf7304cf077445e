package oauth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"html/template"
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
	// maxConfirmBody bounds the body of the confirmation's POST.
	maxConfirmBody = 4 << 10
)

// CookieName is the binding cookie: set by the start request of the
// starter's own browser or by the confirmation page, required by the
// launch's POST and by the callback. Over https it is __Host-mcphost_oauth
// (Path=/), so that no other host of the domain can set it.
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
	ID     string `json:"flowId"`
	Server string `json:"server"`
	// Principal is whose credential the sign-in stores: the principal who
	// started it, or "*" for a shared credential.
	Principal string    `json:"principal"`
	LaunchURL string    `json:"launchUrl,omitempty"`
	ExpiresAt time.Time `json:"expiresAt"`
	State     FlowState `json:"state"`
	Error     string    `json:"error,omitempty"`

	// BrowserCookie binds the launch URL to the browser that asked for
	// it: a browser that sends it back opens the URL without the
	// confirmation page. Only [Manager.StartSignIn] sets it, and only the
	// answer to the starter's own request may carry it (host/httpapi sets
	// it on the answer to POST /api/v1/servers/NAME/auth/start, which
	// needs the starter's bearer credential, so no other site can make a
	// browser ask). Never in JSON.
	BrowserCookie *http.Cookie `json:"-"`
}

// callbackResult is what came back on the redirect.
type callbackResult struct {
	code, state, iss string
	err              error
}

// flow is one pending sign-in.
type flow struct {
	id, state, server string
	principal         string // the credential's: a principal, or SharedPrincipal
	starter           string // who started it: the only principal who may follow it
	authURL           string
	expectedIssuer    string
	keyHash           [32]byte
	// startHash is the hash of the secret of the starter's browser cookie
	// (Flow.BrowserCookie), zero when none was given; cookieHash is the
	// one of the browser that launched the flow, which the callback needs.
	startHash, cookieHash [32]byte
	viaStarter            bool // launched by the starter's browser, without the confirmation page
	expires               time.Time
	st                    FlowState
	errText               string
	result                chan callbackResult // the callback's answer, buffered 1
	finished              chan struct{}       // closed when the exchange has ended
}

// Broker holds the pending sign-ins and serves /oauth/launch/ and
// /oauth/callback. Flows live in memory: a restart loses the open ones,
// and the user starts again.
//
// A launch URL is a bearer capability of whoever holds it, so the broker
// binds each launch to a browser: the starter's own (the cookie its start
// request got, [Flow.BrowserCookie]), or one whose user read a page naming
// the server and the principal the credential will be stored for and
// confirmed it (a POST from that page). A link sent to someone else
// therefore stops at that page instead of signing its sender in with the
// other person's account.
type Broker struct {
	base func() string // scheme://host[:port] of the daemon, the redirect's origin
	now  func() time.Time
	// mac keys the confirmation tokens of the confirmation pages.
	mac []byte

	mu      sync.Mutex
	byID    map[string]*flow
	byState map[string]*flow
}

func newBroker(base func() string) *Broker {
	return &Broker{
		base: func() string { return strings.TrimRight(base(), "/") }, now: time.Now, mac: []byte(rand.Text()),
		byID: map[string]*flow{}, byState: map[string]*flow{},
	}
}

// RedirectURL is the callback URL every authorization request names.
func (b *Broker) RedirectURL() string { return b.base() + "/oauth/callback" }

func randomText() string { return rand.Text() }

func hash(s string) [32]byte { return sha256.Sum256([]byte(s)) }

// open registers a flow of starter for the credential (server, principal)
// and the authorization URL the SDK built, and returns it with its launch
// key.
func (b *Broker) open(server, principal, starter, authURL, expectedIssuer string) (*flow, string, error) {
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
		id: "f_" + randomText()[:16], state: state, server: server, principal: principal, starter: starter,
		authURL: authURL, expectedIssuer: expectedIssuer,
		keyHash: hash(key), expires: b.now().Add(FlowTTL), st: FlowPending,
		result: make(chan callbackResult, 1), finished: make(chan struct{}),
	}
	b.byID[f.id] = f
	b.byState[state] = f
	return f, key, nil
}

// rekey gives an open, not yet launched flow a new launch key and starter
// (a second "Sign in" while the first is pending reuses its flow; the old
// link and browser binding stop working).
func (b *Broker) rekey(f *flow, starter string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if f.st != FlowPending || b.now().After(f.expires) {
		return "", false
	}
	key := randomText()
	f.keyHash, f.startHash, f.starter = hash(key), [32]byte{}, starter
	return key, true
}

// bindStarter returns the cookie that binds a pending flow to the browser
// of its starter (see Flow.BrowserCookie); nil when the flow is no longer
// pending.
func (b *Broker) bindStarter(id string) *http.Cookie {
	b.mu.Lock()
	defer b.mu.Unlock()
	f, ok := b.byID[id]
	if !ok || f.st != FlowPending {
		return nil
	}
	secret := randomText()
	f.startHash = hash(secret)
	return b.cookie(f.id + "." + secret)
}

// cookie returns the binding cookie with value ("" deletes it).
func (b *Broker) cookie(value string) *http.Cookie {
	c := &http.Cookie{
		Name: CookieName, Value: value, Path: "/oauth/",
		MaxAge: int(FlowTTL / time.Second), HttpOnly: true, SameSite: http.SameSiteLaxMode,
	}
	if strings.HasPrefix(b.base(), "https://") {
		c.Name, c.Path, c.Secure = "__Host-"+CookieName, "/", true
	}
	if value == "" {
		c.MaxAge = -1
	}
	return c
}

// readCookie returns the flow id and secret of the request's binding
// cookie ("" when it has none).
func (b *Broker) readCookie(r *http.Request) (id, secret string) {
	c, err := r.Cookie(b.cookie("").Name)
	if err != nil {
		return "", ""
	}
	id, secret, _ = strings.Cut(c.Value, ".")
	return id, secret
}

// confirmToken is the token of flow id's confirmation page for the
// browser whose cookie secret is secret.
func (b *Broker) confirmToken(id, secret string) string {
	m := hmac.New(sha256.New, b.mac)
	m.Write([]byte("confirm|" + id + "|" + secret))
	return hex.EncodeToString(m.Sum(nil))
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

// Get returns a flow principal started (ok false for a flow that does not
// exist or someone else started).
func (b *Broker) Get(id, principal string) (Flow, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f, ok := b.byID[id]
	if !ok || f.starter != principal {
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
	return Flow{ID: f.id, Server: f.server, Principal: f.principal, ExpiresAt: f.expires, State: f.st, Error: f.errText}
}

// wait returns the flow's channel that closes when it has ended.
func (b *Broker) wait(id, principal string) (<-chan struct{}, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f, ok := b.byID[id]
	if !ok || f.starter != principal {
		return nil, false
	}
	return f.finished, true
}

// secureHeaders are on every answer of the two routes. The pages are
// never framed: a framed confirmation page could be clicked through by a
// page that hides it.
func secureHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
}

func page(w http.ResponseWriter, status int, title, text string) {
	secureHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><meta charset=utf-8><title>%s</title><h1>%s</h1><p>%s</p><p><a href=\"/\">Back to mcphost</a></p>\n",
		html.EscapeString(title), html.EscapeString(title), html.EscapeString(text))
}

// confirmPage is the page a launch URL answers in a browser it is not
// bound to. html/template escapes every value.
var confirmPage = template.Must(template.New("confirm").Parse(`<!doctype html><meta charset=utf-8><title>Sign in to {{.Server}} for {{.For}}?</title>
<h1>Sign in to {{.Server}} for {{.For}}?</h1>
<p>{{.Stored}}</p>
<p><strong>Continue only if you started this sign-in yourself</strong>, in the mcphost WebShell or with <code>mcphost auth login {{.Server}}</code>. If someone sent you this link, close this page: continuing would give them your account at {{.ASHost}}.</p>
<form method="post" action="{{.Action}}"><input type="hidden" name="confirm" value="{{.Token}}"><button type="submit">Continue to {{.ASHost}}</button> <a href="/">Cancel</a></form>
`))

// confirmData is what the confirmation page of f shows, for the browser
// whose new cookie secret is secret; under b.mu.
func (b *Broker) confirmData(f *flow, key, secret string) map[string]string {
	asHost := f.authURL
	if u, err := url.Parse(f.authURL); err == nil {
		asHost = u.Host
	}
	d := map[string]string{
		"Server": f.server, "For": f.principal, "ASHost": asHost,
		"Stored": "The account you choose at " + asHost + " will be stored for the mcphost principal " + f.principal + ": whoever uses mcphost as " + f.principal + " acts with it.",
		"Action": "/oauth/launch/" + f.id + "?k=" + url.QueryEscape(key),
		"Token":  b.confirmToken(f.id, secret),
	}
	if f.principal == SharedPrincipal {
		d["For"] = "everyone (shared, started by " + f.starter + ")"
		d["Stored"] = "The account you choose at " + asHost + " will be stored as the shared credential of " + f.server + ": every principal that uses " + f.server + " acts with it. " + f.starter + " started this sign-in."
	}
	return d
}

// forWhom names whose credential f stores.
func (f *flow) forWhom() string {
	if f.principal == SharedPrincipal {
		return "its shared credential"
	}
	return f.principal
}

// done says what a successful sign-in of f stored.
func (f *flow) done() string {
	if f.principal == SharedPrincipal {
		return "Signed in to " + f.server + " as " + f.starter + "; the credential is stored as the shared credential of " + f.server + ", for every principal that uses it."
	}
	return "Signed in to " + f.server + " as " + f.principal + "; the credential is stored for " + f.principal + "."
}

// sameOrigin reports whether a browser's request comes from a page of the
// daemon itself. Sec-Fetch-Site, which no page can set, decides when the
// browser sends it; else Origin, when sent, must be the daemon's origin or
// name the request's own host ("null" is not). A request with neither is
// not a browser's; the cookie and the page's token still bind it.
func (b *Broker) sameOrigin(r *http.Request) bool {
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" {
		return s == "same-origin"
	}
	o := r.Header.Get("Origin")
	if o == "" || o == origin(b.base()) {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.Host == r.Host
}

// ServeLaunch serves /oauth/launch/ID?k=KEY, the single-use launch URL.
//
// GET in the browser the flow is bound to (the cookie of the starter's
// start request) launches the flow: a redirect to the authorization server.
// GET in any other browser answers a page that names the server and the
// principal the credential will be stored for, and binds that browser (a
// new cookie); nothing is launched. Its POST, from that page (same origin,
// the page's token, the cookie), launches the flow in that browser. Either
// way a flow is launched once.
func (b *Broker) ServeLaunch(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		page(w, http.StatusMethodNotAllowed, "Method not allowed", "The sign-in link is opened with GET.")
		return
	}
	id := strings.TrimPrefix(r.URL.Path, "/oauth/launch/")
	key := r.URL.Query().Get("k")
	token := ""
	if r.Method == http.MethodPost { // the confirmation; read before the lock is taken
		r.Body = http.MaxBytesReader(w, r.Body, maxConfirmBody)
		if err := r.ParseForm(); err == nil {
			token = r.PostForm.Get("confirm")
		}
	}
	b.mu.Lock()
	f, ok := b.byID[id]
	kh := hash(key)
	if !ok || key == "" || subtle.ConstantTimeCompare(kh[:], f.keyHash[:]) != 1 {
		b.mu.Unlock()
		page(w, http.StatusNotFound, "Unknown sign-in", "This sign-in link is unknown or has expired. Start the sign-in again.")
		return
	}
	if f.st != FlowPending || b.now().After(f.expires) {
		b.mu.Unlock()
		page(w, http.StatusGone, "Sign-in link already used", "Each sign-in link works once. Start the sign-in again.")
		return
	}
	cookieFlow, secret := b.readCookie(r)
	sh := hash(secret)
	bound := cookieFlow == f.id && secret != ""
	if r.Method == http.MethodGet {
		if bound && f.startHash != ([32]byte{}) && subtle.ConstantTimeCompare(sh[:], f.startHash[:]) == 1 {
			f.viaStarter = true
			b.launchLocked(w, r, f, sh)
			return
		}
		// Bind this browser (a new cookie) and ask. The flow does not
		// change: several browsers may be shown the page, and the first
		// to confirm launches it.
		secret := randomText()
		data := b.confirmData(f, key, secret)
		b.mu.Unlock()
		http.SetCookie(w, b.cookie(f.id+"."+secret))
		secureHeaders(w)
		// The form's POST must carry the page's Origin, which a browser
		// sends as "null" under no-referrer; same-origin still sends no
		// Referer (with the launch key) to another site.
		w.Header().Set("Referrer-Policy", "same-origin")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_ = confirmPage.Execute(w, data)
		return
	}
	// POST: the confirmation.
	want := b.confirmToken(f.id, secret)
	if !bound || !b.sameOrigin(r) || subtle.ConstantTimeCompare([]byte(token), []byte(want)) != 1 {
		b.mu.Unlock()
		page(w, http.StatusForbidden, "Sign-in not confirmed",
			"The confirmation did not come from the sign-in page in this browser (it came from another site, or the page is out of date). Open the sign-in link again and continue from its page.")
		return
	}
	f.viaStarter = false
	b.launchLocked(w, r, f, sh)
}

// launchLocked launches f in the browser whose cookie secret hashes to
// sh: the callback will need that cookie. It unlocks b.mu.
func (b *Broker) launchLocked(w http.ResponseWriter, r *http.Request, f *flow, sh [32]byte) {
	f.cookieHash = sh
	f.st = FlowLaunched
	authURL := f.authURL
	b.mu.Unlock()
	secureHeaders(w)
	status := http.StatusFound
	if r.Method == http.MethodPost {
		status = http.StatusSeeOther
	}
	http.Redirect(w, r, authURL, status)
}

// ServeCallback serves GET /oauth/callback: the authorization server's
// redirect. It accepts the answer only for a known state whose flow was
// launched in this browser (the cookie), once. Its page says whose
// credential was stored; a flow launched from the starter's own browser
// goes back to the WebShell instead (/#signin=SERVER&for=PRINCIPAL).
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
	cookieFlow, secret := b.readCookie(r)
	ch := hash(secret)
	if cookieFlow != f.id || secret == "" || subtle.ConstantTimeCompare(ch[:], f.cookieHash[:]) != 1 || f.st != FlowLaunched {
		why := "this browser did not open its sign-in link (its sign-in cookie is missing)"
		if cookieFlow != "" {
			why = "this browser's sign-in cookie belongs to another sign-in, or to an older page of this one"
		}
		text := "This answer belongs to the sign-in to " + f.server + " for " + f.forWhom() + ", but " + why + ". Nothing was stored. Start the sign-in again from mcphost, in the browser you will finish it in."
		b.mu.Unlock()
		page(w, http.StatusBadRequest, "Sign-in started elsewhere", text)
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
	finished, server, principal, whom, viaStarter, done := f.finished, f.server, f.principal, f.forWhom(), f.viaStarter, f.done()
	b.mu.Unlock()

	http.SetCookie(w, b.cookie(""))
	t := time.NewTimer(callbackWait)
	defer t.Stop()
	select {
	case <-finished:
	case <-t.C:
		page(w, http.StatusAccepted, "Signing in", "mcphost is still finishing the sign-in to "+server+" for "+whom+". You can close this page and look at the server's card.")
		return
	case <-r.Context().Done():
		return
	}
	b.mu.Lock()
	st, text := f.st, f.errText
	b.mu.Unlock()
	if st != FlowDone {
		page(w, http.StatusBadGateway, "Sign-in failed", "Signing in to "+server+" for "+whom+" failed; nothing was stored: "+text)
		return
	}
	if viaStarter {
		secureHeaders(w)
		http.Redirect(w, r, "/#signin="+url.QueryEscape(server)+"&for="+url.QueryEscape(principal), http.StatusSeeOther)
		return
	}
	page(w, http.StatusOK, "Signed in to "+server, done+" You can close this page.")
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
