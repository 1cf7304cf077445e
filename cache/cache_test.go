package cache

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFreshness covers reuse within the TTL (one fetch for two Do calls,
// protocol.md §4.2 item 1), TTL 0/absent/negative (every Do fetches, item 2)
// and the MaxTTL cap (item 13).
func TestFreshness(t *testing.T) {
	const day = 24 * time.Hour
	tests := []struct {
		name        string
		opts        Options
		meta        Meta
		advance     time.Duration // between the two Do calls
		wantFetches int32
	}{
		{"ttl 60s reused", Options{}, pub(time.Minute), 0, 1},
		{"ttl 60s reused just before expiry", Options{}, pub(time.Minute), time.Minute - time.Millisecond, 1},
		{"ttl 60s stale at expiry", Options{}, pub(time.Minute), time.Minute, 2},
		{"private ttl reused by the same principal", Options{}, priv(time.Minute), time.Second, 1},
		{"ttl 0", Options{}, pub(0), 0, 2},
		{"ttl absent", Options{}, MetaOf(&mcp.ListToolsResult{}), 0, 2},
		{"ttl negative", Options{}, pub(-time.Second), 0, 2},
		{"ttl 5 days fresh before 24h", Options{}, pub(5 * day), day - time.Millisecond, 1},
		{"ttl 5 days capped at 24h", Options{}, pub(5 * day), day, 2},
		{"ttl 5 days capped at a configured 1h", Options{MaxTTL: time.Hour}, pub(5 * day), time.Hour, 2},
		{"ttlMs of days via MetaOf", Options{}, MetaOf(&mcp.ListToolsResult{Cacheable: mcp.Cacheable{TTLMs: 5 * 86_400_000, CacheScope: "public"}}), day, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, clk := newTestCache(tt.opts)
			var calls atomic.Int32
			fetch := fetcher(&calls, "tools", tt.meta)
			if _, hit := mustDo(t, c, toolsKey, "alice", fetch); hit {
				t.Fatal("first Do was a hit")
			}
			clk.Advance(tt.advance)
			v, hit := mustDo(t, c, toolsKey, "alice", fetch)
			if v != "tools" {
				t.Errorf("second Do = %v, want tools", v)
			}
			if got := calls.Load(); got != tt.wantFetches {
				t.Errorf("fetches = %d, want %d", got, tt.wantFetches)
			}
			if wantHit := tt.wantFetches == 1; hit != wantHit {
				t.Errorf("second Do hit = %v, want %v", hit, wantHit)
			}
			// Stale or not, the entry is stored for name lookups; it is
			// fresh now only if its TTL is positive (a refetch renewed it).
			if _, fresh, ok := c.Peek(toolsKey, "alice"); !ok || fresh != (tt.meta.TTL > 0) {
				t.Errorf("Peek fresh=%v ok=%v, want fresh=%v ok=true", fresh, ok, tt.meta.TTL > 0)
			}
		})
	}
}

// TestScope covers protocol.md §4.2 item 3: private is invisible to another
// principal, public is shared, an absent or unknown scope is private.
func TestScope(t *testing.T) {
	tests := []struct {
		name           string
		scope          string
		storedBy, from string
		wantHit        bool
	}{
		{"public shared", ScopePublic, "alice", "bob", true},
		{"public to the same principal", ScopePublic, "alice", "alice", true},
		{"private to the same principal", ScopePrivate, "alice", "alice", true},
		{"private invisible to another", ScopePrivate, "alice", "bob", false},
		{"absent scope is private", "", "alice", "bob", false},
		{"unknown scope is private", "Public", "alice", "bob", false},
		{"anonymous private is not public", ScopePrivate, "", "bob", false},
		{"anonymous private to anonymous", ScopePrivate, "", "", true},
		{"private invisible to anonymous", ScopePrivate, "alice", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newTestCache(Options{})
			var calls atomic.Int32
			mustDo(t, c, toolsKey, tt.storedBy, fetcher(&calls, "stored", Meta{TTL: time.Hour, Scope: tt.scope}))
			v, hit := mustDo(t, c, toolsKey, tt.from, fetcher(&calls, "fetched", Meta{TTL: time.Hour, Scope: ScopePrivate}))
			want := "fetched"
			if tt.wantHit {
				want = "stored"
			}
			if hit != tt.wantHit || v != want {
				t.Errorf("Do from %q = %v hit=%v, want %v hit=%v", tt.from, v, hit, want, tt.wantHit)
			}
			if !tt.wantHit {
				if v, _, _ := c.Peek(toolsKey, tt.from); v == "stored" {
					t.Errorf("Peek from %q sees the other principal's private entry", tt.from)
				}
			}
			checkInvariants(t, c)
		})
	}
}

