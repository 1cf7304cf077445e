package wasmserver

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Run with (one heavy command at a time on a shared machine; start-cold
// compiles the go-sdk example, about ten seconds an iteration):
//
//	go test -run '^$' -bench BenchmarkWasmServer ./wasmserver/
//
// start-* time Start up to an answered initialize (Close is not timed);
// start-cold has a fresh compilation cache directory each time, start-warm
// one that a first start filled. call/* time one tools/call of echo on one
// session: call/native is the same wasi-echo source built for this machine
// and run as a stdio process, the physical limit. Each reports the median
// and 99th percentile besides the mean.
func BenchmarkWasmServer(b *testing.B) {
	servers := []struct{ name, path string }{
		{"wasi", echoWasm(b)},
		{"extism", echoPlugin(b)},
	}
	for _, sv := range servers {
		b.Run("start-cold/"+sv.name, func(b *testing.B) {
			percentiles(b, func() func() {
				dir, err := os.MkdirTemp(b.TempDir(), "cache-")
				if err != nil {
					b.Fatal(err)
				}
				stop := startReady(b, Spec{Path: sv.path, CacheDir: dir})
				return func() { stop(); os.RemoveAll(dir) }
			})
		})
		b.Run("start-warm/"+sv.name, func(b *testing.B) {
			dir := b.TempDir()
			startReady(b, Spec{Path: sv.path, CacheDir: dir})() // fills the cache
			percentiles(b, func() func() { return startReady(b, Spec{Path: sv.path, CacheDir: dir}) })
		})
	}
	for _, sv := range servers {
		b.Run("call/"+sv.name, func(b *testing.B) {
			s, err := Start(context.Background(), Spec{Path: sv.path, CacheDir: testCacheDir(b)})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			benchCalls(b, s.Transport())
		})
	}
	b.Run("call/native", func(b *testing.B) {
		bin := goBuild(b, "examples/wasm", "wasi-echo", runtime.GOOS, runtime.GOARCH)
		benchCalls(b, &mcp.CommandTransport{Command: exec.Command(bin)})
	})
}

// startReady starts spec and initializes a session, and returns the
// function that ends both.
func startReady(b *testing.B, spec Spec) (stop func()) {
	b.Helper()
	s, err := Start(context.Background(), spec)
	if err != nil {
		b.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), s.Transport(), &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil {
		s.Close()
		b.Fatal(err)
	}
	return func() {
		cs.Close()
		if err := s.Close(); err != nil {
			b.Error(err)
		}
	}
}

// percentiles times op b.N times; op returns the clean-up, which is not
// timed.
func percentiles(b *testing.B, op func() (cleanup func())) {
	b.Helper()
	d := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		cleanup := op()
		d = append(d, time.Since(start))
		b.StopTimer()
		cleanup()
		b.StartTimer()
	}
	b.StopTimer()
	report(b, d)
}

func benchCalls(b *testing.B, t mcp.Transport) {
	b.Helper()
	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	cs, err := c.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}
	if _, err := cs.CallTool(ctx, params); err != nil { // warm-up
		b.Fatal(err)
	}
	d := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		res, err := cs.CallTool(ctx, params)
		d = append(d, time.Since(start))
		if err != nil || res.IsError {
			b.Fatalf("echo: %+v, %v", res, err)
		}
	}
	b.StopTimer()
	report(b, d)
}

func report(b *testing.B, d []time.Duration) {
	slices.Sort(d)
	ms := func(x time.Duration) float64 { return float64(x.Microseconds()) / 1000 }
	b.ReportMetric(ms(d[len(d)/2]), "ms/p50")
	b.ReportMetric(ms(d[len(d)*99/100]), "ms/p99")
}
