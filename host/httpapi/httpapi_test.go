package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/confine"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/httpapi"
	"github.com/mcphost/mcphost/host/httpapi/webshell"
	"github.com/mcphost/mcphost/host/internal/identity"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/mcphost/mcphost/negotiate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const wellbehavedPkg = "github.com/mcphost/mcphost/testdata/servers/wellbehaved"

// Principals' tokens (≥ 16 characters, as the config loader requires).
const (
	aliceToken = "alice-token-0123456789abcdef"
	bobToken   = "bob-token-fedcba9876543210"
	wrongToken = "wrong-token-0000000000000000"
)

// waitBound bounds every wait; it only keeps a broken test from hanging and
// is never a timing assertion.
const waitBound = 60 * time.Second

func TestMain(m *testing.M) {
	confine.MaybeHelper() // the sandbox helper of the stdio servers the tests start
	httpapi.DisableDebugOutput()
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// stdioServer returns a server block with the defaults the loader fills in.
func stdioServer(name, command string) config.Server {
	return config.Server{
		Name:               name,
		Transport:          config.TransportStdio,
		Command:            command,
		VersionNegotiation: config.NegotiationLegacy,
		DiscoveryTimeout:   20 * time.Second,
		CallTimeout:        time.Minute,
		Enabled:            true,
	}
}

// testEnv is a running daemon: host, store and API on a real listener.
type testEnv struct {
	h      *host.Host
	port   int
	base   string // http://127.0.0.1:PORT
	client *http.Client
	// aliceWS and bobWS are the principals' WebShell credentials: requests
	// made with them have the origin "user", as the WebShell's do.
	aliceWS, bobWS string
}

// newEnv starts a host with one wellbehaved stdio server per name (default
// "fx"), principals alice and bob, a store in a temporary directory, and the
// API on 127.0.0.1:0. Everything is stopped at the end of the test.
func newEnv(t *testing.T, servers ...string) *testEnv {
	t.Helper()
	bin := testbin.Build(t, wellbehavedPkg)
	if len(servers) == 0 {
		servers = []string{"fx"}
	}
	var blocks []config.Server
	for _, s := range servers {
		blocks = append(blocks, stdioServer(s, bin))
	}
	return newEnvWith(t, blocks...)
}

// newEnvWith is newEnv with the given server blocks.
func newEnvWith(t *testing.T, blocks ...config.Server) *testEnv {
	t.Helper()
	cfg := &config.Config{Servers: blocks}
	return newEnvConfig(t, cfg)
}

// newEnvConfig is newEnvWith for a whole config (policies, plugins); the
// principals alice and bob are added unless cfg has principals (with
// aliceToken and bobToken), alice an admin unless cfg names the admins.
func newEnvConfig(t *testing.T, cfg *config.Config) *testEnv {
	t.Helper()
	return newEnvOptions(t, cfg, nil)
}

// newEnvOptions is newEnvConfig with more httpapi options, set by
// configure (when not nil) once the host exists.
func newEnvOptions(t *testing.T, cfg *config.Config, configure func(*host.Host, *httpapi.Options)) *testEnv {
	t.Helper()
	if cfg.Principals == nil {
		cfg.Principals = []config.Principal{
			{Name: "alice", Token: aliceToken, Groups: []string{"analysts"}},
			{Name: "bob", Token: bobToken},
		}
	}
	if cfg.Admins == nil {
		cfg.Admins = []string{"alice"}
	}
	blocks := cfg.Servers
	var servers []string
	for _, b := range blocks {
		servers = append(servers, b.Name)
	}

	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "mcphost.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(cfg, host.Options{Store: st})
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	apiOpts := httpapi.Options{
		Hosts:   []string{fmt.Sprintf("127.0.0.1:%d", port), fmt.Sprintf("localhost:%d", port)},
		Assets:  webshell.Assets(),
		Version: "test",
	}
	if configure != nil {
		configure(h, &apiOpts)
	}
	handler := httpapi.New(h, apiOpts)
	h.Start(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.Serve(ctx, ln, handler) }()
	e := &testEnv{
		h:      h,
		port:   port,
		base:   fmt.Sprintf("http://127.0.0.1:%d", port),
		client: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()},
	}
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		if err := h.Close(); err != nil {
			t.Errorf("host Close: %v", err)
		}
		if err := st.Close(); err != nil {
			t.Errorf("store Close: %v", err)
		}
		e.client.CloseIdleConnections()
	})

	wctx, wcancel := context.WithTimeout(context.Background(), waitBound)
	defer wcancel()
	if err := h.WaitSettled(wctx); err != nil {
		t.Fatalf("servers did not settle: %v", err)
	}
	for _, name := range servers {
		ss, err := h.Server(name)
		if err != nil {
			t.Fatal(err)
		}
		if ss.State != host.StateReady {
			t.Fatalf("server %s is %s, want ready (last error: %s)", name, ss.State, ss.LastError)
		}
	}
	for _, p := range cfg.Principals {
		switch {
		case p.APIOnly:
		case p.Token == aliceToken:
			e.aliceWS = e.signIn(t, aliceToken)
		case p.Token == bobToken:
			e.bobWS = e.signIn(t, bobToken)
		}
	}
	return e
}

// signIn exchanges token for its WebShell credential as the WebShell's page
// does (a same-origin POST).
func (e *testEnv) signIn(t *testing.T, token string) string {
	t.Helper()
	r := e.do(t, "POST", "/api/v1/webshell/session", token, "",
		withHeader("Origin", e.base), withHeader("Sec-Fetch-Site", "same-origin"))
	wantStatus(t, r, http.StatusOK)
	cred := decode[struct {
		Credential string `json:"credential"`
	}](t, r).Credential
	if !identity.IsWebShellCredential(cred) {
		t.Fatalf("sign-in answered credential %q", cred)
	}
	return cred
}

// reqOpt changes a request before it is sent.
type reqOpt func(*http.Request)

func withHost(h string) reqOpt { return func(r *http.Request) { r.Host = h } }

func withHeader(k, v string) reqOpt { return func(r *http.Request) { r.Header.Set(k, v) } }

func withoutContentType() reqOpt { return func(r *http.Request) { r.Header.Del("Content-Type") } }

// chunked hides the body's length, so it is sent with chunked encoding.
func chunked() reqOpt {
	return func(r *http.Request) {
		if r.Body != nil {
			r.Body = io.NopCloser(io.MultiReader(r.Body))
			r.ContentLength = -1
			r.GetBody = nil
		}
	}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// send makes one request. token "" sends no Authorization header; a
// non-empty body is sent as application/json unless an option changes it.
// It never touches a *testing.T, so goroutines may use it.
func (e *testEnv) send(ctx context.Context, method, path, token, body string, opts ...reqOpt) (response, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.base+path, rd)
	if err != nil {
		return response{}, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for _, o := range opts {
		o(req)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, err
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// do is send bounded by waitBound, failing the test on a transport error.
func (e *testEnv) do(t *testing.T, method, path, token, body string, opts ...reqOpt) response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	r, err := e.send(ctx, method, path, token, body, opts...)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

func decode[T any](t *testing.T, r response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("decoding %T from %q: %v", v, truncate(r.body), err)
	}
	return v
}

func truncate(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "…"
	}
	return string(b)
}

// wantStatus fails the test unless r has the status.
func wantStatus(t *testing.T, r response, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body: %s", r.status, status, truncate(r.body))
	}
}