// TestLookupOrder: the principal's private partition comes first, then the
// public one; a public answer replaces the principal's own private copy.
func TestLookupOrder(t *testing.T) {
	c, _ := newTestCache(Options{})
	var calls atomic.Int32
	mustDo(t, c, toolsKey, "alice", fetcher(&calls, "alice-private", priv(time.Hour)))
	mustDo(t, c, toolsKey, "bob", fetcher(&calls, "public", pub(time.Hour)))
	for principal, want := range map[string]string{"alice": "alice-private", "bob": "public", "carol": "public"} {
		if v, hit := mustDo(t, c, toolsKey, principal, fetcher(&calls, "refetched", pub(time.Hour))); !hit || v != want {
			t.Errorf("Do(%s) = %v hit=%v, want %v from the cache", principal, v, hit, want)
		}
	}

	// alice's private copy goes stale; a fresh public one is served instead.
	c2, clk := newTestCache(Options{})
	mustDo(t, c2, toolsKey, "alice", fetcher(&calls, "alice-private", priv(time.Minute)))
	clk.Advance(time.Minute)
	mustDo(t, c2, toolsKey, "bob", fetcher(&calls, "public", pub(time.Hour)))
	if v, hit := mustDo(t, c2, toolsKey, "alice", fetcher(&calls, "refetched", pub(time.Hour))); !hit || v != "public" {
		t.Errorf("Do(alice) = %v hit=%v, want the fresh public entry", v, hit)
	}
	if v, fresh, _ := c2.Peek(toolsKey, "alice"); v != "public" || !fresh {
		t.Errorf("Peek(alice) = %v fresh=%v, want the fresh public entry over the stale private one", v, fresh)
	}

	// alice refetches and the server now says public: her private copy goes.
	clk.Advance(2 * time.Hour)
	mustDo(t, c2, toolsKey, "alice", fetcher(&calls, "public-2", pub(time.Hour)))
	if got := c2.Stats().Entries; got != 1 {
		t.Errorf("Entries = %d, want 1 (the private copy replaced by the public answer)", got)
	}
	checkInvariants(t, c2)
}

// TestAggregateInCache stores a three-page walk as one entry (protocol.md
// §4.2 item 4): minimum TTL, private if any page is.
func TestAggregateInCache(t *testing.T) {
	c, clk := newTestCache(Options{})
	pages := map[string]fakePage{
		"":   {items: []string{"a", "b"}, next: "p2", meta: pub(time.Minute)},
		"p2": {items: []string{"c"}, next: "p3", meta: priv(10 * time.Second)},
		"p3": {items: []string{"d"}, meta: pub(time.Hour)},
	}
	var walks atomic.Int32
	fetch := func(ctx context.Context) (any, Meta, error) {
		walks.Add(1)
		items, m, err := Walk(ctx, "tools/list", pager(pages, nil))
		return items, m, err
	}
	v, _ := mustDo(t, c, toolsKey, "alice", fetch)
	if diff := cmp.Diff([]string{"a", "b", "c", "d"}, v); diff != "" {
		t.Errorf("aggregate (-want +got):\n%s", diff)
	}
	clk.Advance(9 * time.Second)
	if _, hit := mustDo(t, c, toolsKey, "alice", fetch); !hit {
		t.Error("alice missed within the minimum TTL")
	}
	if _, hit := mustDo(t, c, toolsKey, "bob", fetch); hit {
		t.Error("bob was served an aggregate with a private page")
	}
	clk.Advance(time.Second)
	if _, hit := mustDo(t, c, toolsKey, "alice", fetch); hit {
		t.Error("alice hit after the minimum TTL (10s) passed")
	}
	if got := walks.Load(); got != 3 {
		t.Errorf("walks = %d, want 3", got)
	}
}

