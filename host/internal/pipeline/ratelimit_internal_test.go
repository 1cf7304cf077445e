package pipeline

import (
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/config"
)

// TestLimiter drives the per-principal limits with a fake clock.
func TestLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := &Limiter{now: func() time.Time { return now }}
	rate := config.RateLimit{CallsPerSecond: 2, Burst: 3}
	var done []func()
	for i := range 3 {
		d, err := l.Admit("p", rate)
		if err != nil {
			t.Fatalf("call %d of the burst: %v", i, err)
		}
		done = append(done, d)
	}
	_, err := l.Admit("p", rate)
	rl, ok := err.(*RateLimitError)
	if !ok || rl.Concurrent || rl.RetryAfter != 500*time.Millisecond {
		t.Fatalf("past the burst: %v, want a rate refusal retrying in 500ms", err)
	}
	if _, err := l.Admit("q", rate); err != nil {
		t.Fatalf("another principal: %v", err)
	}
	now = now.Add(time.Second) // two calls' worth
	for i := range 2 {
		if _, err := l.Admit("p", rate); err != nil {
			t.Fatalf("refilled call %d: %v", i, err)
		}
	}
	if _, err := l.Admit("p", rate); err == nil {
		t.Fatal("a third call after a one-second refill was admitted")
	}
	now = now.Add(time.Hour) // the bucket holds at most the burst
	for i := range 3 {
		if _, err := l.Admit("p", rate); err != nil {
			t.Fatalf("call %d after an hour: %v", i, err)
		}
	}
	if _, err := l.Admit("p", rate); err == nil {
		t.Fatal("the bucket grew past its burst")
	}

	conc := config.RateLimit{ConcurrentCalls: 2}
	d1, err := l.Admit("c", conc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Admit("c", conc); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Admit("c", conc); err == nil || !err.(*RateLimitError).Concurrent {
		t.Fatalf("third concurrent call: %v", err)
	}
	d1()
	d1() // twice frees one place only
	if _, err := l.Admit("c", conc); err != nil {
		t.Fatalf("after one ended: %v", err)
	}
	if _, err := l.Admit("c", conc); err == nil {
		t.Fatal("a second end freed a second place")
	}
	for range 1000 {
		if _, err := l.Admit("off", config.RateLimit{}); err != nil {
			t.Fatal("an off limit refused a call")
		}
	}
	for _, d := range done {
		d()
	}
}