type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// wantError checks an error answer: status, JSON content type and code.
func wantError(t *testing.T, r response, status int, code string) apiError {
	t.Helper()
	wantStatus(t, r, status)
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	e := decode[apiError](t, r)
	if e.Error.Code != code || e.Error.Message == "" {
		t.Errorf("error %+v, want code %q and a message", e.Error, code)
	}
	return e
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func (e *testEnv) createSession(t *testing.T, token, title string) store.Session {
	t.Helper()
	r := e.do(t, "POST", "/api/v1/sessions", token, mustJSON(map[string]string{"title": title}))
	wantStatus(t, r, http.StatusCreated)
	s := decode[store.Session](t, r)
	if !strings.HasPrefix(s.ID, "s_") {
		t.Fatalf("session id %q", s.ID)
	}
	return s
}

// callBody is the body of POST /api/v1/sessions/{id}/calls.
type callBody struct {
	Server    string `json:"server"`
	Tool      string `json:"tool"`
	Arguments any    `json:"arguments,omitempty"`
	CallID    string `json:"callId,omitempty"`
	Origin    string `json:"origin,omitempty"`
}

func callPath(sid string) string { return "/api/v1/sessions/" + sid + "/calls" }

func (e *testEnv) call(t *testing.T, token, sid string, b callBody) store.Entry {
	t.Helper()
	r := e.do(t, "POST", callPath(sid), token, mustJSON(b))
	wantStatus(t, r, http.StatusOK)
	return decode[store.Entry](t, r)
}

type entriesPage struct {
	Entries []store.Entry `json:"entries"`
	Next    *int64        `json:"next"`
}

func (e *testEnv) entries(t *testing.T, token, sid, query string) entriesPage {
	t.Helper()
	r := e.do(t, "GET", "/api/v1/sessions/"+sid+"/entries"+query, token, "")
	wantStatus(t, r, http.StatusOK)
	p := decode[entriesPage](t, r)
	if p.Entries == nil {
		t.Fatalf("entries is null, want a list: %s", r.body)
	}
	return p
}

func (e *testEnv) serverStatus(t *testing.T, name string) map[string]any {
	t.Helper()
	r := e.do(t, "GET", "/api/v1/servers", aliceToken, "")
	wantStatus(t, r, http.StatusOK)
	v := decode[struct {
		Servers []map[string]any `json:"servers"`
	}](t, r)
	for _, s := range v.Servers {
		if s["name"] == name {
			return s
		}
	}
	t.Fatalf("no server %q in %s", name, r.body)
	return nil
}

// ---- event stream ----

type sseEvent struct {
	Type string
	Data json.RawMessage
}

// eventStream reads GET /api/v1/events in the background.
type eventStream struct {
	events chan sseEvent
	seen   []sseEvent // every event received so far by next
}

// openEvents subscribes as token and returns once the stream's opening
// comment has arrived: from then on the subscription is live.
func (e *testEnv) openEvents(t *testing.T, token string) *eventStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", e.base+"/api/v1/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := e.client.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		t.Fatalf("events: status %d: %s", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("events Content-Type %q", ct)
	}
	s := &eventStream{events: make(chan sseEvent, 1024)}
	ready := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(s.events)
		var once sync.Once
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.Type != "" {
					select {
					case s.events <- ev:
					case <-ctx.Done():
						return
					}
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, ":"):
				once.Do(func() { close(ready) })
			case strings.HasPrefix(line, "event: "):
				ev.Type = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.Data = json.RawMessage(strings.TrimPrefix(line, "data: "))
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		resp.Body.Close()
		<-done
	})
	select {
	case <-ready:
	case <-done:
		t.Fatal("the event stream ended before its opening comment")
	case <-time.After(waitBound):
		t.Fatal("no opening comment on the event stream")
	}
	return s
}

// next returns the first event (after those already seen) matching pred,
// recording every event it reads.
func (s *eventStream) next(t *testing.T, what string, pred func(sseEvent) bool) sseEvent {
	t.Helper()
	timer := time.NewTimer(waitBound)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				t.Fatalf("the event stream ended while waiting for %s; seen: %v", what, s.types())
			}
			s.seen = append(s.seen, ev)
			if pred(ev) {
				return ev
			}
		case <-timer.C:
			t.Fatalf("no %s within %s; seen: %v", what, waitBound, s.types())
		}
	}
}

func (s *eventStream) types() []string {
	var out []string
	for _, ev := range s.seen {
		out = append(out, ev.Type+" "+truncate(ev.Data))
	}
	return out
}

// callEvent is the common shape of call_started, progress and entry data.
type callEvent struct {
	CallID    string  `json:"callId"`
	SessionID string  `json:"sessionId"`
	Server    string  `json:"server"`
	Tool      string  `json:"tool"`
	Status    string  `json:"status"`
	Progress  float64 `json:"progress"`
	Total     float64 `json:"total"`
	Message   string  `json:"message"`
}

func dataOf(t *testing.T, ev sseEvent) callEvent {
	t.Helper()
	var c callEvent
	if err := json.Unmarshal(ev.Data, &c); err != nil {
		t.Fatalf("event %s data %s: %v", ev.Type, ev.Data, err)
	}
	return c
}

func isEvent(typ, callID string) func(sseEvent) bool {
	return func(ev sseEvent) bool {
		if ev.Type != typ {
			return false
		}
		var c callEvent
		return json.Unmarshal(ev.Data, &c) == nil && c.CallID == callID
	}
}

// ---- tests ----