// TestBrokenWalkStoresNothing: a walk that fails the loop guard stores
// nothing (protocol.md §4.2 item 5).
func TestBrokenWalkStoresNothing(t *testing.T) {
	c, _ := newTestCache(Options{})
	pages := map[string]fakePage{
		"":  {items: []string{"a"}, next: "x", meta: pub(time.Hour)},
		"x": {items: []string{"b"}, next: "x", meta: pub(time.Hour)},
	}
	_, _, err := c.Do(context.Background(), toolsKey, "alice", func(ctx context.Context) (any, Meta, error) {
		return Walk(ctx, "tools/list", pager(pages, nil))
	})
	if !errors.Is(err, ErrRepeatedCursor) {
		t.Fatalf("Do error = %v, want ErrRepeatedCursor", err)
	}
	if _, _, ok := c.Peek(toolsKey, "alice"); ok {
		t.Error("a broken walk was stored")
	}
	if diff := cmp.Diff(Stats{Misses: 1}, c.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
}

// TestInvalidationDuringFetch: a fetch that started before an invalidation
// returns its value but does not store it (protocol.md §4.2 item 7), and a
// caller arriving after the invalidation does not join it.
func TestInvalidationDuringFetch(t *testing.T) {
	templatesKey := Key{Server: "a", Method: "resources/templates/list"}
	tests := []struct {
		name       string
		key        Key
		invalidate func(*Cache)
		wantStored bool
	}{
		{"list_changed", toolsKey, func(c *Cache) { c.Invalidate("a", "tools/list") }, false},
		{"resources list_changed covers templates", templatesKey, func(c *Cache) { c.Invalidate("a", "resources/list") }, false},
		{"server dropped", toolsKey, func(c *Cache) { c.DropServer("a") }, false},
		{"resources/updated", readKey("file:///x"), func(c *Cache) { c.InvalidateURI("a", "file:///x") }, false},
		{"identity changed", toolsKey, func(c *Cache) { c.Connected("a", ServerIdentity{Version: "2"}) }, false},
		// Controls: unrelated invalidations leave the fetch alone.
		{"other method", toolsKey, func(c *Cache) { c.Invalidate("a", "prompts/list") }, true},
		{"other server", toolsKey, func(c *Cache) { c.Invalidate("b", "tools/list") }, true},
		{"templates do not cover resources/list", Key{Server: "a", Method: "resources/list"}, func(c *Cache) { c.Invalidate("a", "resources/templates/list") }, true},
		{"other URI", readKey("file:///x"), func(c *Cache) { c.InvalidateURI("a", "file:///y") }, true},
		{"same identity", toolsKey, func(c *Cache) { c.Connected("a", ServerIdentity{Version: "1"}) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := New(Options{})
				c.Connected("a", ServerIdentity{Version: "1"})
				started, release := make(chan struct{}), make(chan struct{})
				type result struct {
					v   any
					hit bool
					err error
				}
				first := make(chan result, 1)
				go func() {
					v, hit, err := c.Do(t.Context(), tt.key, "alice", func(context.Context) (any, Meta, error) {
						close(started)
						<-release
						return "old", pub(time.Hour), nil
					})
					first <- result{v, hit, err}
				}()
				<-started
				tt.invalidate(c)

				// A caller arriving now starts its own fetch unless the
				// invalidation was unrelated, in which case it joins.
				second := make(chan result, 1)
				var calls atomic.Int32
				go func() {
					v, hit, err := c.Do(t.Context(), tt.key, "alice", fetcher(&calls, "new", pub(0)))
					second <- result{v, hit, err}
				}()
				synctest.Wait()
				if tt.wantStored == (calls.Load() == 1) {
					t.Errorf("a caller after the invalidation fetched %d times; want a new fetch: %v", calls.Load(), !tt.wantStored)
				}
				close(release)
				if r := <-first; r != (result{"old", false, nil}) {
					t.Errorf("first Do = %+v, want the fetched value, no hit", r)
				}
				wantSecond := result{"new", false, nil}
				if tt.wantStored {
					wantSecond.v = "old"
				}
				if r := <-second; r != wantSecond {
					t.Errorf("second Do = %+v, want %+v", r, wantSecond)
				}
				v, fresh, ok := c.Peek(tt.key, "alice")
				switch {
				case tt.wantStored && (v != "old" || !fresh):
					t.Errorf("Peek = %v fresh=%v ok=%v, want the old value stored", v, fresh, ok)
				case !tt.wantStored && v == "old":
					t.Error("a fetch started before the invalidation was stored")
				}
				checkInvariants(t, c)
			})
		})
	}
}

