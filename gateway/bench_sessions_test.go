package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/benchpair"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkSessionMemory is the memory one more idle 2025-11-25 session of
// the gateway costs the daemon with 10, 100 and 1,000 of them open, against
// a bare go-sdk Streamable HTTP server in the same process (the physical
// limit). The clients are raw HTTP on one kept-alive connection
// (initialize, then notifications/initialized, no stream held open), so
// the figure is the server side. Nothing is timed: run it once.
//
//	go test -run '^$' -bench BenchmarkSessionMemory -benchtime 1x -count 3 ./gateway/
func BenchmarkSessionMemory(b *testing.B) {
	// Caps above the defaults: it opens 1,000 sessions as one principal.
	e := newEnvConfig(b, &config.Config{Servers: []config.Server{stdioServer("fx", testbin.Build(b, wellbehavedPkg))},
		Gateway: config.Gateway{MaxSessionsPerPrincipal: 1000, MaxSessions: 1000}})
	bareServer := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "1"}, nil)
	mcp.AddTool(bareServer, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct{ Text string }) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	bare := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return bareServer }, nil))
	b.Cleanup(bare.Close)
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			for b.Loop() {
			}
			gw := sessionsHeap(b, e.base+"/mcp", aliceToken, n)
			bs := sessionsHeap(b, bare.URL, "", n)
			b.ReportMetric(gw/1024, "gateway-KiB/session")
			b.ReportMetric(bs/1024, "bare-sdk-KiB/session")
			b.ReportMetric(gw/bs, "x-bare-sdk")
		})
	}
}

// sessionsHeap opens n sessions at url and returns the live heap each one
// holds (bytes, after a GC), then ends them all.
func sessionsHeap(b *testing.B, url, token string, n int) float64 {
	b.Helper()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer hc.CloseIdleConnections()
	post := func(sid, body string) (string, error) {
		req, _ := http.NewRequestWithContext(b.Context(), http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", legacyVersion)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		res, err := hc.Do(req)
		if err != nil {
			return "", err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode/100 != 2 {
			return "", fmt.Errorf("%s: %d", body[:40], res.StatusCode)
		}
		return res.Header.Get("Mcp-Session-Id"), nil
	}
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`
	before := benchpair.LiveHeap()
	sids := make([]string, 0, n)
	for range n {
		sid, err := post("", initialize)
		if err == nil && sid == "" {
			err = fmt.Errorf("no Mcp-Session-Id from %s", url)
		}
		if err == nil {
			_, err = post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		}
		if err != nil {
			b.Fatal(err)
		}
		sids = append(sids, sid)
	}
	per := float64(benchpair.LiveHeap()-before) / float64(n)
	for _, sid := range sids {
		req, _ := http.NewRequestWithContext(b.Context(), http.MethodDelete, url, nil)
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", legacyVersion)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if res, err := hc.Do(req); err == nil {
			res.Body.Close()
		}
	}
	return per
}
