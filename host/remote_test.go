package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/fixture"
	"github.com/mcphost/mcphost/negotiate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// remoteWait bounds every wait of the remote tests that has no tighter bound
// of its own, so that a regression fails the test instead of hanging it.
const remoteWait = 30 * time.Second

// remoteTransport is one way of serving the fixture over HTTP.
type remoteTransport struct {
	name    string // config transport
	path    string // where the handler is mounted
	handler func() http.Handler
}

var remoteTransports = []remoteTransport{
	{config.TransportStreamableHTTP, "/mcp", func() http.Handler {
		// Stateful, the default.
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fixture.NewServer() }, nil)
	}},
	{config.TransportSSE, "/sse", func() http.Handler {
		return mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return fixture.NewServer() }, nil)
	}},
}

// recordedRequest is what requestRecorder keeps of one HTTP request.
type recordedRequest struct {
	method, path string
	header       http.Header
	body         string
}

// requestRecorder wraps a handler and records every request it sees, headers
// and (small) bodies included.
type requestRecorder struct {
	next http.Handler

	mu   sync.Mutex
	reqs []recordedRequest
}

func (r *requestRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	rec := recordedRequest{method: req.Method, path: req.URL.Path, header: req.Header.Clone()}
	if req.Body != nil {
		body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rec.body = string(body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	r.mu.Lock()
	r.reqs = append(r.reqs, rec)
	r.mu.Unlock()
	r.next.ServeHTTP(w, req)
}

func (r *requestRecorder) requests() []recordedRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recordedRequest(nil), r.reqs...)
}

// serveHTTP serves h on 127.0.0.1 at a free port. The server is shut down at
// the end of the test, after the host (cleanups run last-registered first),
// forcibly closing the connections still open so that Close cannot wait on a
// long-lived event stream.
func serveHTTP(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}

// callWithin calls a tool with the test's remoteWait bound.
func callWithin(t *testing.T, h *host.Host, req host.CallToolRequest) (*mcp.CallToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), remoteWait)
	defer cancel()
	res, err := h.CallTool(ctx, req)
	if ctx.Err() == context.DeadlineExceeded {
		t.Fatalf("CallTool %s.%s did not return within %s", req.Server, req.Tool, remoteWait)
	}
	return res, err
}