// TestInvalidate covers protocol.md §4.2 item 8 and the server-level drops.
func TestInvalidate(t *testing.T) {
	keys := []Key{
		{"a", "tools/list", ""},
		{"a", "prompts/list", ""},
		{"a", "resources/list", ""},
		{"a", "resources/templates/list", ""},
		{"a", "resources/read", "file:///1"},
		{"a", "resources/read", "file:///2"},
		{"b", "tools/list", ""},
		{"b", "resources/read", "file:///1"},
	}
	tests := []struct {
		name string
		op   func(*Cache)
		gone []Key // in every partition
	}{
		{"tools list_changed", func(c *Cache) { c.Invalidate("a", "tools/list") }, []Key{keys[0]}},
		{"resources list_changed drops templates", func(c *Cache) { c.Invalidate("a", "resources/list") }, []Key{keys[2], keys[3]}},
		{"templates list_changed alone", func(c *Cache) { c.Invalidate("a", "resources/templates/list") }, []Key{keys[3]}},
		{"resources/updated drops one read", func(c *Cache) { c.InvalidateURI("a", "file:///1") }, []Key{keys[4]}},
		{"resources/updated of an unknown URI", func(c *Cache) { c.InvalidateURI("a", "file:///9") }, nil},
		{"server dropped", func(c *Cache) { c.DropServer("a") }, keys[:6]},
		{"unknown server dropped", func(c *Cache) { c.DropServer("z") }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newTestCache(Options{})
			var calls atomic.Int32
			for _, k := range keys {
				mustDo(t, c, k, "alice", fetcher(&calls, k, priv(time.Hour)))
				mustDo(t, c, k, "bob", fetcher(&calls, k, pub(0))) // legacy-style TTL 0
			}
			tt.op(c)
			gone := map[Key]bool{}
			for _, k := range tt.gone {
				gone[k] = true
			}
			for _, k := range keys {
				for _, p := range []string{"alice", "bob"} {
					if _, _, ok := c.Peek(k, p); ok == gone[k] {
						t.Errorf("Peek(%v, %s) ok=%v, want %v", k, p, ok, !gone[k])
					}
				}
			}
			if got, want := c.Stats().Entries, int64(2*(len(keys)-len(tt.gone))); got != want {
				t.Errorf("Entries = %d, want %d", got, want)
			}
			checkInvariants(t, c)
		})
	}
}

// TestConnected covers protocol.md §4.2 item 9: the same identity keeps the
// entries across a reconnect, a changed one drops them.
func TestConnected(t *testing.T) {
	base := func() ServerIdentity {
		return ServerIdentity{
			Info:         &mcp.Implementation{Name: "srv", Version: "1.0"},
			Era:          "modern",
			Version:      "2026-07-28",
			Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
		}
	}
	tests := []struct {
		name     string
		change   func(*ServerIdentity)
		wantDrop bool
	}{
		{"same identity", func(*ServerIdentity) {}, false},
		{"same identity, new pointers", func(id *ServerIdentity) { id.Info = &mcp.Implementation{Name: "srv", Version: "1.0"} }, false},
		{"serverInfo version", func(id *ServerIdentity) { id.Info.Version = "1.1" }, true},
		{"era", func(id *ServerIdentity) { id.Era = "legacy" }, true},
		{"negotiated version", func(id *ServerIdentity) { id.Version = "2025-11-25" }, true},
		{"capabilities", func(id *ServerIdentity) { id.Capabilities.Prompts = &mcp.PromptCapabilities{} }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newTestCache(Options{})
			if c.Connected("a", base()) {
				t.Error("the first connect dropped entries")
			}
			var calls atomic.Int32
			mustDo(t, c, toolsKey, "alice", fetcher(&calls, "tools", pub(time.Hour)))
			other := Key{Server: "b", Method: "tools/list"}
			mustDo(t, c, other, "alice", fetcher(&calls, "tools", pub(time.Hour)))
			id := base()
			tt.change(&id)
			if got := c.Connected("a", id); got != tt.wantDrop {
				t.Errorf("Connected = %v, want %v", got, tt.wantDrop)
			}
			if _, _, ok := c.Peek(toolsKey, "alice"); ok == tt.wantDrop {
				t.Errorf("entry kept = %v, want %v", ok, !tt.wantDrop)
			}
			if _, _, ok := c.Peek(other, "alice"); !ok {
				t.Error("another server's entry was dropped")
			}
		})
	}
}

