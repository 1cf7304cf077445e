package wasmguest_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/internal/wasmguest"
)

func TestLogLimiter(t *testing.T) {
	// calls are n calls of Allow, each at the same time (after the first
	// call's) and each with the same answer.
	type calls struct {
		At      time.Duration
		N       int
		OK      bool
		Dropped int
	}
	burst := calls{N: wasmguest.LogBurst, OK: true}
	tests := []struct {
		name  string
		calls []calls
	}{
		{"a burst, then refused", []calls{
			burst,
			{N: 3, OK: false},
		}},
		{"a token back each 1/LogPerSecond s, with the count of refused lines", []calls{
			burst,
			{N: 2, OK: false},
			{At: time.Second / wasmguest.LogPerSecond, N: 1, OK: true, Dropped: 2},
			{At: time.Second / wasmguest.LogPerSecond, N: 1, OK: false},
			{At: 2 * time.Second / wasmguest.LogPerSecond, N: 1, OK: true, Dropped: 1},
			{At: 2 * time.Second / wasmguest.LogPerSecond, N: 1, OK: false},
		}},
		{"half a token is not enough", []calls{
			burst,
			{At: time.Second / wasmguest.LogPerSecond / 2, N: 1, OK: false},
			{At: time.Second / wasmguest.LogPerSecond, N: 1, OK: true, Dropped: 1},
		}},
		{"the count is reported once", []calls{
			burst,
			{N: 1, OK: false},
			{At: time.Hour, N: 1, OK: true, Dropped: 1},
			{At: time.Hour, N: 1, OK: true},
		}},
		{"a quiet guest gets a burst back, no more", []calls{
			{N: 1, OK: true},
			{At: time.Hour, N: wasmguest.LogBurst, OK: true},
			{At: time.Hour, N: 1, OK: false},
		}},
		{"after a burst, LogPerSecond is never refused", []calls{
			burst,
			{At: 1 * time.Second / wasmguest.LogPerSecond, N: 1, OK: true},
			{At: 2 * time.Second / wasmguest.LogPerSecond, N: 1, OK: true},
			{At: 3 * time.Second / wasmguest.LogPerSecond, N: 1, OK: true},
			{At: 4 * time.Second / wasmguest.LogPerSecond, N: 1, OK: true},
		}},
	}
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l wasmguest.LogLimiter
			for i, c := range tt.calls {
				for j := range c.N {
					ok, dropped := l.Allow(start.Add(c.At))
					got := calls{At: c.At, N: c.N, OK: ok, Dropped: dropped}
					if diff := cmp.Diff(c, got); diff != "" {
						t.Fatalf("calls %d, call %d (-want +got):\n%s", i, j, diff)
					}
				}
			}
		})
	}
}

// TestLogLimiterConcurrent lets many goroutines log at once: exactly a
// burst gets through, and the next line allowed reports the rest.
func TestLogLimiterConcurrent(t *testing.T) {
	const goroutines, each = 8, 50
	var (
		l       wasmguest.LogLimiter
		allowed atomic.Int64
		wg      sync.WaitGroup
	)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for range goroutines {
		wg.Go(func() {
			for range each {
				if ok, _ := l.Allow(now); ok {
					allowed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := allowed.Load(); n != wasmguest.LogBurst {
		t.Errorf("%d lines allowed at once, want %d", n, wasmguest.LogBurst)
	}
	ok, dropped := l.Allow(now.Add(time.Second))
	if want := goroutines*each - wasmguest.LogBurst; !ok || dropped != want {
		t.Errorf("Allow a second later = %v, %d; want true, %d", ok, dropped, want)
	}
}

func ExampleLogLimiter() {
	var l wasmguest.LogLimiter
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for range wasmguest.LogBurst + 3 {
		l.Allow(now)
	}
	ok, dropped := l.Allow(now.Add(time.Second))
	fmt.Println(ok, dropped)
	// Output: true 3
}