// TestAuthMatrix sends every authenticated route every hostile variation:
// missing, wrong, Basic and query-string credentials, a foreign Host header,
// and null or foreign origins; and the same routes with the daemon's own
// origin and host names, which must pass.
func TestAuthMatrix(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sid := e.createSession(t, aliceToken, "matrix").ID
	own := fmt.Sprintf("http://127.0.0.1:%d", e.port)
	ownLocalhost := fmt.Sprintf("http://localhost:%d", e.port)

	routes := []struct {
		name, method, path, body string
		want                     int
		stream                   bool
	}{
		{"me", "GET", "/api/v1/me", "", 200, false},
		{"servers", "GET", "/api/v1/servers", "", 200, false},
		{"tools", "GET", "/api/v1/tools", "", 200, false},
		{"prompts", "GET", "/api/v1/servers/fx/prompts", "", 200, false},
		{"resources", "GET", "/api/v1/servers/fx/resources", "", 200, false},
		{"create session", "POST", "/api/v1/sessions", `{"title":"m"}`, 201, false},
		{"sessions", "GET", "/api/v1/sessions", "", 200, false},
		{"call", "POST", callPath(sid), `{"server":"fx","tool":"echo","arguments":{"text":"m"}}`, 200, false},
		{"cancel", "DELETE", callPath(sid) + "/no-such-call", "", 404, false},
		{"entries", "GET", "/api/v1/sessions/" + sid + "/entries", "", 200, false},
		{"events", "GET", "/api/v1/events", "", 200, true},
		{"elicitations", "GET", "/api/v1/elicitations", "", 200, false},
		{"answer elicitation", "POST", "/api/v1/elicitations/e_0123456789abcdef", `{"action":"decline"}`, 404, false},
		{"metrics", "GET", "/metrics", "", 200, false},
		{"config", "GET", "/api/v1/config", "", 200, false},
		{"reload", "POST", "/api/v1/reload", "", 409, false}, // the embedded default: nothing to reload
	}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:"+aliceToken))
	variations := []struct {
		name     string
		token    string
		query    string
		opts     []reqOpt
		status   int    // 0: the route's own status
		code     string // error code when status is set
		wwwAuth  string // prefix of WWW-Authenticate, when it must be sent
		noStream bool
	}{
		{name: "no token", status: 401, code: "unauthorized", wwwAuth: "Bearer"},
		{name: "wrong token", token: wrongToken, status: 401, code: "unauthorized", wwwAuth: "Bearer"},
		{name: "basic auth", opts: []reqOpt{withHeader("Authorization", basic)}, status: 401, code: "unauthorized", wwwAuth: "Bearer"},
		{name: "bearer without token", opts: []reqOpt{withHeader("Authorization", "Bearer ")}, status: 401, code: "unauthorized", wwwAuth: "Bearer"},
		{name: "token in query", query: "token=" + aliceToken, status: 401, code: "unauthorized", wwwAuth: "Bearer"},
		{name: "access_token in query", query: "access_token=" + aliceToken, status: 401, code: "unauthorized", wwwAuth: "Bearer"},
		{name: "spoofed host", token: aliceToken, opts: []reqOpt{withHost(fmt.Sprintf("evil.example:%d", e.port))}, status: 403, code: "forbidden"},
		{name: "host without port", token: aliceToken, opts: []reqOpt{withHost("127.0.0.1")}, status: 403, code: "forbidden"},
		{name: "host with other port", token: aliceToken, opts: []reqOpt{withHost("127.0.0.1:1")}, status: 403, code: "forbidden"},
		{name: "origin null", token: aliceToken, opts: []reqOpt{withHeader("Origin", "null")}, status: 403, code: "forbidden"},
		{name: "foreign origin", token: aliceToken, opts: []reqOpt{withHeader("Origin", "http://evil.example")}, status: 403, code: "forbidden"},
		{name: "origin with other port", token: aliceToken, opts: []reqOpt{withHeader("Origin", "http://127.0.0.1:1")}, status: 403, code: "forbidden"},
		{name: "https origin", token: aliceToken, opts: []reqOpt{withHeader("Origin", "https://127.0.0.1:"+fmt.Sprint(e.port))}, status: 403, code: "forbidden"},
		{name: "origin null without token", opts: []reqOpt{withHeader("Origin", "null")}, status: 403, code: "forbidden"},
		{name: "own origin", token: aliceToken, opts: []reqOpt{withHeader("Origin", own)}},
		{name: "own origin localhost", token: aliceToken, opts: []reqOpt{withHeader("Origin", ownLocalhost), withHost(fmt.Sprintf("localhost:%d", e.port))}},
		{name: "host in upper case", token: aliceToken, opts: []reqOpt{withHost(fmt.Sprintf("LOCALHOST:%d", e.port))}},
		{name: "bearer scheme in lower case", opts: []reqOpt{withHeader("Authorization", "bearer "+aliceToken)}},
	}
	for _, rt := range routes {
		for _, v := range variations {
			t.Run(rt.name+"/"+v.name, func(t *testing.T) {
				path := rt.path
				if v.query != "" {
					path += "?" + v.query
				}
				want := rt.want
				if v.status != 0 {
					want = v.status
				}
				ctx, cancel := context.WithTimeout(context.Background(), waitBound)
				defer cancel()
				if rt.stream && v.status == 0 {
					// A live event stream: check the head, then hang up.
					req, err := http.NewRequestWithContext(ctx, rt.method, e.base+path, nil)
					if err != nil {
						t.Fatal(err)
					}
					if v.token != "" {
						req.Header.Set("Authorization", "Bearer "+v.token)
					}
					for _, o := range v.opts {
						o(req)
					}
					resp, err := e.client.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					if resp.StatusCode != want {
						t.Fatalf("status %d, want %d", resp.StatusCode, want)
					}
					return
				}
				r, err := e.send(ctx, rt.method, path, v.token, rt.body, v.opts...)
				if err != nil {
					t.Fatal(err)
				}
				if v.status == 0 {
					if r.status != want {
						t.Fatalf("status %d, want %d; body %s", r.status, want, truncate(r.body))
					}
				} else {
					wantError(t, r, want, v.code)
				}
				if v.wwwAuth != "" && !strings.HasPrefix(r.header.Get("WWW-Authenticate"), v.wwwAuth) {
					t.Errorf("WWW-Authenticate %q, want %s…", r.header.Get("WWW-Authenticate"), v.wwwAuth)
				}
				for k := range r.header {
					if strings.HasPrefix(strings.ToLower(k), "access-control-") {
						t.Errorf("CORS header %s: %q", k, r.header.Get(k))
					}
				}
				// The security headers apply to every response, refusals too.
				if got := r.header.Get("X-Content-Type-Options"); got != "nosniff" {
					t.Errorf("X-Content-Type-Options %q, want nosniff", got)
				}
			})
		}
	}

	// A wrong token's challenge says so.
	r := e.do(t, "GET", "/api/v1/me", wrongToken, "")
	if got := r.header.Get("WWW-Authenticate"); !strings.Contains(got, `error="invalid_token"`) {
		t.Errorf("WWW-Authenticate for a wrong token %q lacks error=\"invalid_token\"", got)
	}
}

// TestPublicRoutes covers the routes without authentication: /healthz, the
// WebShell, and the answers for unknown routes and methods.
func TestPublicRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	index, err := fs.ReadFile(webshell.Assets(), "index.html")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("healthz", func(t *testing.T) {
		r := e.do(t, "GET", "/healthz", "", "")
		wantStatus(t, r, 200)
		got := decode[map[string]any](t, r)
		if got["status"] != "ok" {
			t.Errorf("healthz %s", r.body)
		}
	})
	t.Run("readyz", func(t *testing.T) {
		r := e.do(t, "GET", "/readyz", "", "")
		wantStatus(t, r, 200)
		if got := decode[map[string]any](t, r); got["status"] != "ready" {
			t.Errorf("readyz %s", r.body)
		}
	})
	t.Run("probes answer any host", func(t *testing.T) {
		// A balancer's or Kubernetes' probe names the replica by its
		// address; the probes say only that it lives and takes calls.
		for _, path := range []string{"/healthz", "/readyz"} {
			wantStatus(t, e.do(t, "GET", path, "", "", withHost("10.0.0.7:7777")), 200)
		}
	})
	t.Run("API spoofed host", func(t *testing.T) {
		wantError(t, e.do(t, "GET", "/api/v1/servers", "", "", withHost("rebind.example")), 403, "forbidden")
	})
	t.Run("index", func(t *testing.T) {
		r := e.do(t, "GET", "/", "", "")
		wantStatus(t, r, 200)
		if !bytes.Equal(r.body, index) {
			t.Errorf("GET / is not index.html (%d bytes, want %d)", len(r.body), len(index))
		}
		if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Errorf("Content-Type %q", ct)
		}
		csp := r.header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("CSP %q lacks frame-ancestors 'none'", csp)
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "*") {
			t.Errorf("CSP %q allows inline code or any origin", csp)
		}
		if got := r.header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("X-Content-Type-Options %q", got)
		}
	})
	t.Run("index spoofed host", func(t *testing.T) {
		wantError(t, e.do(t, "GET", "/", "", "", withHost(fmt.Sprintf("evil.example:%d", e.port))), 403, "forbidden")
	})
	t.Run("asset", func(t *testing.T) {
		r := e.do(t, "GET", "/assets/style.css", "", "")
		wantStatus(t, r, 200)
		if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/css") {
			t.Errorf("Content-Type %q", ct)
		}
		if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("CSP %q", csp)
		}
	})
	for _, p := range []string{"/assets/../x", "/assets/../../etc/passwd", "/assets/%2e%2e/x", "/assets/", "/assets/nope.js", "/assets//etc/passwd"} {
		t.Run("asset "+p, func(t *testing.T) {
			wantError(t, e.do(t, "GET", p, "", ""), 404, "not_found")
		})
	}
	t.Run("unknown route", func(t *testing.T) {
		wantError(t, e.do(t, "GET", "/api/v1/nope", aliceToken, ""), 404, "not_found")
		wantError(t, e.do(t, "GET", "/nope", "", ""), 404, "not_found")
	})
	for _, m := range []struct{ method, path string }{
		{"PUT", "/api/v1/sessions"},
		{"DELETE", "/api/v1/me"},
		{"POST", "/healthz"},
		{"GET", "/api/v1/sessions/s_x/calls"},
		{"PATCH", "/api/v1/sessions/s_x/calls/c"},
	} {
		t.Run("wrong method "+m.method+" "+m.path, func(t *testing.T) {
			wantError(t, e.do(t, m.method, m.path, aliceToken, ""), 405, "method_not_allowed")
		})
	}
	t.Run("CORS preflight", func(t *testing.T) {
		r := e.do(t, "OPTIONS", "/api/v1/sessions", "", "",
			withHeader("Origin", "http://evil.example"), withHeader("Access-Control-Request-Method", "POST"))
		if r.status < 400 {
			t.Errorf("preflight status %d, want a refusal", r.status)
		}
		for k := range r.header {
			if strings.HasPrefix(strings.ToLower(k), "access-control-") {
				t.Errorf("CORS header %s: %q", k, r.header.Get(k))
			}
		}
	})
}

