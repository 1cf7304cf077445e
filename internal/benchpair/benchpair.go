// Package benchpair measures a call path against its physical limit, as
// ../shared/docs/performance.md asks: a direct go-sdk call to the same kind of
// server in the same benchmark run, alternated in one loop so that drift hits
// both sides, reported as medians, p99s and their ratios.
//
// It is a test helper: benchmarks import it, and cmd/mcphost-load for
// Percentiles, so that its figures are picked the same way.
package benchpair

import (
	"context"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Compare warms both paths up (50 calls each), then runs the sub-benchmarks
// "direct", name and "paired". "paired" alternates the two calls and reports
// direct-p50-ns, NAME-p50-ns, direct-p99-ns, NAME-p99-ns, p50-x-direct and
// p99-x-direct.
//
// direct and subject report a failed call by returning an error, and
// Compare fails the benchmark that is running (b during the warm-up, else
// the sub-benchmark) on its own goroutine, as testing requires of FailNow:
// the callbacks must not call b.Fatal themselves, since the sub-benchmarks
// run on goroutines of their own.
func Compare(b *testing.B, name string, direct, subject func() error) {
	call := func(tb testing.TB, side string, f func() error) {
		tb.Helper()
		if err := f(); err != nil {
			tb.Fatalf("%s: %v", side, err)
		}
	}
	for range 50 {
		call(b, "direct", direct)
		call(b, name, subject)
	}
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			call(b, "direct", direct)
		}
	})
	b.Run(name, func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			call(b, name, subject)
		}
	})
	b.Run("paired", func(b *testing.B) {
		var d, s []time.Duration
		for b.Loop() {
			t0 := time.Now()
			call(b, "direct", direct)
			t1 := time.Now()
			call(b, name, subject)
			t2 := time.Now()
			d = append(d, t1.Sub(t0))
			s = append(s, t2.Sub(t1))
		}
		dp50, dp99 := Percentiles(d)
		sp50, sp99 := Percentiles(s)
		b.ReportMetric(float64(dp50.Nanoseconds()), "direct-p50-ns")
		b.ReportMetric(float64(sp50.Nanoseconds()), name+"-p50-ns")
		b.ReportMetric(float64(dp99.Nanoseconds()), "direct-p99-ns")
		b.ReportMetric(float64(sp99.Nanoseconds()), name+"-p99-ns")
		b.ReportMetric(float64(sp50)/float64(dp50), "p50-x-direct")
		b.ReportMetric(float64(sp99)/float64(dp99), "p99-x-direct")
	})
}

// Percentiles returns the median and the 99th percentile of ds.
func Percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)*50/100], s[min(len(s)-1, len(s)*99/100)]
}

// DirectStdio connects a go-sdk client straight to its own process of the
// stdio server bin, pinned to version, and closes it when the benchmark ends.
func DirectStdio(tb testing.TB, bin, version string) *mcp.ClientSession {
	tb.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "bench"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin)}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

// LiveHeap returns the live heap in bytes after a GC (two, a moment
// apart, so that what finalizers free is gone): for benchmarks of the
// memory something holds, read before and after it.
func LiveHeap() int64 {
	runtime.GC()
	time.Sleep(20 * time.Millisecond)
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}