// TestNoStore covers protocol.md §4.2 item 10: MRTR results and retries are
// never stored or served.
func TestNoStore(t *testing.T) {
	c, _ := newTestCache(Options{})
	var calls atomic.Int32
	k := readKey("file:///form")
	for i := range 3 {
		v, hit := mustDo(t, c, k, "alice", fetcher(&calls, "input_required", Meta{TTL: time.Hour, Scope: ScopePublic, NoStore: true}))
		if hit || v != "input_required" {
			t.Errorf("Do #%d = %v hit=%v", i, v, hit)
		}
	}
	if got := calls.Load(); got != 3 {
		t.Errorf("fetches = %d, want 3", got)
	}
	if _, _, ok := c.Peek(k, "alice"); ok {
		t.Error("a NoStore result was stored")
	}
	if diff := cmp.Diff(Stats{Misses: 3}, c.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
}

// TestNoStoreNotShared: callers that joined a fetch whose answer is NoStore
// do not receive it; each runs its own.
func TestNoStoreNotShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := New(Options{})
		release := make(chan struct{})
		var calls atomic.Int32
		fetch := func(context.Context) (any, Meta, error) {
			n := calls.Add(1)
			<-release
			return fmt.Sprint("requestState-", n), Meta{NoStore: true}, nil
		}
		const n = 5
		got := make([]any, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				v, _, err := c.Do(t.Context(), readKey("file:///form"), "alice", fetch)
				if err != nil {
					t.Error(err)
				}
				got[i] = v
			})
		}
		synctest.Wait()
		if c := calls.Load(); c != 1 {
			t.Fatalf("fetches before release = %d, want 1 (the others wait)", c)
		}
		close(release)
		wg.Wait()
		if c := calls.Load(); c != n {
			t.Errorf("fetches = %d, want %d", c, n)
		}
		seen := map[any]bool{}
		for _, v := range got {
			if seen[v] {
				t.Errorf("two callers got %v", v)
			}
			seen[v] = true
		}
	})
}

// TestSingleflight covers protocol.md §4.2 item 11: N concurrent misses
// share one fetch; different principals do not.
func TestSingleflight(t *testing.T) {
	tests := []struct {
		name        string
		principals  []string
		wantFetches int32
	}{
		{"one principal", []string{"alice"}, 1},
		{"two principals", []string{"alice", "bob"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := New(Options{})
				release := make(chan struct{})
				var calls atomic.Int32
				fetch := func(context.Context) (any, Meta, error) {
					calls.Add(1)
					<-release
					return "tools", pub(time.Minute), nil
				}
				const perPrincipal = 20
				var wg sync.WaitGroup
				for _, p := range tt.principals {
					for range perPrincipal {
						wg.Go(func() {
							v, hit, err := c.Do(t.Context(), toolsKey, p, fetch)
							if err != nil || hit || v != "tools" {
								t.Errorf("Do = %v, %v, %v", v, hit, err)
							}
						})
					}
				}
				synctest.Wait() // every goroutine is now blocked in fetch or waiting for it
				close(release)
				wg.Wait()
				if got := calls.Load(); got != tt.wantFetches {
					t.Errorf("fetches = %d, want %d", got, tt.wantFetches)
				}
				want := Stats{Misses: int64(perPrincipal * len(tt.principals)), Entries: 1}
				if diff := cmp.Diff(want, c.Stats()); diff != "" {
					t.Errorf("Stats (-want +got):\n%s", diff)
				}
				if _, hit := mustDo(t, c, toolsKey, "carol", fetch); !hit {
					t.Error("no hit after the shared fetch")
				}
			})
		})
	}
}