// TestCatalogRoutes checks the shapes of /me, /servers, /tools, prompts and
// resources.
func TestCatalogRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)

	t.Run("me", func(t *testing.T) {
		for _, tc := range []struct {
			token string
			want  map[string]any
		}{
			{aliceToken, map[string]any{"name": "alice", "groups": []any{"analysts"}, "origin": "api", "admin": true}},
			{bobToken, map[string]any{"name": "bob", "groups": []any{}, "origin": "api", "admin": false}},
			{e.aliceWS, map[string]any{"name": "alice", "groups": []any{"analysts"}, "origin": "user", "admin": true}},
		} {
			r := e.do(t, "GET", "/api/v1/me", tc.token, "")
			wantStatus(t, r, 200)
			if diff := cmp.Diff(tc.want, decode[map[string]any](t, r)); diff != "" {
				t.Errorf("me (-want +got):\n%s", diff)
			}
		}
	})
	t.Run("servers", func(t *testing.T) {
		s := e.serverStatus(t, "fx")
		want := map[string]any{
			"name": "fx", "transport": "stdio", "status": "ready", "era": "legacy",
			"protocolVersion": negotiate.LegacyVersion,
			"tools":           float64(8), "prompts": float64(1), "resources": float64(1), "resourceTemplates": float64(1),
			"restarts": float64(0),
		}
		got := map[string]any{}
		for k := range want {
			got[k] = s[k]
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("server status (-want +got):\n%s", diff)
		}
		if pid, _ := s["pid"].(float64); pid <= 0 {
			t.Errorf("pid %v", s["pid"])
		}
		if info, _ := s["serverInfo"].(map[string]any); info["name"] != "fixture" {
			t.Errorf("serverInfo %v", s["serverInfo"])
		}
		for _, k := range []string{"evidence", "capabilities", "since"} {
			if _, ok := s[k]; !ok {
				t.Errorf("server status lacks %q: %v", k, s)
			}
		}
	})
	t.Run("tools", func(t *testing.T) {
		r := e.do(t, "GET", "/api/v1/tools", aliceToken, "")
		wantStatus(t, r, 200)
		v := decode[struct {
			Tools []map[string]any `json:"tools"`
		}](t, r)
		var names []string
		var echo map[string]any
		for _, tl := range v.Tools {
			names = append(names, tl["qualifiedName"].(string))
			if tl["name"] == "echo" {
				echo = tl
			}
		}
		want := []string{"fx.add", "fx.big", "fx.cwd", "fx.echo", "fx.env", "fx.fail", "fx.grow", "fx.slow"}
		if diff := cmp.Diff(want, names); diff != "" {
			t.Errorf("tools (-want +got):\n%s", diff)
		}
		if echo["server"] != "fx" || echo["description"] == "" {
			t.Errorf("echo tool %v", echo)
		}
		schema, _ := echo["inputSchema"].(map[string]any)
		if props, _ := schema["properties"].(map[string]any); props["text"] == nil {
			t.Errorf("echo inputSchema %v lacks properties.text", echo["inputSchema"])
		}
	})
	t.Run("prompts", func(t *testing.T) {
		r := e.do(t, "GET", "/api/v1/servers/fx/prompts", aliceToken, "")
		wantStatus(t, r, 200)
		v := decode[struct {
			Prompts []*mcp.Prompt `json:"prompts"`
		}](t, r)
		if len(v.Prompts) != 1 || v.Prompts[0].Name != "greet" || len(v.Prompts[0].Arguments) != 1 || v.Prompts[0].Arguments[0].Name != "name" {
			t.Errorf("prompts %s", r.body)
		}
	})
	t.Run("resources", func(t *testing.T) {
		r := e.do(t, "GET", "/api/v1/servers/fx/resources", aliceToken, "")
		wantStatus(t, r, 200)
		v := decode[struct {
			Resources []*mcp.Resource         `json:"resources"`
			Templates []*mcp.ResourceTemplate `json:"resourceTemplates"`
		}](t, r)
		if len(v.Resources) != 1 || v.Resources[0].URI != "fixture://readme" || v.Resources[0].MIMEType != "text/plain" {
			t.Errorf("resources %s", r.body)
		}
		if len(v.Templates) != 1 || v.Templates[0].URITemplate != "fixture://items/{id}" {
			t.Errorf("resource templates %s", r.body)
		}
	})
	for _, p := range []string{"/api/v1/servers/nope/prompts", "/api/v1/servers/nope/resources"} {
		t.Run("unknown server "+p, func(t *testing.T) {
			wantError(t, e.do(t, "GET", p, aliceToken, ""), 404, "not_found")
		})
	}
}

// TestSessions covers creating and listing sessions, and the isolation of
// one principal's sessions from another's.
func TestSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)

	a1 := e.createSession(t, aliceToken, "  first  ")
	if a1.Title != "first" || a1.Entries != 0 || a1.CreatedAt.IsZero() || !a1.UpdatedAt.Equal(a1.CreatedAt) {
		t.Errorf("created session %+v", a1)
	}
	// An empty body is allowed and gives a default title.
	r := e.do(t, "POST", "/api/v1/sessions", aliceToken, "")
	wantStatus(t, r, 201)
	a2 := decode[store.Session](t, r)
	if !strings.HasPrefix(a2.Title, "Session ") {
		t.Errorf("default title %q", a2.Title)
	}
	list := func(token string) []string {
		t.Helper()
		r := e.do(t, "GET", "/api/v1/sessions", token, "")
		wantStatus(t, r, 200)
		v := decode[struct {
			Sessions []store.Session `json:"sessions"`
		}](t, r)
		if v.Sessions == nil {
			t.Fatalf("sessions is null: %s", r.body)
		}
		var ids []string
		for _, s := range v.Sessions {
			ids = append(ids, s.ID)
		}
		return ids
	}
	// A principal without sessions gets an empty list (list fails on null).
	if got := list(bobToken); len(got) != 0 {
		t.Errorf("bob sees sessions %v before creating any", got)
	}
	b1 := e.createSession(t, bobToken, "bob's")
	if diff := cmp.Diff([]string{a2.ID, a1.ID}, list(aliceToken)); diff != "" {
		t.Errorf("alice's sessions, newest first (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{b1.ID}, list(bobToken)); diff != "" {
		t.Errorf("bob's sessions (-want +got):\n%s", diff)
	}
	// A call moves its session to the top.
	e.call(t, aliceToken, a1.ID, callBody{Server: "fx", Tool: "echo", Arguments: map[string]any{"text": "x"}})
	if diff := cmp.Diff([]string{a1.ID, a2.ID}, list(aliceToken)); diff != "" {
		t.Errorf("alice's sessions after a call in the first (-want +got):\n%s", diff)
	}
}

// TestNotFoundIsolation checks that another principal's session answers
// exactly like a missing one, on every session route.
func TestNotFoundIsolation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bobs := e.createSession(t, bobToken, "bob's")
	e.call(t, bobToken, bobs.ID, callBody{Server: "fx", Tool: "echo", Arguments: map[string]any{"text": "secret"}})
	const missing = "s_0000000000000000"
	echo := `{"server":"fx","tool":"echo","arguments":{"text":"x"}}`

	for _, tc := range []struct {
		name, method, suffix, body string
	}{
		{"entries", "GET", "/entries", ""},
		{"entries page", "GET", "/entries?after=0&limit=1", ""},
		{"call", "POST", "/calls", echo},
		{"cancel", "DELETE", "/calls/c1", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other := e.do(t, tc.method, "/api/v1/sessions/"+bobs.ID+tc.suffix, aliceToken, tc.body)
			absent := e.do(t, tc.method, "/api/v1/sessions/"+missing+tc.suffix, aliceToken, tc.body)
			wantError(t, other, 404, "not_found")
			wantError(t, absent, 404, "not_found")
			if !bytes.Equal(other.body, absent.body) {
				t.Errorf("another principal's session %s differs from a missing one %s", other.body, absent.body)
			}
			if strings.Contains(string(other.body), bobs.ID) {
				t.Errorf("the answer names the session: %s", other.body)
			}
		})
	}
	// Nothing was recorded in bob's session by alice's attempts.
	if p := e.entries(t, bobToken, bobs.ID, ""); len(p.Entries) != 1 {
		t.Errorf("bob's session has %d entries, want 1", len(p.Entries))
	}
}

