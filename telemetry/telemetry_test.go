package telemetry_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/boot"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/negotiate"
	"github.com/mcphost/mcphost/telemetry"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// collector is a loopback OTLP/HTTP receiver that keeps the spans it gets.
type collector struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	res   map[string]string // resource attributes of the last batch
	url   string
}

func newCollector(t *testing.T) *collector {
	c := &collector{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(body, &req)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		for _, rs := range req.ResourceSpans {
			c.res = map[string]string{}
			for _, kv := range rs.GetResource().GetAttributes() {
				c.res[kv.Key] = kv.GetValue().GetStringValue()
			}
			for _, ss := range rs.ScopeSpans {
				c.spans = append(c.spans, ss.Spans...)
			}
		}
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		b, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		_, _ = w.Write(b)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	c.url = "http://" + ln.Addr().String()
	return c
}

func attr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}

// TestTraces: with a collector configured, one call through the pipeline
// is one trace: a span named "tools/call echo" with the MCP attributes and
// a child per stage (policy, the upstream client span, the result stage,
// the record), sent to the loopback collector at shutdown; the remote
// server got the trace in its traceparent header.
func TestTraces(t *testing.T) {
	col := newCollector(t)
	stop, err := telemetry.Setup(t.Context(), telemetry.Config{Endpoint: col.url, ServiceName: "mcphost-test", ServiceVersion: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}

	// A remote server that remembers the traceparent of each tools/call.
	var seenMu sync.Mutex
	var seen []string
	up := mcp.NewServer(&mcp.Implementation{Name: "traced", Version: "1"}, nil)
	up.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo"}}}, nil
		})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tools/call" {
			seenMu.Lock()
			seen = append(seen, r.Header.Get("Traceparent"))
			seenMu.Unlock()
		}
		handler.ServeHTTP(w, r)
	})}
	go hs.Serve(ln)
	defer hs.Close()

	cfg := &config.Config{Servers: []config.Server{{
		Name: "remote", Transport: config.TransportStreamableHTTP, URL: "http://" + ln.Addr().String(),
		VersionNegotiation: config.NegotiationLegacy, DiscoveryTimeout: 20 * time.Second, CallTimeout: time.Minute,
		Enabled: true, Apps: config.AppsAuto,
	}}}
	st, err := store.OpenWith(t.Context(), filepath.Join(t.TempDir(), "mcphost.db"), nil, boot.StoreOptions(cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h, err := host.New(cfg, host.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	h.Start(context.Background())
	defer h.Close()
	wctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := h.WaitSettled(wctx); err != nil {
		t.Fatal(err)
	}
	owner := host.Principal{Name: "owner"}
	sess, err := h.CreateSession(t.Context(), owner, "traced")
	if err != nil {
		t.Fatal(err)
	}
	entry, err := h.Call(t.Context(), host.SessionCall{Principal: owner, SessionID: sess.ID, Server: "remote", Tool: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)})
	if err != nil || entry.Status != store.StatusOK {
		t.Fatalf("call: %v, %+v", err, entry)
	}
	if err := stop(t.Context()); err != nil {
		t.Fatal(err)
	}

	col.mu.Lock()
	defer col.mu.Unlock()
	if col.res["service.name"] != "mcphost-test" || col.res["service.version"] != "1.2.3" {
		t.Errorf("resource %v", col.res)
	}
	byName := map[string][]*tracepb.Span{}
	for _, s := range col.spans {
		byName[s.Name] = append(byName[s.Name], s)
	}
	calls := byName["tools/call echo"]
	var root, client *tracepb.Span
	for _, s := range calls {
		switch s.Kind {
		case tracepb.Span_SPAN_KIND_CLIENT:
			client = s
		default:
			root = s
		}
	}
	if root == nil || client == nil {
		t.Fatalf("spans %v: want a call span and a client span named \"tools/call echo\"", names(col.spans))
	}
	if attr(root, "mcp.method.name") != "tools/call" || attr(root, "gen_ai.tool.name") != "echo" || attr(root, "mcphost.server") != "remote" ||
		attr(root, "mcphost.call.status") != store.StatusOK || attr(root, "mcphost.entry.id") != entry.ID || len(root.ParentSpanId) != 0 {
		t.Errorf("call span: %v", root)
	}
	if attr(client, "mcp.protocol.version") != negotiate.LegacyVersion || attr(client, "network.transport") != "tcp" {
		t.Errorf("client span: %v", client)
	}
	for _, name := range []string{"policy call", "result stage", "store record"} {
		if len(byName[name]) != 1 {
			t.Errorf("%d spans named %q; spans: %v", len(byName[name]), name, names(col.spans))
		}
	}
	for _, s := range col.spans {
		if s == root {
			continue
		}
		if string(s.TraceId) != string(root.TraceId) || string(s.ParentSpanId) != string(root.SpanId) {
			t.Errorf("span %q is not a child of the call span", s.Name)
		}
	}
	seenMu.Lock()
	defer seenMu.Unlock()
	traceID := hex.EncodeToString(root.TraceId)
	if !slices.ContainsFunc(seen, func(tp string) bool { return strings.Contains(tp, traceID+"-"+hex.EncodeToString(client.SpanId)) }) {
		t.Errorf("the server saw traceparent %q, want the client span %s of trace %s", seen, hex.EncodeToString(client.SpanId), traceID)
	}
}

func names(spans []*tracepb.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

// TestOff: without an endpoint nothing is installed and stopping is a
// no-op.
func TestOff(t *testing.T) {
	stop, err := telemetry.Setup(t.Context(), telemetry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := telemetry.Setup(t.Context(), telemetry.Config{Endpoint: "ftp://x"}); err == nil {
		t.Fatal("an ftp endpoint was accepted")
	}
}