// TestSingleflightLeaderGivesUp: when the fetching caller's context ends,
// waiters with live contexts fetch again instead of failing.
func TestSingleflightLeaderGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := New(Options{})
		var calls atomic.Int32
		fetch := func(ctx context.Context) (any, Meta, error) {
			if calls.Add(1) == 1 {
				<-ctx.Done()
				return nil, Meta{}, ctx.Err()
			}
			return "tools", pub(time.Minute), nil
		}
		leaderCtx, cancel := context.WithCancel(t.Context())
		leaderErr := make(chan error, 1)
		go func() {
			_, _, err := c.Do(leaderCtx, toolsKey, "alice", fetch)
			leaderErr <- err
		}()
		synctest.Wait()
		waiter := make(chan any, 1)
		go func() {
			v, _, err := c.Do(t.Context(), toolsKey, "alice", fetch)
			if err != nil {
				t.Error(err)
			}
			waiter <- v
		}()
		synctest.Wait()
		cancel()
		if err := <-leaderErr; !errors.Is(err, context.Canceled) {
			t.Errorf("leader error = %v, want context.Canceled", err)
		}
		if v := <-waiter; v != "tools" {
			t.Errorf("waiter got %v, want tools", v)
		}
		if got := calls.Load(); got != 2 {
			t.Errorf("fetches = %d, want 2", got)
		}
	})
}

// TestSingleflightWaiterGivesUp: a waiter returns when its own context ends.
func TestSingleflightWaiterGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := New(Options{})
		release := make(chan struct{})
		go c.Do(t.Context(), toolsKey, "alice", func(context.Context) (any, Meta, error) {
			<-release
			return "tools", pub(time.Minute), nil
		})
		synctest.Wait()
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, _, err := c.Do(ctx, toolsKey, "alice", nil)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("waiter error = %v, want DeadlineExceeded", err)
		}
		close(release)
	})
}

// TestFetchPanics: waiters of a fetch that panics get an error, not a hang.
func TestFetchPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := New(Options{})
		release := make(chan struct{})
		go func() {
			defer func() { recover() }()
			c.Do(t.Context(), toolsKey, "alice", func(context.Context) (any, Meta, error) {
				<-release
				panic("boom")
			})
		}()
		synctest.Wait()
		waiter := make(chan error, 1)
		go func() {
			_, _, err := c.Do(t.Context(), toolsKey, "alice", nil)
			waiter <- err
		}()
		synctest.Wait()
		close(release)
		if err := <-waiter; !errors.Is(err, errFetchAborted) {
			t.Errorf("waiter error = %v, want errFetchAborted", err)
		}
		if _, _, ok := c.Peek(toolsKey, "alice"); ok {
			t.Error("a panicked fetch stored something")
		}
	})
}

// TestFetchError: errors are returned and store nothing; an older entry
// stays available to Peek as a stale fallback.
func TestFetchError(t *testing.T) {
	c, clk := newTestCache(Options{})
	var calls atomic.Int32
	mustDo(t, c, toolsKey, "alice", fetcher(&calls, "old", pub(time.Minute)))
	clk.Advance(time.Minute)
	boom := errors.New("boom")
	_, hit, err := c.Do(context.Background(), toolsKey, "alice", func(context.Context) (any, Meta, error) {
		return "partial", pub(time.Hour), boom
	})
	if !errors.Is(err, boom) || hit {
		t.Errorf("Do = hit=%v err=%v, want boom", hit, err)
	}
	if v, fresh, ok := c.Peek(toolsKey, "alice"); v != "old" || fresh || !ok {
		t.Errorf("Peek = %v fresh=%v ok=%v, want the stale old value", v, fresh, ok)
	}
}