// directResult calls a tool of the wellbehaved fixture over its own stdio
// session and returns the CallToolResult as JSON, for comparison with what
// the daemon recorded.
func directResult(t *testing.T, tool string, args map[string]any) any {
	t.Helper()
	bin := testbin.Build(t, wellbehavedPkg)
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "httpapi-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin)}, &mcp.ClientSessionOptions{ProtocolVersion: negotiate.LegacyVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal([]byte(mustJSON(res)), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func jsonValue(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return v
}

// TestCalls covers POST …/calls: the entry for each outcome, the validation
// errors that record nothing, and the request body rules.
func TestCalls(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sid := e.createSession(t, aliceToken, "calls").ID

	t.Run("ok", func(t *testing.T) {
		args := map[string]any{"a": 2, "b": 40.5}
		r := e.do(t, "POST", callPath(sid), aliceToken, mustJSON(callBody{Server: "fx", Tool: "add", Arguments: args}))
		wantStatus(t, r, 200)
		raw := decode[map[string]any](t, r)
		for _, k := range []string{"id", "sessionId", "seq", "callId", "principal", "origin", "server", "tool",
			"arguments", "status", "result", "era", "protocolVersion", "startedAt", "durationMs", "display", "trail"} {
			if _, ok := raw[k]; !ok {
				t.Errorf("entry lacks %q: %s", k, r.body)
			}
		}
		if raw["display"] != nil || raw["trail"] != nil {
			t.Errorf("display %v trail %v, want null", raw["display"], raw["trail"])
		}
		en := decode[store.Entry](t, r)
		if !strings.HasPrefix(en.ID, "e_") || en.SessionID != sid || en.Seq != 1 || !strings.HasPrefix(en.CallID, "c_") ||
			en.Principal != "alice" || en.Origin != "api" || en.Server != "fx" || en.Tool != "add" ||
			en.Status != "ok" || en.Error != "" || en.Era != "legacy" || en.ProtocolVersion != negotiate.LegacyVersion ||
			en.StartedAt.IsZero() || en.DurationMs < 0 {
			t.Errorf("entry %s", r.body)
		}
		if diff := cmp.Diff(map[string]any{"a": 2.0, "b": 40.5}, jsonValue(t, en.Arguments)); diff != "" {
			t.Errorf("arguments (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(directResult(t, "add", args), jsonValue(t, en.Result)); diff != "" {
			t.Errorf("result differs from the tool's own answer (-direct +recorded):\n%s", diff)
		}
		// The stored entry is the one returned.
		p := e.entries(t, aliceToken, sid, "")
		if len(p.Entries) != 1 {
			t.Fatalf("%d entries, want 1", len(p.Entries))
		}
		if diff := cmp.Diff(en, p.Entries[0], entryCmp); diff != "" {
			t.Errorf("stored entry differs from the answer (-answer +stored):\n%s", diff)
		}
	})
	t.Run("echo with callId and origin", func(t *testing.T) {
		args := map[string]any{"text": "héllo\n<b>"}
		en := e.call(t, e.aliceWS, sid, callBody{Server: "fx", Tool: "echo", Arguments: args, CallID: "my-call", Origin: "user"})
		if en.CallID != "my-call" || en.Origin != "user" || en.Status != "ok" {
			t.Errorf("entry %+v", en)
		}
		if diff := cmp.Diff(directResult(t, "echo", args), jsonValue(t, en.Result)); diff != "" {
			t.Errorf("result (-direct +recorded):\n%s", diff)
		}
	})
	t.Run("arguments absent or null", func(t *testing.T) {
		for _, body := range []string{`{"server":"fx","tool":"cwd"}`, `{"server":"fx","tool":"cwd","arguments":null}`} {
			r := e.do(t, "POST", callPath(sid), aliceToken, body)
			wantStatus(t, r, 200)
			en := decode[store.Entry](t, r)
			if en.Status != "ok" || string(en.Arguments) != "{}" {
				t.Errorf("%s: status %s arguments %s", body, en.Status, en.Arguments)
			}
		}
	})
	t.Run("tool error", func(t *testing.T) {
		en := e.call(t, aliceToken, sid, callBody{Server: "fx", Tool: "fail", Arguments: map[string]any{}})
		if en.Status != "tool_error" || en.Error != "" {
			t.Errorf("status %q error %q, want tool_error and no error", en.Status, en.Error)
		}
		res, _ := jsonValue(t, en.Result).(map[string]any)
		if res["isError"] != true {
			t.Errorf("result %s, want isError true", en.Result)
		}
		if diff := cmp.Diff(directResult(t, "fail", nil), jsonValue(t, en.Result)); diff != "" {
			t.Errorf("result (-direct +recorded):\n%s", diff)
		}
	})

	before := len(e.entries(t, aliceToken, sid, "").Entries)
	huge := strings.Repeat("a", httpapi.DefaultMaxBody+100)
	rejects := []struct {
		name   string
		body   string
		opts   []reqOpt
		status int
		code   string
		msg    string // a substring of the message
	}{
		{"schema mismatch", `{"server":"fx","tool":"echo","arguments":{"text":5}}`, nil, 400, "invalid_arguments", "input schema of echo"},
		{"missing required argument", `{"server":"fx","tool":"echo","arguments":{}}`, nil, 400, "invalid_arguments", "text"},
		{"arguments not an object", `{"server":"fx","tool":"echo","arguments":["x"]}`, nil, 400, "invalid_arguments", "JSON object"},
		{"arguments a string", `{"server":"fx","tool":"echo","arguments":"{\"text\":\"x\"}"}`, nil, 400, "invalid_arguments", "JSON object"},
		{"unknown server", `{"server":"nope","tool":"echo","arguments":{"text":"x"}}`, nil, 404, "not_found", "nope"},
		{"unknown tool", `{"server":"fx","tool":"nope","arguments":{}}`, nil, 404, "not_found", "nope"},
		{"no server", `{"tool":"echo","arguments":{"text":"x"}}`, nil, 400, "bad_request", "server"},
		{"no tool", `{"server":"fx","arguments":{"text":"x"}}`, nil, 400, "bad_request", "tool"},
		{"bad origin", `{"server":"fx","tool":"echo","arguments":{"text":"x"},"origin":"robot"}`, nil, 400, "bad_request", "origin"},
		{"callId too long", mustJSON(callBody{Server: "fx", Tool: "echo", Arguments: map[string]any{"text": "x"}, CallID: strings.Repeat("c", 129)}), nil, 400, "", "callId"},
		{"malformed JSON", `{"server":"fx","tool":`, nil, 400, "bad_request", ""},
		{"unknown field", `{"server":"fx","tool":"echo","arguments":{"text":"x"},"extra":1}`, nil, 400, "bad_request", "extra"},
		{"trailing value", `{"server":"fx","tool":"echo","arguments":{"text":"x"}} {}`, nil, 400, "bad_request", ""},
		{"trailing garbage", `{"server":"fx","tool":"echo","arguments":{"text":"x"}}x`, nil, 400, "bad_request", ""},
		{"trailing bracket", `{"server":"fx","tool":"echo","arguments":{"text":"x"}}]`, nil, 400, "bad_request", ""},
		{"not an object", `["fx","echo"]`, nil, 400, "bad_request", ""},
		{"empty body", ``, nil, 400, "bad_request", ""},
		{"too large", `{"server":"fx","tool":"echo","arguments":{"text":"` + huge + `"}}`, nil, 413, "too_large", ""},
		{"too large chunked", `{"server":"fx","tool":"echo","arguments":{"text":"` + huge + `"}}`, []reqOpt{chunked()}, 413, "too_large", ""},
		{"chunked", `{"server":"fx","tool":"nope","arguments":{}}`, []reqOpt{chunked()}, 404, "not_found", "nope"},
	}
	for _, tc := range rejects {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(t, "POST", callPath(sid), aliceToken, tc.body, tc.opts...)
			wantStatus(t, r, tc.status)
			ae := decode[apiError](t, r)
			if tc.code != "" && ae.Error.Code != tc.code {
				t.Errorf("code %q, want %q (%s)", ae.Error.Code, tc.code, ae.Error.Message)
			}
			if !strings.Contains(ae.Error.Message, tc.msg) {
				t.Errorf("message %q lacks %q", ae.Error.Message, tc.msg)
			}
		})
	}
	// Nothing of the rejected calls was recorded.
	if got := len(e.entries(t, aliceToken, sid, "").Entries); got != before {
		t.Errorf("%d entries after the rejected calls, want %d", got, before)
	}

	t.Run("schema mismatch records nothing", func(t *testing.T) {
		fresh := e.createSession(t, aliceToken, "fresh").ID
		r := e.do(t, "POST", callPath(fresh), aliceToken, `{"server":"fx","tool":"echo","arguments":{"text":5}}`)
		ae := wantError(t, r, 400, "invalid_arguments")
		if !strings.Contains(ae.Error.Message, "text") {
			t.Errorf("message %q does not name the property", ae.Error.Message)
		}
		if p := e.entries(t, aliceToken, fresh, ""); len(p.Entries) != 0 || p.Next != nil {
			t.Errorf("entries %+v, want none", p)
		}
	})
	t.Run("session body rules", func(t *testing.T) {
		for _, tc := range []struct {
			name, body string
			status     int
			code       string
		}{
			{"malformed", `{"title":`, 400, "bad_request"},
			{"unknown field", `{"title":"x","color":"red"}`, 400, "bad_request"},
			{"trailing data", `{"title":"x"} {"title":"y"}`, 400, "bad_request"},
			{"wrong type", `{"title":5}`, 400, "bad_request"},
			{"too large", `{"title":"` + huge + `"}`, 413, "too_large"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				wantError(t, e.do(t, "POST", "/api/v1/sessions", aliceToken, tc.body), tc.status, tc.code)
			})
		}
		// Just under the limit is accepted (and the title is cut).
		r := e.do(t, "POST", "/api/v1/sessions", aliceToken, `{"title":"`+strings.Repeat("t", httpapi.DefaultMaxBody-20)+`"}`)
		wantStatus(t, r, 201)
		if s := decode[store.Session](t, r); len([]rune(s.Title)) != 200 {
			t.Errorf("title of %d runes, want 200", len([]rune(s.Title)))
		}
	})
}

