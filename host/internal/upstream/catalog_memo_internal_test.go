package upstream

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/mcphost/mcphost/cache"
	"github.com/mcphost/mcphost/internal/fixture"
	"github.com/mcphost/mcphost/negotiate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCatalogReusesACachedToolsList: a refresh whose tools list the cache
// answers reuses the tools admitted and the schemas compiled from that
// very list (before, every cached refresh compiled every input schema
// again: 0.4× a direct tools/list instead of 0.006×); another list is
// admitted and compiled again.
func TestCatalogReusesACachedToolsList(t *testing.T) {
	server := fixture.NewServer()
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if r, ok := res.(*mcp.ListToolsResult); ok && err == nil {
				r.TTLMs, r.CacheScope = 3_600_000, "public"
			}
			return res, err
		}
	})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true})
	var lists atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tools/list" {
			lists.Add(1)
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL}, &mcp.ClientSessionOptions{ProtocolVersion: negotiate.ModernVersion})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	lc := &listCache{c: cache.New(cache.Options{}), server: "fx"}

	same := func(a, b any) bool { return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer() }
	first, err := FetchCatalog(t.Context(), cs, lc)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Tools) == 0 || len(first.schemas) != len(first.Tools) {
		t.Fatalf("first catalog: %d tools, %d schemas", len(first.Tools), len(first.schemas))
	}
	second, err := FetchCatalog(t.Context(), cs, lc)
	if err != nil {
		t.Fatal(err)
	}
	if n := lists.Load(); n != 1 {
		t.Fatalf("%d tools/list requests reached the server, want 1 (the second from the cache)", n)
	}
	if !same(first.schemas, second.schemas) || !same(first.ToolIndex, second.ToolIndex) || !same(first.Tools, second.Tools) {
		t.Error("a refresh from the cache admitted the tools and compiled their schemas again")
	}
	if second.Schema(second.ToolIndex["echo"]) == nil {
		t.Error("the reused catalog has no compiled schema for echo")
	}

	// A list fetched anew is another slice, even with the same tools: it
	// is admitted and compiled again.
	again := append([]*mcp.Tool(nil), lc.memo.src...)
	if lc.toolsFrom(again) != nil {
		t.Error("a new list with the same tools reused the last catalog")
	}
	if lc.toolsFrom(lc.memo.src) == nil {
		t.Error("the list the last catalog was built from is not recognized")
	}
}
