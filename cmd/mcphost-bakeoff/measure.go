package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// latencyBatch is one batch of the latency measure: each side's p50 and
// p99 over its calls of the batch, in milliseconds.
type latencyBatch struct {
	Rounds int                `json:"rounds"`
	P50    map[string]float64 `json:"p50_ms"`
	P99    map[string]float64 `json:"p99_ms"`
}

// measureLatency times one caller per side: o.Warmup rounds, then
// o.Batches batches of o.Rounds rounds, each round calling every side
// once, the starting side rotating from round to round.
func (r *runner) measureLatency(ctx context.Context, sides []*side, version string) ([]latencyBatch, error) {
	callers := make([]*caller, len(sides))
	defer func() {
		for _, c := range callers {
			if c != nil {
				c.close()
			}
		}
	}()
	for i, s := range sides {
		c, err := connect(ctx, s, version, r.o.CallTimeout)
		if err != nil {
			return nil, err
		}
		callers[i] = c
	}
	n := len(sides)
	round := 0
	// one runs a round and appends each side's time to ds (nil: warm-up).
	one := func(ds [][]time.Duration) error {
		start := round % n
		round++
		for k := range n {
			i := (start + k) % n
			t0 := time.Now()
			if err := callers[i].call(ctx); err != nil {
				return err
			}
			if ds != nil {
				ds[i] = append(ds[i], time.Since(t0))
			}
		}
		return nil
	}
	r.logger.Info("latency: warm-up", "era", version, "rounds", r.o.Warmup, "sides", n)
	for range r.o.Warmup {
		if err := one(nil); err != nil {
			return nil, fmt.Errorf("latency warm-up: %w", err)
		}
	}
	var out []latencyBatch
	for b := range r.o.Batches {
		ds := make([][]time.Duration, n)
		for i := range ds {
			ds[i] = make([]time.Duration, 0, r.o.Rounds)
		}
		for range r.o.Rounds {
			if err := one(ds); err != nil {
				return out, fmt.Errorf("latency batch %d: %w", b+1, err)
			}
		}
		lb := latencyBatch{Rounds: r.o.Rounds, P50: map[string]float64{}, P99: map[string]float64{}}
		args := []any{"era", version, "batch", fmt.Sprintf("%d/%d", b+1, r.o.Batches)}
		for i, s := range sides {
			lb.P50[s.name], lb.P99[s.name] = ms(percentile(ds[i], 50)), ms(percentile(ds[i], 99))
			args = append(args, s.name+"_p50_ms", round3(lb.P50[s.name]))
		}
		r.logger.Info("latency: batch done", args...)
		out = append(out, lb)
	}
	return out, nil
}

// window is one side alone under load for one throughput window.
type window struct {
	Side    string  `json:"side"`
	Callers int     `json:"callers"`
	Rep     int     `json:"rep"`
	Calls   int64   `json:"calls"`
	Errors  int64   `json:"errors"`
	Seconds float64 `json:"seconds"`
	// CPUSeconds is the proxy process's utime+stime over the window (-1
	// for direct, which has no proxy process, or when /proc failed).
	CPUSeconds float64 `json:"cpu_seconds"`
	// PeakRSS is VmHWM in the window (reset through clear_refs before
	// it); RSSKind says "VmRSS" when the reset failed and the figure is
	// the resident set at the end instead, "" when there is none.
	PeakRSS  int64  `json:"peak_rss_bytes"`
	RSSKind  string `json:"rss_kind,omitempty"`
	FirstErr string `json:"first_error,omitempty"`
}

// callsPerSecond is the window's throughput.
func (w window) callsPerSecond() float64 {
	if w.Seconds <= 0 {
		return 0
	}
	return float64(w.Calls) / w.Seconds
}

// cpuPer1k is the proxy's CPU seconds per 1,000 calls, or 0 when not
// measured.
func (w window) cpuPer1k() float64 {
	if w.CPUSeconds < 0 || w.Calls == 0 {
		return 0
	}
	return w.CPUSeconds / float64(w.Calls) * 1000
}

// measureThroughput runs, for each caller count, o.Reps repetitions of one
// window per side, the order of the sides rotating per repetition.
func (r *runner) measureThroughput(ctx context.Context, sides []*side, version string) ([]window, error) {
	var out []window
	n := len(sides)
	for _, callers := range r.o.Callers {
		for rep := range r.o.Reps {
			for k := range n {
				s := sides[(rep+k)%n]
				w, err := r.window(ctx, s, version, callers)
				w.Rep = rep + 1
				if err != nil {
					return out, fmt.Errorf("throughput %s, %d callers, repetition %d: %w", s.name, callers, rep+1, err)
				}
				out = append(out, w)
				r.logger.Info("throughput: window done", "era", version, "callers", callers, "rep", fmt.Sprintf("%d/%d", rep+1, r.o.Reps),
					"side", s.name, "calls_per_s", round3(w.callsPerSecond()), "cpu_s_per_1k", round3(w.cpuPer1k()), "errors", w.Errors)
			}
		}
	}
	return out, nil
}

// warmCalls is how many calls each caller makes before a window.
const warmCalls = 10

// window measures side s alone with n callers, each its own session and
// transport, connected and warmed before the window opens.
func (r *runner) window(ctx context.Context, s *side, version string, n int) (window, error) {
	w := window{Side: s.name, Callers: n, CPUSeconds: -1}
	cs := make([]*caller, n)
	defer func() {
		for _, c := range cs {
			if c != nil {
				c.close()
			}
		}
	}()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c, err := connect(ctx, s, version, r.o.CallTimeout)
			if err != nil {
				errs[i] = err
				return
			}
			cs[i] = c
			for range warmCalls {
				if err := c.call(ctx); err != nil {
					errs[i] = fmt.Errorf("warm-up: %w", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return w, err
	}
	var cpu0 time.Duration
	pid := 0
	if s.proc != nil {
		pid = s.proc.pid()
		if err := resetPeakRSS(pid); err != nil {
			w.RSSKind = "VmRSS"
			r.logger.Warn("peak RSS cannot be reset; reporting VmRSS at the end of the window", "side", s.name, "err", err)
		} else {
			w.RSSKind = "VmHWM"
		}
		var err error
		if cpu0, err = procCPU(pid); err != nil {
			return w, err
		}
	}
	var calls, failed atomic.Int64
	var firstErr atomic.Value
	start := time.Now()
	end := start.Add(r.o.Window)
	for _, c := range cs {
		wg.Go(func() {
			for time.Now().Before(end) && ctx.Err() == nil {
				if err := c.call(ctx); err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				calls.Add(1)
			}
		})
	}
	wg.Wait()
	w.Seconds = time.Since(start).Seconds()
	w.Calls, w.Errors = calls.Load(), failed.Load()
	if e, ok := firstErr.Load().(string); ok {
		w.FirstErr = e
	}
	if pid != 0 {
		cpu1, err := procCPU(pid)
		if err != nil {
			return w, err
		}
		w.CPUSeconds = (cpu1 - cpu0).Seconds()
		if w.PeakRSS, err = procStatus(pid, w.RSSKind); err != nil {
			return w, err
		}
	}
	if err := ctx.Err(); err != nil {
		return w, err
	}
	return w, nil
}

// round3 rounds x to three decimals for progress lines.
func round3(x float64) float64 { return float64(int64(x*1000+0.5)) / 1000 }
