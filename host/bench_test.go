package host_test

import (
	"encoding/json"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/benchpair"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCallTool measures a tool call through the host registry against
// the physical limit: a direct go-sdk call to its own process of the same
// stdio fixture, in the same run (../shared/docs/performance.md). The paired
// sub-benchmark alternates the two calls in one loop so drift hits both, and
// reports medians, p99s and their ratios.
//
//	go test -run '^$' -bench BenchmarkCallTool -benchmem -count 10 ./host/
func BenchmarkCallTool(b *testing.B) {
	bin := testbin.Build(b, wellbehavedPkg)
	ctx := b.Context()

	direct := benchpair.DirectStdio(b, bin, host.LegacyProtocolVersion)
	s := stdioServer("fx", bin)
	h, err := host.New(&config.Config{Servers: []config.Server{s}}, host.Options{})
	if err != nil {
		b.Fatal(err)
	}
	h.Start(ctx)
	b.Cleanup(func() { h.Close() })
	if err := h.WaitSettled(ctx); err != nil {
		b.Fatal(err)
	}
	if st, _ := h.Server("fx"); st.State != host.StateReady {
		b.Fatalf("fixture not ready: %s", st.LastError)
	}

	const argsJSON = `{"text":"hello from the benchmark"}`
	directCall := func() {
		res, err := direct.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello from the benchmark"}})
		if err != nil || res.IsError {
			b.Fatalf("direct call: %v", err)
		}
	}
	hostCall := func() {
		res, err := h.CallTool(ctx, host.CallToolRequest{Server: "fx", Tool: "echo", Arguments: json.RawMessage(argsJSON)})
		if err != nil || res.IsError {
			b.Fatalf("host call: %v", err)
		}
	}
	benchpair.Compare(b, "host", directCall, hostCall)
}
