package plugins

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
)

// Run with (one heavy command at a time on a shared machine):
//
//	go test -run '^$' -bench . -benchtime 2s ./plugins/
//
// Per-call benchmarks report the median and 99th percentile of single
// calls besides the mean.

// benchText returns n bytes of log lines, with one secret per KiB when
// secrets is set.
func benchText(n int, secrets bool) string {
	const line = "2024-05-01 12:00:00 INFO request served path=/api/items status=200 bytes=5120\n"
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(line)
		if secrets && b.Len()%1024 < len(line) {
			b.WriteString("token " + secret + "\n")
		}
	}
	return b.String()[:n]
}

// timed runs fn b.N times and reports the median and p99 of one call and,
// on Linux, the median CPU time of the calling thread (the guest runs on
// it), which a busy machine inflates far less than the wall clock.
func timed(b *testing.B, fn func()) {
	b.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	d := make([]time.Duration, 0, b.N)
	cpu := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		c0, ok := threadCPU()
		start := time.Now()
		fn()
		d = append(d, time.Since(start))
		if c1, _ := threadCPU(); ok {
			cpu = append(cpu, c1-c0)
		}
	}
	b.StopTimer()
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "ms/median")
	b.ReportMetric(float64(d[len(d)*99/100].Microseconds())/1000, "ms/p99")
	if len(cpu) > 0 {
		slices.Sort(cpu)
		b.ReportMetric(float64(cpu[len(cpu)/2].Microseconds())/1000, "cpu-ms/median")
	}
}

func BenchmarkCall(b *testing.B) {
	rt := newRuntime(b, Options{})
	for _, c := range []struct {
		plugin  string
		secrets bool // redact rewrites the result; otherwise it answers "unchanged"
	}{{"identity", false}, {"redact", true}, {"redact", false}} {
		config := map[string]string{"pattern": `sk-[A-Za-z0-9]{20,}`}
		s := load(b, rt, spec(b, c.plugin, c.plugin, result, config))
		for _, size := range []int{2 << 10, 200 << 10} {
			in := ResultInput{Server: "fs", Tool: "read", Arguments: []byte(`{"path":"/var/log/app.log"}`),
				Principal: Principal{Name: "ann", Groups: []string{"dev"}}, Result: textResult(benchText(size, c.secrets))}
			name := fmt.Sprintf("%s/%dKB", c.plugin, size>>10)
			if c.plugin == "redact" && !c.secrets {
				name += "-nomatch"
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(size))
				timed(b, func() {
					if _, _, err := s.RunResult(context.Background(), in); err != nil {
						b.Fatal(err)
					}
				})
			})
		}
	}
	// The host's share of a rewrite: validating the plugin's output.
	for _, size := range []int{2 << 10, 200 << 10} {
		in := textResult(benchText(size, true))
		redacted, _ := json.Marshal(textResult(strings.ReplaceAll(benchText(size, true), secret, "[REDACTED]")))
		out := append(append([]byte(`{"result":`), redacted...), '}')
		b.Run(fmt.Sprintf("validate/%dKB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(size))
			timed(b, func() {
				if _, _, err := ValidateResultOutput(out, in, nil); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

func BenchmarkInstance(b *testing.B) {
	rt := newRuntime(b, Options{})
	s := load(b, rt, spec(b, "redact", "redact", result, map[string]string{"pattern": "x"}))
	p := s.pools[0]
	b.Run("instantiate+warmup", func(b *testing.B) {
		timed(b, func() {
			in, err := p.newInstance(context.Background(), false)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			in.close(context.Background())
			b.StartTimer()
		})
	})
}

func BenchmarkCompile(b *testing.B) {
	sp := normalize(spec(b, "redact", "redact", result, nil))
	wasm, err := os.ReadFile(sp.Path)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	compileWith := func(b *testing.B, cache wazero.CompilationCache) {
		c, err := compile(ctx, cache, sp, wasm)
		if err != nil {
			b.Fatal(err)
		}
		c.Close(ctx)
	}
	b.Run("cold", func(b *testing.B) {
		timed(b, func() {
			cache := wazero.NewCompilationCache()
			compileWith(b, cache)
			cache.Close(ctx)
		})
	})
	b.Run("warm-memory", func(b *testing.B) {
		cache := wazero.NewCompilationCache()
		defer cache.Close(ctx)
		compileWith(b, cache)
		timed(b, func() { compileWith(b, cache) })
	})
	b.Run("warm-disk", func(b *testing.B) {
		dir := filepath.Join(b.TempDir(), "cache")
		cache, err := wazero.NewCompilationCacheWithDir(dir)
		if err != nil {
			b.Fatal(err)
		}
		compileWith(b, cache)
		cache.Close(ctx)
		timed(b, func() {
			cache, err := wazero.NewCompilationCacheWithDir(dir) // a restart
			if err != nil {
				b.Fatal(err)
			}
			compileWith(b, cache)
			cache.Close(ctx)
		})
	})
}