// TestRequestContentType: the contract says request bodies must be JSON sent
// as Content-Type: application/json; a body with another type (the
// "simple request" a cross-site form can send without a CORS preflight) is
// refused with 415 unsupported_media_type, and a call made that way records
// nothing.
func TestRequestContentType(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sid := e.createSession(t, aliceToken, "ct").ID
	echo := `{"server":"fx","tool":"echo","arguments":{"text":"x"}}`
	for _, tc := range []struct {
		name, path, body string
		opts             []reqOpt
	}{
		{"call as text/plain", callPath(sid), echo, []reqOpt{withHeader("Content-Type", "text/plain")}},
		{"call as form", callPath(sid), echo, []reqOpt{withHeader("Content-Type", "application/x-www-form-urlencoded")}},
		{"call without type", callPath(sid), echo, []reqOpt{withoutContentType()}},
		{"session as text/plain", "/api/v1/sessions", `{"title":"x"}`, []reqOpt{withHeader("Content-Type", "text/plain")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, e.do(t, "POST", tc.path, aliceToken, tc.body, tc.opts...), 415, "unsupported_media_type")
		})
	}
	// With parameters it is still JSON.
	r := e.do(t, "POST", callPath(sid), aliceToken, echo, withHeader("Content-Type", "application/json; charset=utf-8"))
	wantStatus(t, r, 200)
	if p := e.entries(t, aliceToken, sid, ""); len(p.Entries) != 1 {
		t.Errorf("%d entries, want only the one sent as application/json", len(p.Entries))
	}
}

// entryCmp compares entries as the API shows them: times by instant, JSON
// by value.
var entryCmp = cmp.Options{
	cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) }),
	cmp.Comparer(func(a, b json.RawMessage) bool {
		var va, vb any
		if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
			return bytes.Equal(a, b)
		}
		return cmp.Equal(va, vb)
	}),
}

// TestEntriesPagination walks a transcript with after/limit/next.
func TestEntriesPagination(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sid := e.createSession(t, aliceToken, "pages").ID
	var want []string
	for i := range 5 {
		en := e.call(t, aliceToken, sid, callBody{Server: "fx", Tool: "echo", Arguments: map[string]any{"text": fmt.Sprint(i)}})
		if en.Seq != int64(i+1) {
			t.Errorf("call %d has seq %d", i, en.Seq)
		}
		want = append(want, en.ID)
	}
	ids := func(p entriesPage) []string {
		var out []string
		for _, en := range p.Entries {
			out = append(out, en.ID)
		}
		return out
	}
	ptr := func(n int64) *int64 { return &n }

	all := e.entries(t, aliceToken, sid, "")
	if diff := cmp.Diff(want, ids(all)); diff != "" || all.Next != nil {
		t.Errorf("default page (-want +got):\n%s next %v", diff, all.Next)
	}
	for _, tc := range []struct {
		query string
		want  []string
		next  *int64
	}{
		{"?limit=2", want[0:2], ptr(2)},
		{"?after=2&limit=2", want[2:4], ptr(4)},
		{"?after=4&limit=2", want[4:5], nil},
		{"?after=3", want[3:5], nil},
		{"?after=5", nil, nil},
		{"?after=99&limit=500", nil, nil},
		{"?limit=5", want, nil},
		{"?limit=4", want[0:4], ptr(4)},
	} {
		t.Run(tc.query, func(t *testing.T) {
			p := e.entries(t, aliceToken, sid, tc.query)
			if diff := cmp.Diff(tc.want, ids(p)); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.next, p.Next); diff != "" {
				t.Errorf("next (-want +got):\n%s", diff)
			}
		})
	}
	// Following next from the start visits every entry once.
	var got []string
	q := "?limit=2"
	for range 10 {
		p := e.entries(t, aliceToken, sid, q)
		got = append(got, ids(p)...)
		if p.Next == nil {
			break
		}
		q = fmt.Sprintf("?limit=2&after=%d", *p.Next)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("walk (-want +got):\n%s", diff)
	}
	for _, q := range []string{"?limit=0", "?limit=501", "?limit=-1", "?limit=x", "?after=-1", "?after=x", "?limit=1.5"} {
		t.Run("bad "+q, func(t *testing.T) {
			wantError(t, e.do(t, "GET", "/api/v1/sessions/"+sid+"/entries"+q, aliceToken, ""), 400, "bad_request")
		})
	}
}

