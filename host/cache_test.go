package host_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/fixture"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// withListTTL makes a server mark its tools/list results cacheable for ttlMs.
func withListTTL(s *mcp.Server, ttlMs int, scope string) *mcp.Server {
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if r, ok := res.(*mcp.ListToolsResult); ok && err == nil {
				r.TTLMs = ttlMs
				r.CacheScope = scope
			}
			return res, err
		}
	})
	return s
}

// TestCacheHintedList: a modern server's tools/list with ttlMs > 0 is
// reused by a refresh without a second request on the wire; with ttlMs 0
// every refresh asks the server.
func TestCacheHintedList(t *testing.T) {
	for _, tc := range []struct {
		name      string
		ttlMs     int
		wantLists int64 // tools/list requests after connect plus two refreshes
	}{
		{"ttlMs 60000 is reused", 60000, 1},
		{"ttlMs 0 always asks", 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server := withListTTL(fixture.NewServer(), tc.ttlMs, "public")
			handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true})
			var lists atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Mcp-Method") == "tools/list" {
					lists.Add(1)
				}
				handler.ServeHTTP(w, r)
			}))
			t.Cleanup(srv.Close)
			s := remoteServer("fx", config.TransportStreamableHTTP, srv.URL)
			s.VersionNegotiation = config.NegotiationAuto
			s.HTTPProbeTimeout = config.HTTPProbeTimeoutFallback
			h := startHost(t, host.Options{}, s)
			if st := mustStatus(t, h, "fx"); st.State != host.StateReady || st.Era != host.EraModern {
				t.Fatalf("%s %s: %s", st.State, st.Era, st.LastError)
			}
			for range 2 {
				st, err := h.RefreshCatalog(t.Context(), "fx")
				if err != nil {
					t.Fatal(err)
				}
				if st.Tools == 0 {
					t.Fatal("refresh lost the tools")
				}
			}
			if got := lists.Load(); got != tc.wantLists {
				t.Errorf("%d tools/list requests reached the server, want %d", got, tc.wantLists)
			}
			stats := h.CacheStats()
			if tc.ttlMs > 0 && stats.Hits < 2 {
				t.Errorf("cache hits = %d, want >= 2", stats.Hits)
			}
		})
	}
}