func mustCallWithin(t *testing.T, h *host.Host, server, tool, args string) *mcp.CallToolResult {
	t.Helper()
	res, err := callWithin(t, h, host.CallToolRequest{Server: server, Tool: tool, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("CallTool %s.%s: %v", server, tool, err)
	}
	return res
}

var testHeaders = map[string]string{"Authorization": "Bearer test-token", "X-Team": "a"}

// TestRemoteTransports serves the fixture through go-sdk's streamable HTTP
// (stateful) and SSE handlers on a real loopback listener and drives it
// through the host: discovery, calls, a large result, progress, call_timeout,
// cancellation and the configured headers.
func TestRemoteTransports(t *testing.T) {
	for _, tr := range remoteTransports {
		t.Run(tr.name, func(t *testing.T) {
			rec := &requestRecorder{next: tr.handler()}
			mux := http.NewServeMux()
			mux.Handle(tr.path, rec)
			srv := serveHTTP(t, mux)

			fx := remoteServer("fx", tr.name, srv.URL+tr.path)
			fx.Headers = testHeaders
			short := remoteServer("short", tr.name, srv.URL+tr.path)
			short.Headers = testHeaders
			short.CallTimeout = 300 * time.Millisecond
			h := startHost(t, host.Options{}, fx, short)

			want := fixtureCatalog(t)
			for _, name := range []string{"fx", "short"} {
				st := mustStatus(t, h, name)
				if st.State != host.StateReady {
					t.Fatalf("%s: state = %s, want ready (last error: %s)", name, st.State, st.LastError)
				}
				if st.Transport != tr.name {
					t.Errorf("%s: transport = %q, want %q", name, st.Transport, tr.name)
				}
				if st.ProtocolVersion != negotiate.LegacyVersion || st.Era != host.EraLegacy {
					t.Errorf("%s: era %q protocol %q, want legacy %s", name, st.Era, st.ProtocolVersion, negotiate.LegacyVersion)
				}
				if st.ServerInfo == nil || st.ServerInfo.Name != fixture.Name || st.ServerInfo.Version != fixture.Version {
					t.Errorf("%s: serverInfo = %+v, want %s %s", name, st.ServerInfo, fixture.Name, fixture.Version)
				}
				if st.Tools != want.tools || st.Prompts != 1 || st.Resources != 1 || st.ResourceTemplates != 1 {
					t.Errorf("%s: tools/prompts/resources/templates = %d/%d/%d/%d, want %d/1/1/1",
						name, st.Tools, st.Prompts, st.Resources, st.ResourceTemplates, want.tools)
				}
				if st.PID != 0 {
					t.Errorf("%s: pid = %d for a remote server, want 0", name, st.PID)
				}
			}
			prompts, err := h.Prompts("fx")
			if err != nil || len(prompts) != 1 || prompts[0].Name != "greet" {
				t.Errorf("Prompts = %v, %v; want [greet]", prompts, err)
			}
			resources, templates, err := h.Resources("fx")
			if err != nil || len(resources) != 1 || resources[0].URI != fixture.ReadmeURI ||
				len(templates) != 1 || templates[0].URITemplate != fixture.ItemsTemplate {
				t.Errorf("Resources = %v, %v, %v; want %s and %s", resources, templates, err, fixture.ReadmeURI, fixture.ItemsTemplate)
			}

			t.Run("echo", func(t *testing.T) {
				res := mustCallWithin(t, h, "fx", "echo", `{"text":"héllo over `+tr.name+`"}`)
				if got, want := textOf(res), "héllo over "+tr.name; got != want || res.IsError {
					t.Errorf("echo = %q (isError %v), want %q", got, res.IsError, want)
				}
			})
			t.Run("add", func(t *testing.T) {
				res := mustCallWithin(t, h, "fx", "add", `{"a":2,"b":40.5}`)
				if got := textOf(res); got != "42.5" {
					t.Errorf("add text = %q, want 42.5", got)
				}
				raw, err := json.Marshal(res.StructuredContent)
				if err != nil {
					t.Fatal(err)
				}
				var out fixture.AddOut
				if err := json.Unmarshal(raw, &out); err != nil || out.Sum != 42.5 {
					t.Errorf("add structuredContent = %s (%v), want {\"sum\":42.5}", raw, err)
				}
			})
			t.Run("tool failure is a result", func(t *testing.T) {
				res := mustCallWithin(t, h, "fx", "fail", `{}`)
				if !res.IsError || !strings.Contains(textOf(res), fixture.FailText) {
					t.Errorf("fail = %q (isError %v), want an isError result with %q", textOf(res), res.IsError, fixture.FailText)
				}
			})
			t.Run("big", func(t *testing.T) {
				const size = 5 << 20
				res := mustCallWithin(t, h, "fx", "big", `{"bytes":5242880}`)
				got := textOf(res)
				if len(got) != size {
					t.Fatalf("result text is %d bytes, want %d", len(got), size)
				}
				if got != fixture.BigText(size) {
					t.Fatal("result text differs from the text the server sent")
				}
				if got := textOf(mustCallWithin(t, h, "fx", "echo", `{"text":"after big"}`)); got != "after big" {
					t.Errorf("echo after big = %q", got)
				}
			})
			t.Run("progress", func(t *testing.T) {
				var mu sync.Mutex
				var got []host.Progress
				res, err := callWithin(t, h, host.CallToolRequest{
					Server: "fx", Tool: "slow", Arguments: json.RawMessage(`{"ms":300}`),
					OnProgress: func(p host.Progress) { mu.Lock(); got = append(got, p); mu.Unlock() },
				})
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(textOf(res), "slept 300 ms") {
					t.Errorf("text = %q", textOf(res))
				}
				mu.Lock()
				defer mu.Unlock()
				if len(got) == 0 {
					t.Fatal("no progress notification reached OnProgress")
				}
				for _, p := range got {
					if p.Total != 300 || p.Progress < 0 || p.Progress > 300 || !strings.HasPrefix(p.Message, "slept ") {
						t.Errorf("progress %+v, want total 300 and a message", p)
					}
				}
			})
			t.Run("call_timeout", func(t *testing.T) {
				start := time.Now()
				_, err := callWithin(t, h, host.CallToolRequest{Server: "short", Tool: "slow", Arguments: json.RawMessage(`{"ms":20000}`)})
				if err == nil || !strings.Contains(err.Error(), "no result within the server's call_timeout of 300ms") {
					t.Fatalf("error = %v, want the call_timeout named", err)
				}
				if d := time.Since(start); d > 10*time.Second {
					t.Errorf("call_timeout of 300ms took %s", d)
				}
				if got := textOf(mustCallWithin(t, h, "short", "echo", `{"text":"after timeout"}`)); got != "after timeout" {
					t.Errorf("echo after call_timeout = %q", got)
				}
			})
			t.Run("cancel", func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				// Cancel once the call is surely running: at its first
				// progress notification, or after a second without one.
				fallback := time.AfterFunc(time.Second, cancel)
				defer fallback.Stop()
				errc := make(chan error, 1)
				go func() {
					_, err := h.CallTool(ctx, host.CallToolRequest{
						Server: "fx", Tool: "slow", Arguments: json.RawMessage(`{"ms":20000}`),
						OnProgress: func(host.Progress) { cancel() },
					})
					errc <- err
				}()
				var err error
				select {
				case err = <-errc:
				case <-time.After(remoteWait):
					t.Fatalf("cancelled call did not return within %s", remoteWait)
				}
				if err == nil || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "call fx.slow cancelled") {
					t.Fatalf("error = %v, want a cancellation naming the call", err)
				}
				// go-sdk tells the server with notifications/cancelled.
				deadline := time.Now().Add(5 * time.Second)
				for !sawBody(rec, "notifications/cancelled") {
					if time.Now().After(deadline) {
						t.Fatal("the server never received notifications/cancelled")
					}
					time.Sleep(10 * time.Millisecond)
				}
				if got := textOf(mustCallWithin(t, h, "fx", "echo", `{"text":"after cancel"}`)); got != "after cancel" {
					t.Errorf("echo after cancel = %q", got)
				}
			})
			t.Run("headers", func(t *testing.T) {
				reqs := rec.requests()
				methods := map[string]int{}
				for _, r := range reqs {
					methods[r.method]++
					for k, v := range testHeaders {
						if got := r.header.Values(k); len(got) != 1 || got[0] != v {
							t.Errorf("%s %s: header %s = %q, want [%q]", r.method, r.path, k, got, v)
						}
					}
				}
				// Two sessions, each with at least initialize,
				// notifications/initialized and tools/list on POST.
				if methods[http.MethodPost] < 6 {
					t.Errorf("saw %d POST requests (%v), want >= 6", methods[http.MethodPost], methods)
				}
				if methods[http.MethodGet] < 1 {
					t.Errorf("saw no GET request (%v): the event stream was never opened", methods)
				}
				t.Logf("%d requests, all with the configured headers: %v", len(reqs), methods)
			})
		})
	}
}