// TestCancel cancels a running slow call with DELETE, and checks the
// refusals around it: unknown callId, another principal, duplicate callId.
func TestCancel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sid := e.createSession(t, aliceToken, "cancel").ID
	events := e.openEvents(t, aliceToken)

	const callID = "c-test-1"
	type result struct {
		r   response
		err error
	}
	posted := make(chan result, 1)
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	go func() {
		r, err := e.send(ctx, "POST", callPath(sid), aliceToken,
			mustJSON(callBody{Server: "fx", Tool: "slow", Arguments: map[string]any{"ms": 600000}, CallID: callID}))
		posted <- result{r, err}
	}()
	started := dataOf(t, events.next(t, "call_started of "+callID, isEvent("call_started", callID)))
	if started.SessionID != sid || started.Server != "fx" || started.Tool != "slow" {
		t.Errorf("call_started %+v", started)
	}

	del := func(token, s, id string) response {
		return e.do(t, "DELETE", callPath(s)+"/"+id, token, "")
	}
	// Not the owner: 404, like a call that does not exist.
	bobSid := e.createSession(t, bobToken, "bob's").ID
	notOwner := del(bobToken, sid, callID)
	wantError(t, notOwner, 404, "not_found")
	wantError(t, del(bobToken, bobSid, callID), 404, "not_found")
	unknown := del(aliceToken, sid, "c-unknown")
	wantError(t, unknown, 404, "not_found")
	if !bytes.Equal(notOwner.body, unknown.body) {
		t.Errorf("another principal's cancel %s differs from an unknown call's %s", notOwner.body, unknown.body)
	}
	// The right callId in another session of the same principal: 404.
	otherSid := e.createSession(t, aliceToken, "other").ID
	wantError(t, del(aliceToken, otherSid, callID), 404, "not_found")
	// A second call with the running callId: 409, and nothing recorded.
	dup := e.do(t, "POST", callPath(sid), aliceToken, mustJSON(callBody{Server: "fx", Tool: "echo", Arguments: map[string]any{"text": "x"}, CallID: callID}))
	wantError(t, dup, 409, "conflict")

	r := del(aliceToken, sid, callID)
	wantStatus(t, r, 202)
	if diff := cmp.Diff(map[string]any{"cancelled": true}, decode[map[string]any](t, r)); diff != "" {
		t.Errorf("cancel answer (-want +got):\n%s", diff)
	}
	var res result
	select {
	case res = <-posted:
	case <-time.After(waitBound):
		t.Fatal("the cancelled call did not return")
	}
	if res.err != nil {
		t.Fatal(res.err)
	}
	wantStatus(t, res.r, 200)
	en := decode[store.Entry](t, res.r)
	if en.Status != "cancelled" || en.CallID != callID || en.Error == "" || en.SessionID != sid {
		t.Errorf("entry %s, want status cancelled with an error", res.r.body)
	}
	evEntry := dataOf(t, events.next(t, "entry of "+callID, isEvent("entry", callID)))
	if evEntry.Status != "cancelled" {
		t.Errorf("entry event status %q", evEntry.Status)
	}
	// No longer running.
	wantError(t, del(aliceToken, sid, callID), 404, "not_found")
	p := e.entries(t, aliceToken, sid, "")
	if len(p.Entries) != 1 || p.Entries[0].ID != en.ID {
		t.Errorf("entries %+v, want only the cancelled call", p.Entries)
	}
	// The callId is free again.
	if again := e.call(t, aliceToken, sid, callBody{Server: "fx", Tool: "echo", Arguments: map[string]any{"text": "x"}, CallID: callID}); again.Status != "ok" {
		t.Errorf("reusing the callId: %+v", again)
	}
	m := string(e.do(t, "GET", "/metrics", aliceToken, "").body)
	if !strings.Contains(m, `mcphost_tool_calls_total{server="fx",status="cancelled"} 1`+"\n") {
		t.Errorf("metrics lack the cancelled call:\n%s", m)
	}
}

// TestCallIDsArePerPrincipal: callIds are chosen by clients, so one
// principal's running call must not make another principal's call with the
// same callId fail with 409 — that would tell bob which callIds alice is
// running and let him block hers.
func TestCallIDsArePerPrincipal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sid := e.createSession(t, aliceToken, "alice").ID
	bobSid := e.createSession(t, bobToken, "bob").ID
	events := e.openEvents(t, aliceToken)

	const callID = "shared-call-id"
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	posted := make(chan error, 1)
	go func() {
		_, err := e.send(ctx, "POST", callPath(sid), aliceToken,
			mustJSON(callBody{Server: "fx", Tool: "slow", Arguments: map[string]any{"ms": 600000}, CallID: callID}))
		posted <- err
	}()
	events.next(t, "call_started", isEvent("call_started", callID))
	defer func() {
		e.do(t, "DELETE", callPath(sid)+"/"+callID, aliceToken, "")
		<-posted
	}()

	r := e.do(t, "POST", callPath(bobSid), bobToken, mustJSON(callBody{Server: "fx", Tool: "echo", Arguments: map[string]any{"text": "x"}, CallID: callID}))
	if r.status != 200 {
		t.Errorf("bob's call with a callId alice is using: status %d %s, want 200", r.status, r.body)
	}
}

// TestServerDiesMidCall kills a stdio server while a call to it runs: the
// call answers 200 with an entry of status "error", the server is reported
// failed, and later calls to it are 503.
func TestServerDiesMidCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "fx", "doomed")
	sid := e.createSession(t, aliceToken, "doomed").ID
	events := e.openEvents(t, aliceToken)
	pid := int(e.serverStatus(t, "doomed")["pid"].(float64))

	const callID = "c-doomed"
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	type result struct {
		r   response
		err error
	}
	posted := make(chan result, 1)
	go func() {
		r, err := e.send(ctx, "POST", callPath(sid), aliceToken,
			mustJSON(callBody{Server: "doomed", Tool: "slow", Arguments: map[string]any{"ms": 600000}, CallID: callID}))
		posted <- result{r, err}
	}()
	// A progress notification means the server is running the tool.
	pr := dataOf(t, events.next(t, "progress of "+callID, isEvent("progress", callID)))
	if pr.SessionID != sid || pr.Total != 600000 || pr.Message == "" {
		t.Errorf("progress %+v", pr)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var res result
	select {
	case res = <-posted:
	case <-time.After(waitBound):
		t.Fatal("the call to the killed server did not return")
	}
	if res.err != nil {
		t.Fatal(res.err)
	}
	wantStatus(t, res.r, 200)
	raw := decode[map[string]any](t, res.r)
	if raw["status"] != "error" || raw["error"] == "" || raw["error"] == nil || raw["result"] != nil {
		t.Errorf("entry %s, want status error with a message and a null result", res.r.body)
	}
	events.next(t, "server event: doomed failed", func(ev sseEvent) bool {
		var s map[string]any
		return ev.Type == "server" && json.Unmarshal(ev.Data, &s) == nil && s["name"] == "doomed" && s["status"] == "failed"
	})
	wantError(t, e.do(t, "POST", callPath(sid), aliceToken, `{"server":"doomed","tool":"echo","arguments":{"text":"x"}}`), 503, "not_ready")
	wantError(t, e.do(t, "GET", "/api/v1/servers/doomed/prompts", aliceToken, ""), 503, "not_ready")
	wantError(t, e.do(t, "GET", "/api/v1/servers/doomed/resources", aliceToken, ""), 503, "not_ready")
	if p := e.entries(t, aliceToken, sid, ""); len(p.Entries) != 1 || p.Entries[0].Status != "error" {
		t.Errorf("entries %+v, want the one failed call", p.Entries)
	}
	// The other server is unaffected, and /tools lists only ready servers.
	e.call(t, aliceToken, sid, callBody{Server: "fx", Tool: "echo", Arguments: map[string]any{"text": "still here"}})
	r := e.do(t, "GET", "/api/v1/tools", aliceToken, "")
	if strings.Contains(string(r.body), `"doomed"`) {
		t.Errorf("/tools lists the failed server: %s", truncate(r.body))
	}
	m := string(e.do(t, "GET", "/metrics", aliceToken, "").body)
	for _, want := range []string{`mcphost_tool_calls_total{server="doomed",status="error"} 1`, `mcphost_server_up{server="doomed"} 0`, `mcphost_server_up{server="fx"} 1`} {
		if !strings.Contains(m, want+"\n") {
			t.Errorf("metrics lack %s:\n%s", want, m)
		}
	}
}

