package negotiate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/fixture"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// hit is one HTTP request a test server received.
type hit struct {
	HTTPMethod string
	Header     http.Header
	RPCMethod  string
	ID         json.RawMessage
	Meta       json.RawMessage
}

// recorder records every request, then hands it to next.
type recorder struct {
	next http.Handler
	mu   sync.Mutex
	hits []hit
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := hit{HTTPMethod: r.Method, Header: r.Header.Clone()}
	if r.Body != nil {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Meta json.RawMessage `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) == nil {
			h.RPCMethod, h.ID, h.Meta = msg.Method, msg.ID, msg.Params.Meta
		}
	}
	rc.mu.Lock()
	rc.hits = append(rc.hits, h)
	rc.mu.Unlock()
	rc.next.ServeHTTP(w, r)
}

func (rc *recorder) all() []hit {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.hits)
}

func (rc *recorder) count(rpcMethod string) int {
	n := 0
	for _, h := range rc.all() {
		if h.RPCMethod == rpcMethod {
			n++
		}
	}
	return n
}

// serve starts an HTTP test server with a recorder in front of h.
func serve(t *testing.T, h http.Handler) (*httptest.Server, *recorder) {
	t.Helper()
	rc := &recorder{next: h}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	return srv, rc
}

func streamable(server *mcp.Server, stateless bool) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: stateless})
}

// onProbe answers our probe (recognised by its Mcp-Method header, which
// go-sdk never sends on legacy sessions) with probe, and everything else
// with a stateful go-sdk server: a legacy server with a quirky answer to
// server/discover.
func onProbe(probe http.HandlerFunc) http.Handler {
	legacy := streamable(fixture.NewServer(), false)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "server/discover" {
			probe(w, r)
			return
		}
		legacy.ServeHTTP(w, r)
	})
}

func httpSpec(url string, d time.Duration) Spec {
	return Spec{
		Name:             "remote",
		Mode:             ModeAuto,
		Transport:        TransportStreamableHTTP,
		DiscoveryTimeout: d,
		URL:              url,
		HTTPClient:       &http.Client{},
		Client:           newClient(nil),
	}
}

// TestHTTPModern: a stateless go-sdk Streamable HTTP server (dual-era, and
// modern-only) is modern in auto mode: no initialize, and every request
// carries the _meta triple and the matching MCP-Protocol-Version header.
func TestHTTPModern(t *testing.T) {
	modernOnly := func() *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "modern-only", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{ModernVersion}})
		mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
		return s
	}
	tests := []struct {
		name   string
		server *mcp.Server
	}{
		{"dual-era stateless", fixture.NewServer()},
		{"modern-only stateless", modernOnly()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, rc := serve(t, streamable(tc.server, true))
			spec := httpSpec(srv.URL, 5*time.Second)
			cache := newMemCache()
			spec.Cache, spec.CacheKey = cache, srv.URL
			res := mustConnect(t, spec, nil)
			v := res.Verdict
			if v.Era != EraModern || v.ProtocolVersion != ModernVersion || v.Label != "discover" ||
				v.Evidence != "modern: server/discover offered 2026-07-28" || res.Cmd != nil {
				t.Errorf("verdict %+v", v)
			}
			if names := toolNames(t, res.Session); !slices.Contains(names, "echo") {
				t.Errorf("tools %v", names)
			}
			if got := callText(t, res.Session, "echo", map[string]any{"text": "over http"}); got != "over http" {
				t.Errorf("echo = %q", got)
			}
			if c, ok := cache.entry(srv.URL); !ok || c.Era != EraModern {
				t.Errorf("cache entry %+v, %v", c, ok)
			}
			closeResult(res)

			hits := rc.all()
			probe := hits[0]
			for k, want := range map[string]string{
				"Content-Type":         "application/json",
				"Accept":               "application/json, text/event-stream",
				"Mcp-Protocol-Version": ModernVersion,
				"Mcp-Method":           "server/discover",
			} {
				if got := probe.Header.Get(k); got != want {
					t.Errorf("probe header %s = %q, want %q", k, got, want)
				}
			}
			if probe.Header.Get("Mcp-Session-Id") != "" || string(probe.ID) != `"mcphost-probe-1"` {
				t.Errorf("probe: session id %q, JSON-RPC id %s", probe.Header.Get("Mcp-Session-Id"), probe.ID)
			}
			for _, h := range hits {
				if h.RPCMethod == "initialize" {
					t.Errorf("an initialize request reached the server")
				}
				if h.HTTPMethod != http.MethodPost || h.RPCMethod == "" || len(h.ID) == 0 || string(h.ID) == "null" {
					continue
				}
				checkModernMeta(t, h.RPCMethod, h.Meta)
				if got := h.Header.Get("Mcp-Protocol-Version"); got != ModernVersion {
					t.Errorf("%s: MCP-Protocol-Version %q", h.RPCMethod, got)
				}
			}
			for _, want := range []string{"server/discover", "tools/list", "tools/call"} {
				if rc.count(want) == 0 {
					t.Errorf("no %s request", want)
				}
			}
		})
	}
}

// jsonAnswer writes a JSON body with a status.
func jsonAnswer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func plainAnswer(status int, ct, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		if ct != "" {
			w.Header().Set("Content-Type", ct)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// sseAnswer writes the events (each one data line) as an event stream.
func sseAnswer(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, e := range events {
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", e)
		}
	}
}

// TestHTTPLegacy: legacy Streamable HTTP servers in auto mode fall back to
// initialize, and discovery and calls behave as in legacy mode.
func TestHTTPLegacy(t *testing.T) {
	huge := `{"jsonrpc":"2.0","id":"mcphost-probe-1","result":{"supportedVersions":["2026-07-28"],"capabilities":{},"instructions":"` +
		strings.Repeat("x", 2<<20) + `"}}`
	tests := []struct {
		name      string
		handler   http.Handler
		wantLabel string
	}{
		{"stateful go-sdk (SSE, legacy-only versions)", streamable(fixture.NewServer(), false), "discover:legacy"},
		{"TS v1: 400 -32000 id null", onProbe(jsonAnswer(400, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}`)), "http:400:rpc:-32000"},
		{"Python v1: 400 -32600", onProbe(jsonAnswer(400, `{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Bad Request: Missing session ID"}}`)), "http:400:rpc:-32600"},
		{"404 with -32601", onProbe(jsonAnswer(404, `{"jsonrpc":"2.0","id":"mcphost-probe-1","error":{"code":-32601,"message":"Method not found"}}`)), "http:404:rpc:-32601"},
		{"200 -32601", onProbe(jsonAnswer(200, `{"jsonrpc":"2.0","id":"mcphost-probe-1","error":{"code":-32601,"message":"Method not found"}}`)), "rpc:-32601"},
		{"200 -32602", onProbe(jsonAnswer(200, `{"jsonrpc":"2.0","id":"mcphost-probe-1","error":{"code":-32602,"message":"Invalid params"}}`)), "rpc:-32602"},
		{"plain 400", onProbe(plainAnswer(400, "", "")), "http:400:empty"},
		{"plain 404", onProbe(plainAnswer(404, "text/plain; charset=utf-8", "404 page not found\n")), "http:404:nonjson"},
		{"plain 405", onProbe(plainAnswer(405, "text/plain", "Method Not Allowed")), "http:405:nonjson"},
		{"200 HTML", onProbe(plainAnswer(200, "text/html", "<html><body>MCP lives elsewhere</body></html>")), "http:200:nonjson"},
		{"200 malformed JSON", onProbe(plainAnswer(200, "application/json", `{"jsonrpc":"2.0","id":"mcphost-probe-1","result":{`)), "http:200:nonjson"},
		{"200 invalid DiscoverResult", onProbe(jsonAnswer(200, `{"jsonrpc":"2.0","id":"mcphost-probe-1","result":{"supportedVersions":"2026-07-28"}}`)), "invalid"},
		{"200 huge JSON", onProbe(jsonAnswer(200, huge)), "oversize"},
		{"200 huge SSE", onProbe(sseAnswer(`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`, huge)), "oversize"},
		{"SSE noise, then a legacy-only answer", onProbe(sseAnswer(
			`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`,
			`{"jsonrpc":"2.0","id":"other","result":{"supportedVersions":["2026-07-28"],"capabilities":{}}}`,
			`{"jsonrpc":"2.0","id":"mcphost-probe-1","result":{"supportedVersions":["2025-11-25"],"capabilities":{}}}`)), "discover:legacy"},
		{"SSE ends without the answer", onProbe(sseAnswer(`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`)), "http:200:noanswer"},
		{"400 -32022 legacy list", onProbe(jsonAnswer(400, `{"jsonrpc":"2.0","id":"mcphost-probe-1","error":{"code":-32022,"message":"unsupported","data":{"supported":["2025-11-25"],"requested":"2026-07-28"}}}`)), "http:400:rpc:-32022"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, rc := serve(t, tc.handler)
			spec := httpSpec(srv.URL, 5*time.Second)
			cache := newMemCache()
			spec.Cache, spec.CacheKey = cache, srv.URL
			res := mustConnect(t, spec, nil)
			v := res.Verdict
			if v.Era != EraLegacy || v.ProtocolVersion != LegacyVersion || v.Label != tc.wantLabel || v.Provisional {
				t.Errorf("verdict %+v, want legacy labelled %q", v, tc.wantLabel)
			}
			if names := toolNames(t, res.Session); !slices.Contains(names, "echo") {
				t.Errorf("tools %v", names)
			}
			if got := callText(t, res.Session, "add", map[string]any{"a": 2, "b": 40}); got != "42" {
				t.Errorf("add = %q", got)
			}
			if c, ok := cache.entry(srv.URL); !ok || c.Era != EraLegacy {
				t.Errorf("cache entry %+v, %v", c, ok)
			}
			if rc.count("initialize") != 1 || rc.count("server/discover") != 1 {
				t.Errorf("%d initialize and %d discover requests, want one each", rc.count("initialize"), rc.count("server/discover"))
			}
		})
	}
}

// TestHTTPFail: auth, transient and network failures of the probe surface
// as errors, never as era evidence, and nothing is cached. So do modern
// errors that say mcphost cannot talk to the server.
func TestHTTPFail(t *testing.T) {
	refused := func(t *testing.T) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + ln.Addr().String() + "/mcp"
		ln.Close()
		return url
	}
	always := func(h http.HandlerFunc) func(*testing.T) string {
		return func(t *testing.T) string {
			srv, _ := serve(t, h)
			return srv.URL
		}
	}
	tests := []struct {
		name       string
		url        func(*testing.T) string
		wantLabel  string
		wantStatus int
	}{
		{"401", always(jsonAnswer(401, `{"error":"invalid_token"}`)), "http:401", 401},
		{"403", always(plainAnswer(403, "", "")), "http:403", 403},
		{"407", always(plainAnswer(407, "", "")), "http:407", 407},
		{"500", always(plainAnswer(500, "text/plain", "internal error")), "http:500", 500},
		{"503", always(plainAnswer(503, "", "")), "http:503", 503},
		{"429", always(plainAnswer(429, "", "")), "http:429", 429},
		{"408", always(plainAnswer(408, "", "")), "http:408", 408},
		{"connection refused", refused, "net", 0},
		{"400 -32020", always(jsonAnswer(400, `{"jsonrpc":"2.0","id":"mcphost-probe-1","error":{"code":-32020,"message":"header mismatch"}}`)), "http:400:rpc:-32020", 400},
		{"400 -32021", always(jsonAnswer(400, `{"jsonrpc":"2.0","id":"mcphost-probe-1","error":{"code":-32021,"message":"missing capability","data":{"requiredCapabilities":{"elicitation":{}}}}}`)), "http:400:rpc:-32021", 400},
		{"-32022 twice", always(jsonAnswer(400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32022,"message":"unsupported","data":{"supported":["2026-07-28"]}}}`)), "http:400:rpc:-32022", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url := tc.url(t)
			spec := httpSpec(url, 5*time.Second)
			cache := newMemCache()
			spec.Cache, spec.CacheKey = cache, url
			var clients int
			spec.Client = newClient(&clients)
			_, err := connect(t, spec)
			var pe *ProbeError
			if !errors.As(err, &pe) || pe.Label != tc.wantLabel || pe.Status != tc.wantStatus {
				t.Fatalf("error %v (%#v), want a *ProbeError labelled %q with status %d", err, pe, tc.wantLabel, tc.wantStatus)
			}
			if gets, puts, _ := cache.counts(); puts != 0 || gets != 1 {
				t.Errorf("%d gets, %d puts; want 1 get and no put", gets, puts)
			}
			if clients != 0 {
				t.Errorf("a session was attempted (%d clients built)", clients)
			}
		})
	}
}

// hang blocks until the client gives up on the request.
func hang(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

// TestHTTPTimeout: an HTTP probe that hangs is inconclusive: "fallback"
// gives a provisional legacy session that is never persisted; "error" and a
// failing fallback return the probe timeout. The probe never sends
// notifications/cancelled.
func TestHTTPTimeout(t *testing.T) {
	tests := []struct {
		name       string
		policy     string
		handler    http.Handler
		wantErr    bool
		wantConnec bool // a connect error inside the timeout error
	}{
		{"fallback", HTTPProbeTimeoutFallback, onProbe(hang), false, false},
		{"error", HTTPProbeTimeoutError, onProbe(hang), true, false},
		{"fallback, initialize hangs too", HTTPProbeTimeoutFallback, http.HandlerFunc(hang), true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, rc := serve(t, tc.handler)
			spec := httpSpec(srv.URL, 3*time.Second)
			spec.HTTPProbeTimeout = tc.policy
			cache := newMemCache()
			spec.Cache, spec.CacheKey = cache, srv.URL
			res, err := connect(t, spec)
			if tc.wantErr {
				var te *ProbeTimeoutError
				if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) || te.After != 2*time.Second || (te.ConnectErr != nil) != tc.wantConnec {
					t.Fatalf("error %v, want a *ProbeTimeoutError after 2s (connect error: %v)", err, tc.wantConnec)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				v := res.Verdict
				if v.Era != EraLegacy || !v.Provisional || v.Label != "http:timeout" || !hasPrefix(v.Evidence, "legacy (provisional): ") {
					t.Errorf("verdict %+v, want provisional legacy", v)
				}
				if got := callText(t, res.Session, "echo", map[string]any{"text": "slow"}); got != "slow" {
					t.Errorf("echo = %q", got)
				}
			}
			if _, puts, _ := cache.counts(); puts != 0 {
				t.Errorf("%d puts, want none", puts)
			}
			// The probe never cancels. When the fallback's initialize hangs
			// too, go-sdk may cancel that initialize when the window ends,
			// depending on whether its POST was still in flight: not the
			// probe's doing, so not counted.
			if n := rc.count("notifications/cancelled"); n != 0 && !tc.wantConnec {
				t.Errorf("%d notifications/cancelled requests", n)
			}
		})
	}
}

// TestHTTPProbeUsesSessionClient: the probe goes through Spec.HTTPClient
// (static headers, auth), as the session does.
func TestHTTPProbeUsesSessionClient(t *testing.T) {
	t.Parallel()
	inner := streamable(fixture.NewServer(), true)
	srv, rc := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer secret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	spec := httpSpec(srv.URL, 5*time.Second)
	spec.HTTPClient = &http.Client{Transport: bearer{"secret"}}
	res := mustConnect(t, spec, nil)
	if res.Verdict.Era != EraModern {
		t.Errorf("verdict %+v", res.Verdict)
	}
	if rc.count("server/discover") != 2 { // the probe and the session's own
		t.Errorf("%d discover requests, want 2", rc.count("server/discover"))
	}
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestSSETransport: the 2024-11-05 HTTP+SSE transport is legacy by
// configuration and never probed.
func TestSSETransport(t *testing.T) {
	t.Parallel()
	server := fixture.NewServer()
	srv, rc := serve(t, mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return server }, nil))
	spec := httpSpec(srv.URL, 5*time.Second)
	spec.Transport = TransportSSE
	cache := newMemCache()
	spec.Cache, spec.CacheKey = cache, srv.URL
	res := mustConnect(t, spec, nil)
	if v := res.Verdict; v.Era != EraLegacy || v.Label != "sse" {
		t.Errorf("verdict %+v", v)
	}
	if got := callText(t, res.Session, "echo", map[string]any{"text": "sse"}); got != "sse" {
		t.Errorf("echo = %q", got)
	}
	if n := rc.count("server/discover"); n != 0 {
		t.Errorf("%d discover requests on an SSE server", n)
	}
	if gets, puts, dels := cache.counts(); gets+puts+dels != 0 {
		t.Errorf("the SSE transport used the era cache")
	}
}

// TestHTTPLegacyMode: legacy mode sends no discover request.
func TestHTTPLegacyMode(t *testing.T) {
	t.Parallel()
	srv, rc := serve(t, streamable(fixture.NewServer(), true))
	spec := httpSpec(srv.URL, 5*time.Second)
	spec.Mode = ModeLegacy
	res := mustConnect(t, spec, nil)
	if v := res.Verdict; v.Era != EraLegacy || v.Label != "config" || v.ProtocolVersion != LegacyVersion {
		t.Errorf("verdict %+v", v)
	}
	if rc.count("server/discover") != 0 || rc.count("initialize") != 1 {
		t.Errorf("%d discover and %d initialize requests", rc.count("server/discover"), rc.count("initialize"))
	}
}

// TestHTTPCachedLegacyRefused: a cached legacy verdict whose initialize is
// refused with 400 -32022 is dropped, and the server is re-probed as modern
// once, within the window.
func TestHTTPCachedLegacyRefused(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "modern-only", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{ModernVersion}})
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	modern := streamable(s, true)
	srv, rc := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"method":"initialize"`)) {
			jsonAnswer(400, `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}}`)(w, r)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		modern.ServeHTTP(w, r)
	}))
	spec := httpSpec(srv.URL, 5*time.Second)
	cache := newMemCache()
	spec.Cache, spec.CacheKey = cache, srv.URL
	_ = cache.Put(context.Background(), storeKey(srv.URL), Verdict{Era: EraLegacy, ProtocolVersion: LegacyVersion, Label: "http:timeout", ObservedAt: time.Now()})
	res := mustConnect(t, spec, nil)
	if v := res.Verdict; v.Era != EraModern || v.Label != "initialize:-32022" {
		t.Errorf("verdict %+v", v)
	}
	if got := callText(t, res.Session, "echo", map[string]any{"text": "x"}); got != "x" {
		t.Errorf("echo = %q", got)
	}
	if c, ok := cache.entry(srv.URL); !ok || c.Era != EraModern {
		t.Errorf("cache entry %+v, %v", c, ok)
	}
	if rc.count("initialize") != 1 {
		t.Errorf("%d initialize requests, want 1", rc.count("initialize"))
	}
}