// fixtureCounts is what a fixture server offers.
type fixtureCounts struct{ tools int }

// fixtureCatalog lists a fixture server's tools over an in-memory session, so
// the remote tests compare with the fixture as it is, not with a copy.
func fixtureCatalog(t *testing.T) fixtureCounts {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), remoteWait)
	defer cancel()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := fixture.NewServer().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "counter", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fixtureCounts{tools: len(res.Tools)}
}

func sawBody(rec *requestRecorder, substr string) bool {
	for _, r := range rec.requests() {
		if strings.Contains(r.body, substr) {
			return true
		}
	}
	return false
}

// TestRemoteHostile points the host at HTTP servers that are not MCP servers
// or not working ones. Each fails on its own, within its bound, with an error
// that says what went wrong.
func TestRemoteHostile(t *testing.T) {
	cases := []struct {
		name      string
		handler   func(stop <-chan struct{}) http.Handler
		discovery time.Duration
		// wantErr: the last error contains one of each group.
		wantErr [][]string
	}{
		{
			name: "500",
			handler: func(<-chan struct{}) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
					http.Error(w, "boom", http.StatusInternalServerError)
				})
			},
			wantErr: [][]string{{"500", "Internal Server Error"}},
		},
		{
			name: "401",
			handler: func(<-chan struct{}) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("WWW-Authenticate", `Bearer realm="test"`)
					http.Error(w, "no token", http.StatusUnauthorized)
				})
			},
			wantErr: [][]string{{"401", "Unauthorized"}},
		},
		{
			name: "html",
			handler: func(<-chan struct{}) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("Content-Type", "text/html; charset=utf-8")
					io.WriteString(w, "<!DOCTYPE html>\n<html><head><title>Sign in</title></head>\n<body>Please sign in</body></html>\n")
				})
			},
			// Streamable HTTP checks the content type; the SSE client
			// looks for its endpoint event in the page.
			wantErr: [][]string{{"text/html", "missing endpoint"}},
		},
		{
			name: "never answers",
			handler: func(stop <-chan struct{}) http.Handler {
				return http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
					select {
					case <-r.Context().Done():
					case <-stop:
					}
				})
			},
			discovery: 300 * time.Millisecond,
			wantErr:   [][]string{{"no answer within 300ms"}},
		},
	}
	for _, tr := range remoteTransports {
		for _, tc := range cases {
			t.Run(tr.name+"/"+tc.name, func(t *testing.T) {
				stop := make(chan struct{})
				srv := serveHTTP(t, tc.handler(stop))
				t.Cleanup(func() { close(stop) }) // runs before the server's Close
				s := remoteServer("bad", tr.name, srv.URL+tr.path)
				s.Headers = testHeaders
				bound := 20 * time.Second
				if tc.discovery > 0 {
					s.DiscoveryTimeout = tc.discovery
					bound = tc.discovery
				}
				start := time.Now()
				h := startHost(t, host.Options{}, s)
				settled := time.Since(start)
				st := mustStatus(t, h, "bad")
				if st.State != host.StateFailed {
					t.Fatalf("state = %s, want failed", st.State)
				}
				t.Logf("failed after %s: %s", settled.Round(time.Millisecond), st.LastError)
				// The bound plus scheduling slack. go-sdk's cleanup after a
				// timed-out initialize can wait 5s for its
				// notifications/cancelled POST; the host must not.
				if settled > bound+3*time.Second {
					t.Errorf("settled after %s, want within %s (+ 3s slack): the bound was not kept", settled, bound)
				}
				for _, group := range tc.wantErr {
					found := false
					for _, want := range group {
						found = found || strings.Contains(st.LastError, want)
					}
					if !found {
						t.Errorf("last error %q contains none of %q", st.LastError, group)
					}
				}
				_, err := callWithin(t, h, host.CallToolRequest{Server: "bad", Tool: "echo"})
				var nr *host.NotReadyError
				if !errors.As(err, &nr) {
					t.Errorf("call error = %v, want NotReadyError", err)
				}
			})
		}
	}
}

