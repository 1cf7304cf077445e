package host_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
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

	direct := directSession(b, bin)
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
	for range 50 { // warm up both paths
		directCall()
		hostCall()
	}

	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			directCall()
		}
	})
	b.Run("host", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			hostCall()
		}
	})
	b.Run("paired", func(b *testing.B) {
		var d, hd []time.Duration
		for b.Loop() {
			t0 := time.Now()
			directCall()
			t1 := time.Now()
			hostCall()
			t2 := time.Now()
			d = append(d, t1.Sub(t0))
			hd = append(hd, t2.Sub(t1))
		}
		dp50, dp99 := percentiles(d)
		hp50, hp99 := percentiles(hd)
		b.ReportMetric(float64(dp50.Nanoseconds()), "direct-p50-ns")
		b.ReportMetric(float64(hp50.Nanoseconds()), "host-p50-ns")
		b.ReportMetric(float64(dp99.Nanoseconds()), "direct-p99-ns")
		b.ReportMetric(float64(hp99.Nanoseconds()), "host-p99-ns")
		b.ReportMetric(float64(hp50)/float64(dp50), "p50-x-direct")
		b.ReportMetric(float64(hp99)/float64(dp99), "p99-x-direct")
	})
}

// directSession connects go-sdk straight to its own process of the fixture,
// pinned to the same protocol version as the host.
func directSession(b *testing.B, bin string) *mcp.ClientSession {
	client := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "bench"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	ctx, cancel := context.WithTimeout(b.Context(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin)}, &mcp.ClientSessionOptions{ProtocolVersion: host.LegacyProtocolVersion})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)*50/100], s[min(len(s)-1, len(s)*99/100)]
}