// TestEvents checks that a principal's stream carries its own call events
// (call_started, progress, entry) and every server event, and none of
// another principal's call events.
func TestEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice := e.openEvents(t, aliceToken)
	bob := e.openEvents(t, bobToken)
	aliceSid := e.createSession(t, aliceToken, "alice").ID
	bobSid := e.createSession(t, bobToken, "bob").ID

	// bob's call completes (and its events are published) before alice's
	// starts, so any leak would reach alice's stream before her own events.
	bobEntry := e.call(t, bobToken, bobSid, callBody{Server: "fx", Tool: "echo", Arguments: map[string]any{"text": "bob"}, CallID: "bob-1"})
	aliceEntry := e.call(t, aliceToken, aliceSid, callBody{Server: "fx", Tool: "slow", Arguments: map[string]any{"ms": 300}, CallID: "alice-slow"})
	if aliceEntry.Status != "ok" {
		t.Fatalf("slow call %+v", aliceEntry)
	}

	st := dataOf(t, alice.next(t, "call_started", isEvent("call_started", "alice-slow")))
	if diff := cmp.Diff(callEvent{CallID: "alice-slow", SessionID: aliceSid, Server: "fx", Tool: "slow"}, st); diff != "" {
		t.Errorf("call_started (-want +got):\n%s", diff)
	}
	pr := dataOf(t, alice.next(t, "progress", isEvent("progress", "alice-slow")))
	if pr.SessionID != aliceSid || pr.Total != 300 || pr.Progress <= 0 || pr.Message == "" {
		t.Errorf("progress %+v", pr)
	}
	ev := alice.next(t, "entry", isEvent("entry", "alice-slow"))
	var got store.Entry
	if err := json.Unmarshal(ev.Data, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(aliceEntry, got, entryCmp); diff != "" {
		t.Errorf("entry event differs from the POST answer (-answer +event):\n%s", diff)
	}

	bob.next(t, "bob's entry", isEvent("entry", "bob-1"))
	bobStarted := 0
	for _, ev := range bob.seen {
		if isEvent("call_started", "bob-1")(ev) {
			bobStarted++
		}
	}
	if bobStarted != 1 {
		t.Errorf("bob saw %d call_started for his call, want 1", bobStarted)
	}

	// A server event reaches both: grow makes the fixture announce a new
	// tool, and the host reports the refreshed catalog.
	e.call(t, aliceToken, aliceSid, callBody{Server: "fx", Tool: "grow", Arguments: map[string]any{"name": "grown"}, CallID: "alice-grow"})
	grown := func(ev sseEvent) bool {
		var s map[string]any
		return ev.Type == "server" && json.Unmarshal(ev.Data, &s) == nil && s["name"] == "fx" && s["tools"] == float64(9)
	}
	alice.next(t, "server event with 9 tools", grown)
	bob.next(t, "server event with 9 tools", grown)
	// Whatever alice did was published before bob's next call's entry.
	e.call(t, bobToken, bobSid, callBody{Server: "fx", Tool: "echo", Arguments: map[string]any{"text": "bob"}, CallID: "bob-2"})
	bob.next(t, "bob's second entry", isEvent("entry", "bob-2"))

	for _, ev := range alice.seen {
		if strings.Contains(string(ev.Data), "bob-1") || strings.Contains(string(ev.Data), bobSid) || strings.Contains(string(ev.Data), bobEntry.ID) {
			t.Errorf("alice received bob's event %s %s", ev.Type, ev.Data)
		}
	}
	for _, ev := range bob.seen {
		if strings.Contains(string(ev.Data), "alice-") || strings.Contains(string(ev.Data), aliceSid) {
			t.Errorf("bob received alice's event %s %s", ev.Type, truncate(ev.Data))
		}
	}
}

// TestMetrics covers /metrics: authentication and the call counters.
func TestMetrics(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	wantError(t, e.do(t, "GET", "/metrics", "", ""), 401, "unauthorized")
	sid := e.createSession(t, aliceToken, "m").ID
	e.call(t, aliceToken, sid, callBody{Server: "fx", Tool: "echo", Arguments: map[string]any{"text": "x"}})
	e.call(t, aliceToken, sid, callBody{Server: "fx", Tool: "echo", Arguments: map[string]any{"text": "y"}})
	e.call(t, bobToken, e.createSession(t, bobToken, "b").ID, callBody{Server: "fx", Tool: "fail"})
	r := e.do(t, "GET", "/metrics", aliceToken, "")
	wantStatus(t, r, 200)
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q", ct)
	}
	m := string(r.body)
	for _, want := range []string{
		`mcphost_tool_calls_total{server="fx",status="ok"} 2`,
		`mcphost_tool_calls_total{server="fx",status="tool_error"} 1`,
		`mcphost_tool_call_duration_seconds_count{server="fx"} 3`,
		`mcphost_server_up{server="fx"} 1`,
		`mcphost_server_tools{server="fx"} 8`,
		`mcphost_event_subscribers_dropped_total 0`,
	} {
		if !strings.Contains(m, want+"\n") {
			t.Errorf("metrics lack %s:\n%s", want, m)
		}
	}
	// The process's own gauges, which a load tool reads of a daemon in
	// another process; the store's round trips only on PostgreSQL.
	for _, re := range []string{`(?m)^go_goroutines [1-9][0-9]*$`, `(?m)^go_heap_live_bytes [1-9][0-9]*$`} {
		if !regexp.MustCompile(re).MatchString(m) {
			t.Errorf("metrics lack %s:\n%s", re, m)
		}
	}
	if strings.Contains(m, "mcphost_store_round_trips_total") {
		t.Errorf("metrics of a SQLite store count PostgreSQL round trips:\n%s", m)
	}
	// Rejected calls are not counted.
	e.do(t, "POST", callPath(sid), aliceToken, `{"server":"fx","tool":"echo","arguments":{"text":5}}`)
	if m := string(e.do(t, "GET", "/metrics", aliceToken, "").body); !strings.Contains(m, `mcphost_tool_call_duration_seconds_count{server="fx"} 3`+"\n") {
		t.Errorf("a rejected call was counted:\n%s", m)
	}
}

// TestShutdownEndsEventStreams: a cancelled Serve ends open event streams
// and returns (the environment's cleanup would hang otherwise); here the
// stream's end is observed directly.
func TestShutdownEndsEventStreams(t *testing.T) {
	t.Parallel()
	bin := testbin.Build(t, wellbehavedPkg)
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := &config.Config{
		Principals: []config.Principal{{Name: "alice", Token: aliceToken}},
		Servers:    []config.Server{stdioServer("fx", bin)},
	}
	h, err := host.New(cfg, host.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- h.Serve(ctx, ln, httpapi.New(h, httpapi.Options{Hosts: []string{addr}})) }()

	rctx, rcancel := context.WithTimeout(context.Background(), waitBound)
	defer rcancel()
	req, _ := http.NewRequestWithContext(rctx, "GET", "http://"+addr+"/api/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, ":") {
		t.Fatalf("first line %q, %v", line, err)
	}
	cancel()
	if _, err := io.Copy(io.Discard, br); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("reading the stream to its end: %v", err)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(waitBound):
		t.Fatal("Serve did not return")
	}
}

// TestClientGoneCancels: a caller that hangs up during a call cancels it,
// and the call is still recorded, as cancelled.
func TestClientGoneCancels(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sid := e.createSession(t, aliceToken, "gone").ID
	events := e.openEvents(t, aliceToken)

	const callID = "c-gone"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	posted := make(chan error, 1)
	go func() {
		_, err := e.send(ctx, "POST", callPath(sid), aliceToken,
			mustJSON(callBody{Server: "fx", Tool: "slow", Arguments: map[string]any{"ms": 600000}, CallID: callID}))
		posted <- err
	}()
	events.next(t, "progress of "+callID, isEvent("progress", callID))
	cancel()
	if err := <-posted; !errors.Is(err, context.Canceled) {
		t.Errorf("POST after hanging up: %v, want context.Canceled", err)
	}
	ev := dataOf(t, events.next(t, "entry of "+callID, isEvent("entry", callID)))
	if ev.Status != "cancelled" {
		t.Errorf("entry status %q, want cancelled", ev.Status)
	}
	p := e.entries(t, aliceToken, sid, "")
	if len(p.Entries) != 1 || p.Entries[0].Status != "cancelled" || p.Entries[0].CallID != callID {
		t.Errorf("entries %+v, want the cancelled call", p.Entries)
	}
}