// TestReadLRU covers protocol.md §4.2 item 12: the read LRU evicts the least
// recently used read; list aggregates are exempt.
func TestReadLRU(t *testing.T) {
	c, _ := newTestCache(Options{MaxReads: 3})
	var calls atomic.Int32
	read := func(uri, principal string, m Meta) bool {
		_, hit := mustDo(t, c, readKey(uri), principal, fetcher(&calls, uri, m))
		return hit
	}
	read("u1", "alice", pub(time.Hour))
	read("u2", "alice", pub(time.Hour))
	read("u3", "alice", priv(0)) // stale at once, still counts towards the bound
	if !read("u1", "alice", pub(time.Hour)) {
		t.Fatal("u1 missed")
	}
	// Peek does not refresh u2.
	c.Peek(readKey("u2"), "alice")
	// Ten list aggregates do not count against MaxReads.
	for i := range 10 {
		mustDo(t, c, Key{Server: fmt.Sprint("s", i), Method: "tools/list"}, "alice", fetcher(&calls, i, pub(time.Hour)))
	}
	read("u4", "bob", priv(time.Hour))

	present := map[string]bool{}
	for _, u := range []string{"u1", "u2", "u3", "u4"} {
		_, _, present[u] = c.Peek(readKey(u), "alice")
		if !present[u] {
			_, _, present[u] = c.Peek(readKey(u), "bob")
		}
	}
	if diff := cmp.Diff(map[string]bool{"u1": true, "u2": false, "u3": true, "u4": true}, present); diff != "" {
		t.Errorf("reads present (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Stats{Hits: 1, Misses: 14, Evictions: 1, Entries: 13}, c.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
	// Order now (newest first): u4, u1, u3. Refetching the stale u3
	// replaces it and moves it to the front, so u5 evicts u1.
	if read("u3", "alice", priv(0)) {
		t.Fatal("stale u3 was a hit")
	}
	read("u5", "alice", pub(time.Hour))
	for u, want := range map[string]bool{"u1": false, "u3": true, "u4": true, "u5": true} {
		_, _, ok := c.Peek(readKey(u), "alice")
		if !ok {
			_, _, ok = c.Peek(readKey(u), "bob")
		}
		if ok != want {
			t.Errorf("after u5, %s present = %v, want %v", u, ok, want)
		}
	}
	checkInvariants(t, c)
}

// TestStats covers protocol.md §4.2 item 14 step by step.
func TestStats(t *testing.T) {
	c, clk := newTestCache(Options{MaxReads: 1})
	var calls atomic.Int32
	steps := []struct {
		name string
		do   func()
		want Stats
	}{
		{"miss", func() { mustDo(t, c, toolsKey, "alice", fetcher(&calls, 1, pub(time.Minute))) }, Stats{Misses: 1, Entries: 1}},
		{"hit", func() { mustDo(t, c, toolsKey, "bob", nil) }, Stats{Hits: 1, Misses: 1, Entries: 1}},
		{"peek counts nothing", func() { c.Peek(toolsKey, "alice") }, Stats{Hits: 1, Misses: 1, Entries: 1}},
		{"expired: miss, replaced", func() {
			clk.Advance(time.Minute)
			mustDo(t, c, toolsKey, "alice", fetcher(&calls, 2, pub(time.Minute)))
		}, Stats{Hits: 1, Misses: 2, Entries: 1}},
		{"read", func() { mustDo(t, c, readKey("u1"), "alice", fetcher(&calls, 3, pub(time.Minute))) }, Stats{Hits: 1, Misses: 3, Entries: 2}},
		{"second read evicts the first", func() { mustDo(t, c, readKey("u2"), "alice", fetcher(&calls, 4, pub(time.Minute))) }, Stats{Hits: 1, Misses: 4, Evictions: 1, Entries: 2}},
		{"invalidation is not an eviction", func() { c.Invalidate("a", "tools/list") }, Stats{Hits: 1, Misses: 4, Evictions: 1, Entries: 1}},
		{"error is a miss", func() {
			c.Do(context.Background(), toolsKey, "alice", func(context.Context) (any, Meta, error) { return nil, Meta{}, errors.New("x") })
		}, Stats{Hits: 1, Misses: 5, Evictions: 1, Entries: 1}},
		{"drop server", func() { c.DropServer("a") }, Stats{Hits: 1, Misses: 5, Evictions: 1}},
	}
	for _, s := range steps {
		s.do()
		if diff := cmp.Diff(s.want, c.Stats()); diff != "" {
			t.Errorf("after %s, Stats (-want +got):\n%s", s.name, diff)
		}
	}
	checkInvariants(t, c)
}

func TestMetaOf(t *testing.T) {
	tests := []struct {
		name string
		in   interface {
			GetTTLMs() int
			GetCacheScope() string
		}
		want Meta
	}{
		{"public minute", &mcp.ListToolsResult{Cacheable: mcp.Cacheable{TTLMs: 60000, CacheScope: "public"}}, Meta{TTL: time.Minute, Scope: ScopePublic}},
		{"private", &mcp.ReadResourceResult{Cacheable: mcp.Cacheable{TTLMs: 1500, CacheScope: "private"}}, Meta{TTL: 1500 * time.Millisecond, Scope: ScopePrivate}},
		{"absent", &mcp.ListPromptsResult{}, Meta{Scope: ScopePrivate}},
		{"unknown scope", &mcp.ListResourcesResult{Cacheable: mcp.Cacheable{TTLMs: 1, CacheScope: "shared"}}, Meta{TTL: time.Millisecond, Scope: ScopePrivate}},
		{"negative ttl", &mcp.ListResourceTemplatesResult{Cacheable: mcp.Cacheable{TTLMs: -5, CacheScope: "public"}}, Meta{Scope: ScopePublic}},
		{"huge ttl saturates", mcp.Cacheable{TTLMs: math.MaxInt, CacheScope: "public"}, Meta{TTL: math.MaxInt64, Scope: ScopePublic}},
		{"discover", &mcp.DiscoverResult{Cacheable: mcp.Cacheable{TTLMs: 5 * 86_400_000, CacheScope: "public"}}, Meta{TTL: 5 * 24 * time.Hour, Scope: ScopePublic}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, MetaOf(tt.in)); diff != "" {
				t.Errorf("MetaOf (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHammer runs Do, Peek and every invalidation from many goroutines on
// overlapping keys (run it with -race). Values carry the key and partition
// they were fetched for, so a value served across keys or a private value
// served to another principal is caught.
func TestHammer(t *testing.T) {
	type value struct {
		k         Key
		principal string
		scope     string
	}
	c, clk := newTestCache(Options{MaxReads: 4})
	keys := []Key{
		{"a", "tools/list", ""}, {"a", "resources/list", ""}, {"a", "resources/templates/list", ""},
		{"a", "resources/read", "u1"}, {"a", "resources/read", "u2"}, {"a", "resources/read", "u3"},
		{"b", "tools/list", ""}, {"b", "resources/read", "u1"}, {"b", "resources/read", "u2"},
	}
	principals := []string{"", "alice", "bob"}
	scopes := []string{ScopePublic, ScopePrivate, ""}
	ttls := []time.Duration{0, time.Millisecond, time.Second, time.Hour, -1}
	check := func(v any, k Key, principal string) {
		got, ok := v.(value)
		if !ok {
			t.Errorf("value %#v is not a value", v)
			return
		}
		if got.k != k {
			t.Errorf("Do(%v) served a value for %v", k, got.k)
		}
		if got.scope != ScopePublic && got.principal != principal {
			t.Errorf("%q was served %q's %q-scoped value", principal, got.principal, got.scope)
		}
	}
	const goroutines, ops = 16, 2000
	var dos atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range ops {
				k := keys[r.IntN(len(keys))]
				p := principals[r.IntN(len(principals))]
				switch n := r.IntN(100); {
				case n < 70:
					dos.Add(1)
					scope, ttl := scopes[r.IntN(len(scopes))], ttls[r.IntN(len(ttls))]
					noStore, fail := r.IntN(10) == 0, r.IntN(20) == 0
					v, _, err := c.Do(context.Background(), k, p, func(context.Context) (any, Meta, error) {
						if fail {
							return nil, Meta{}, errors.New("fail")
						}
						return value{k, p, scope}, Meta{TTL: ttl, Scope: scope, NoStore: noStore}, nil
					})
					if err == nil {
						check(v, k, p)
					}
				case n < 85:
					if v, _, ok := c.Peek(k, p); ok {
						check(v, k, p)
					}
				case n < 92:
					c.Invalidate(k.Server, k.Method)
				case n < 96:
					c.InvalidateURI(k.Server, k.Params)
				case n < 97:
					c.DropServer(k.Server)
				case n < 98:
					c.Connected(k.Server, ServerIdentity{Version: fmt.Sprint(r.IntN(2))})
				default:
					clk.Advance(time.Duration(r.IntN(1000)) * time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	checkInvariants(t, c)
	s := c.Stats()
	if s.Hits+s.Misses != dos.Load() {
		t.Errorf("Hits+Misses = %d, want %d Do calls", s.Hits+s.Misses, dos.Load())
	}
	if s.Hits == 0 || s.Evictions == 0 {
		t.Errorf("Stats %+v: the hammer never hit or never evicted", s)
	}
	if n := len(c.flights); n != 0 {
		t.Errorf("%d flights left over", n)
	}
}

// BenchmarkHit measures a cache hit for a principal whose private partition
// is empty, so the lookup falls through to the public entry.
func BenchmarkHit(b *testing.B) {
	c := New(Options{})
	ctx := context.Background()
	fetch := func(context.Context) (any, Meta, error) { return "tools", pub(time.Hour), nil }
	if _, _, err := c.Do(ctx, toolsKey, "alice", fetch); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, hit, _ := c.Do(ctx, toolsKey, "bob", fetch); !hit {
			b.Fatal("miss")
		}
	}
}
