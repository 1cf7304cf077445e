package cache

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is an injected clock: time moves only when a test says so.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newTestCache returns a cache on a fake clock.
func newTestCache(o Options) (*Cache, *fakeClock) {
	clk := newClock()
	o.Now = clk.Now
	return New(o), clk
}

// fetcher returns a fetch func that counts its calls and answers v with m.
func fetcher(calls *atomic.Int32, v any, m Meta) func(context.Context) (any, Meta, error) {
	return func(context.Context) (any, Meta, error) {
		calls.Add(1)
		return v, m, nil
	}
}

var (
	pub  = func(ttl time.Duration) Meta { return Meta{TTL: ttl, Scope: ScopePublic} }
	priv = func(ttl time.Duration) Meta { return Meta{TTL: ttl, Scope: ScopePrivate} }
)

var (
	toolsKey = Key{Server: "a", Method: "tools/list"}
	readKey  = func(uri string) Key { return Key{Server: "a", Method: "resources/read", Params: uri} }
)

// mustDo calls c.Do and fails the test on an error.
func mustDo(t testing.TB, c *Cache, k Key, principal string, fetch func(context.Context) (any, Meta, error)) (any, bool) {
	t.Helper()
	v, hit, err := c.Do(context.Background(), k, principal, fetch)
	if err != nil {
		t.Fatalf("Do(%v, %q): %v", k, principal, err)
	}
	return v, hit
}

// checkInvariants compares the bookkeeping with the maps it summarises.
func checkInvariants(t testing.TB, c *Cache) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	var n, reads int64
	for gk, byParams := range c.groups {
		if len(byParams) == 0 {
			t.Errorf("empty group %v kept", gk)
		}
		for params, parts := range byParams {
			if len(parts) == 0 {
				t.Errorf("empty params %v %q kept", gk, params)
			}
			for part, e := range parts {
				n++
				if e.gk != gk || e.params != params || e.part != part {
					t.Errorf("entry at %v %q %v records %v %q %v", gk, params, part, e.gk, e.params, e.part)
				}
				if (gk.method == methodRead) != (e.lru != nil) {
					t.Errorf("entry %v %q: LRU element %v", gk, params, e.lru != nil)
				}
				if e.lru != nil {
					reads++
				}
			}
		}
	}
	if n != c.entries {
		t.Errorf("entries counter %d, maps hold %d", c.entries, n)
	}
	if int64(c.reads.Len()) != reads {
		t.Errorf("LRU list holds %d, maps hold %d reads", c.reads.Len(), reads)
	}
	if c.reads.Len() > c.maxReads {
		t.Errorf("LRU list holds %d > MaxReads %d", c.reads.Len(), c.maxReads)
	}
}
