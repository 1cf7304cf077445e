package pipeline

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host/config"
)

// RateLimitError is a call refused by its principal's `rate_limit`: too
// many calls per second, or too many running at once. The API answers 429
// with Retry-After.
type RateLimitError struct {
	Principal  string
	Concurrent bool          // the concurrent_calls bound, not the rate
	Limit      float64       // the bound that refused the call
	RetryAfter time.Duration // when a call would be admitted again (at least 1s for the concurrency bound: calls end when they end)
}

func (e *RateLimitError) Error() string {
	if e.Concurrent {
		return fmt.Sprintf("principal %q already has %d calls running (its concurrent_calls limit); wait for one to finish", e.Principal, int(e.Limit))
	}
	return fmt.Sprintf("principal %q is calling faster than its limit of %g calls per second; retry in %s", e.Principal, e.Limit, e.RetryAfter.Round(time.Millisecond))
}

// Limiter keeps each principal's token bucket and running-call count. It
// lives on the host, so a reload that changes the limits keeps what each
// principal has already used; the limits themselves come with each call.
type Limiter struct {
	mu    sync.Mutex
	state map[string]*principalUse
	now   func() time.Time // time.Now; tests replace it
}

type principalUse struct {
	tokens  float64   // calls allowed now, at most the burst
	last    time.Time // when tokens was last brought up to date
	running int
}

// Admit takes one call of principal against limit and returns the function
// that ends it, or a *RateLimitError. An off limit admits everything.
func (l *Limiter) Admit(principal string, limit config.RateLimit) (func(), error) {
	if limit.Off() {
		return func() {}, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state == nil {
		l.state = map[string]*principalUse{}
	}
	now := time.Now()
	if l.now != nil {
		now = l.now()
	}
	u := l.state[principal]
	if u == nil {
		u = &principalUse{tokens: float64(limit.Burst), last: now}
		l.state[principal] = u
	}
	if limit.ConcurrentCalls > 0 && u.running >= limit.ConcurrentCalls {
		return nil, &RateLimitError{Principal: principal, Concurrent: true, Limit: float64(limit.ConcurrentCalls), RetryAfter: time.Second}
	}
	if rate := limit.CallsPerSecond; rate > 0 {
		burst := float64(max(limit.Burst, 1))
		u.tokens = math.Min(burst, u.tokens+now.Sub(u.last).Seconds()*rate)
		u.last = now
		if u.tokens < 1 {
			wait := time.Duration((1 - u.tokens) / rate * float64(time.Second))
			return nil, &RateLimitError{Principal: principal, Limit: rate, RetryAfter: wait}
		}
		u.tokens--
	}
	u.running++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			u.running--
		})
	}, nil
}