// TestRemoteServerDies shuts the HTTP server down under a ready session: the
// next call fails at once instead of hanging, and the server's status
// becomes failed, with or without restarts.
func TestRemoteServerDies(t *testing.T) {
	for _, tr := range remoteTransports {
		for _, restart := range []bool{false, true} {
			name := tr.name + "/no-restart"
			if restart {
				name = tr.name + "/restart"
			}
			t.Run(name, func(t *testing.T) {
				mux := http.NewServeMux()
				mux.Handle(tr.path, tr.handler())
				srv := serveHTTP(t, mux)

				statuses := make(chan host.ServerStatus, 1024)
				opts := host.Options{
					Restart:    restart,
					BackoffMin: 10 * time.Millisecond,
					BackoffMax: 100 * time.Millisecond,
					OnStatus: func(st host.ServerStatus) {
						select {
						case statuses <- st:
						default: // OnStatus must not block
						}
					},
				}
				h := startHost(t, opts, remoteServer("fx", tr.name, srv.URL+tr.path))
				if st := mustStatus(t, h, "fx"); st.State != host.StateReady {
					t.Fatalf("state = %s, want ready (last error: %s)", st.State, st.LastError)
				}
				if got := textOf(mustCallWithin(t, h, "fx", "echo", `{"text":"alive"}`)); got != "alive" {
					t.Fatalf("echo = %q", got)
				}
			drain:
				for {
					select {
					case <-statuses:
					default:
						break drain
					}
				}

				srv.CloseClientConnections()
				srv.Close()

				start := time.Now()
				_, err := callWithin(t, h, host.CallToolRequest{Server: "fx", Tool: "echo", Arguments: json.RawMessage(`{"text":"dead"}`)})
				if err == nil {
					t.Fatal("a call to a dead server succeeded")
				}
				t.Logf("call after the server died failed after %s: %v", time.Since(start).Round(time.Millisecond), err)

				ctx, cancel := context.WithTimeout(t.Context(), remoteWait)
				defer cancel()
				var failed host.ServerStatus
				for failed.State != host.StateFailed {
					select {
					case failed = <-statuses:
					case <-ctx.Done():
						t.Fatalf("status did not become failed within %s (now %+v)", remoteWait, mustStatus(t, h, "fx"))
					}
				}
				if failed.LastError == "" {
					t.Error("failed status without a last error")
				}
				t.Logf("failed: %s", failed.LastError)
				if !restart {
					return
				}
				// Restarts go on, and fail, against the dead address.
				for failed.State != host.StateFailed || failed.Restarts < 1 {
					select {
					case failed = <-statuses:
					case <-ctx.Done():
						t.Fatalf("no failed restart within %s (now %+v)", remoteWait, mustStatus(t, h, "fx"))
					}
				}
				if !strings.Contains(failed.LastError, "connection refused") {
					t.Errorf("restart error %q does not say the connection was refused", failed.LastError)
				}
			})
		}
	}
}
