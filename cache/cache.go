package cache

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults for [Options].
const (
	DefaultMaxTTL   = 24 * time.Hour
	DefaultMaxReads = 512
)

// Cache scopes, as sent in a result's cacheScope.
const (
	ScopePublic  = "public"
	ScopePrivate = "private"
)

// methodRead is the one method whose entries are bounded by the LRU.
const methodRead = "resources/read"

// Options configures a [Cache]. The zero value is usable.
type Options struct {
	// MaxTTL caps any ttlMs: an entry is never fresh longer than this after
	// it was stored. Zero or negative means [DefaultMaxTTL] (24h).
	MaxTTL time.Duration
	// MaxReads bounds the number of resources/read entries, over all servers
	// and partitions; beyond it the least recently used one is evicted. List
	// aggregates are exempt. Zero or negative means [DefaultMaxReads] (512).
	MaxReads int
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
}

// Key names a cached result, without its partition.
type Key struct {
	// Server is the server's name in the host configuration.
	Server string
	// Method is "tools/list", "prompts/list", "resources/list",
	// "resources/templates/list", "resources/read" or "server/discover".
	Method string
	// Params is "" for a whole-list aggregate and the URI for resources/read.
	Params string
}

// Meta is what the cache needs to know about a fetched result.
type Meta struct {
	// TTL comes from ttlMs. Zero or negative means stale at once: the entry
	// is stored (for name lookups and stale fallback) but never served fresh.
	TTL time.Duration
	// Scope is [ScopePublic] or [ScopePrivate]; "" or anything unknown is
	// treated as private.
	Scope string
	// NoStore marks a result that must never be stored or shared: an
	// input_required result, or the answer to a request carrying
	// inputResponses or requestState.
	NoStore bool
}

// MetaOf converts a go-sdk result's ttlMs and cacheScope (any result
// embedding [mcp.Cacheable]) into a [Meta]. A negative ttlMs becomes 0; a
// scope other than exactly "public" becomes private. It does not know the
// resultType: the caller sets NoStore for input_required results and retries.
// c must not be nil.
func MetaOf(c interface {
	GetTTLMs() int
	GetCacheScope() string
}) Meta {
	m := Meta{Scope: ScopePrivate}
	if c.GetCacheScope() == ScopePublic {
		m.Scope = ScopePublic
	}
	m.TTL = msToDuration(c.GetTTLMs())
	return m
}

// msToDuration converts milliseconds to a Duration, clamping negatives to 0
// and saturating instead of overflowing.
func msToDuration(ms int) time.Duration {
	switch {
	case ms <= 0:
		return 0
	case int64(ms) > math.MaxInt64/int64(time.Millisecond):
		return math.MaxInt64
	}
	return time.Duration(ms) * time.Millisecond
}

// Stats are the cache's counters, for metrics.
type Stats struct {
	// Hits counts Do calls answered from the cache.
	Hits int64
	// Misses counts Do calls that were not: they fetched, joined another
	// caller's fetch, or gave up waiting.
	Misses int64
	// Evictions counts resources/read entries dropped by the LRU bound
	// (invalidations are not evictions).
	Evictions int64
	// Entries is the number of entries stored now, fresh or stale.
	Entries int64
}

// ServerIdentity is what must stay the same across a reconnect for a server's
// entries to be kept (protocol.md §3.10).
type ServerIdentity struct {
	Info         *mcp.Implementation     // serverInfo
	Era          string                  // "modern" or "legacy"
	Version      string                  // negotiated protocol version
	Capabilities *mcp.ServerCapabilities // declared or discovered capabilities
}

// partition is where an entry lives: the public partition (private false,
// principal "") or one principal's private partition.
type partition struct {
	private   bool
	principal string
}

var public = partition{}

// groupKey is the unit of invalidation and of the generation counter.
type groupKey struct {
	server, method string
}

type entry struct {
	value    any
	servable bool      // TTL > 0
	expires  time.Time // storedAt + min(TTL, MaxTTL)
	gk       groupKey
	params   string
	part     partition
	lru      *list.Element // resources/read only
}

type flightKey struct {
	Key
	principal string
}

// flight is one fetch in progress. Its result fields are written before done
// is closed and read only after.
type flight struct {
	done    chan struct{}
	gen     uint64
	val     any
	err     error
	noStore bool
}

// Cache is the host-level cache. Create it with [New]; it is safe for
// concurrent use.
type Cache struct {
	maxTTL   time.Duration
	maxReads int
	now      func() time.Time

	mu         sync.Mutex
	groups     map[groupKey]map[string]map[partition]*entry // method group → params → partition
	gens       map[groupKey]uint64                          // bumped by Invalidate and DropServer
	flights    map[flightKey]*flight
	identities map[string][sha256.Size]byte
	reads      *list.List // of *entry, most recently used first
	entries    int64

	hits, misses, evictions atomic.Int64
}

// New returns an empty cache.
func New(o Options) *Cache {
	c := &Cache{
		maxTTL:     o.MaxTTL,
		maxReads:   o.MaxReads,
		now:        o.Now,
		groups:     map[groupKey]map[string]map[partition]*entry{},
		gens:       map[groupKey]uint64{},
		flights:    map[flightKey]*flight{},
		identities: map[string][sha256.Size]byte{},
		reads:      list.New(),
	}
	if c.maxTTL <= 0 {
		c.maxTTL = DefaultMaxTTL
	}
	if c.maxReads <= 0 {
		c.maxReads = DefaultMaxReads
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c
}

// errFetchAborted is what callers sharing a fetch see when that fetch
// panicked or called runtime.Goexit.
var errFetchAborted = errors.New("cache: the shared fetch panicked or exited")

// Do returns a fresh entry for k visible to principal (its private partition
// first, then the public one), or calls fetch and stores the value according
// to the returned [Meta]. hit reports whether v came from the cache.
//
// Concurrent misses for the same k and principal share one call of fetch,
// made with the first caller's ctx; the others wait for it or for their own
// ctx. If that fetch fails with a context error while a waiter's ctx is still
// live, the waiter tries again. A fetch that started before an invalidation
// covering k returns its value to its callers but does not store it. A value
// with NoStore is returned only to the caller whose fetch produced it;
// callers that joined that fetch try again. A fetch error is returned as is
// and stores nothing; the host may fall back to [Cache.Peek].
func (c *Cache) Do(ctx context.Context, k Key, principal string, fetch func(context.Context) (any, Meta, error)) (v any, hit bool, err error) {
	fk := flightKey{k, principal}
	for {
		c.mu.Lock()
		if e := c.lookup(k, principal, true); e != nil {
			if e.lru != nil {
				c.reads.MoveToFront(e.lru)
			}
			v := e.value
			c.mu.Unlock()
			c.hits.Add(1)
			return v, true, nil
		}
		if f, ok := c.flights[fk]; ok {
			c.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				c.misses.Add(1)
				return nil, false, ctx.Err()
			}
			if f.err == nil && f.noStore {
				continue // not ours to see; fetch our own
			}
			if f.err != nil && isContextErr(f.err) && ctx.Err() == nil {
				continue // the leader gave up, we did not
			}
			c.misses.Add(1)
			return f.val, false, f.err
		}
		f := &flight{done: make(chan struct{}), gen: c.gens[groupKey{k.Server, k.Method}]}
		c.flights[fk] = f
		c.mu.Unlock()
		c.misses.Add(1)
		c.lead(ctx, fk, f, fetch)
		return f.val, false, f.err
	}
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// lead runs fetch for flight f and publishes its result, storing it when
// allowed. If fetch panics, the waiters get errFetchAborted and the panic
// goes on.
func (c *Cache) lead(ctx context.Context, fk flightKey, f *flight, fetch func(context.Context) (any, Meta, error)) {
	finished := false
	defer func() {
		if !finished {
			c.finish(fk, f, nil, Meta{NoStore: true}, errFetchAborted)
		}
	}()
	v, m, err := fetch(ctx)
	finished = true
	c.finish(fk, f, v, m, err)
}

func (c *Cache) finish(fk flightKey, f *flight, v any, m Meta, err error) {
	c.mu.Lock()
	attached := c.flights[fk] == f
	if attached {
		delete(c.flights, fk)
	}
	if err == nil && !m.NoStore && attached && c.gens[groupKey{fk.Server, fk.Method}] == f.gen {
		c.store(fk.Key, fk.principal, v, m)
	}
	f.val, f.err, f.noStore = v, err, m.NoStore
	c.mu.Unlock()
	close(f.done)
}

// Peek returns a stored value for k visible to principal without fetching,
// fresh or not: the host uses it for name lookups and as a stale fallback
// when a refresh fails. A fresh entry is preferred over a stale one, and the
// principal's private entry over the public one. Peek changes no counter and
// does not refresh an entry's LRU position.
func (c *Cache) Peek(k Key, principal string) (v any, fresh bool, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.lookup(k, principal, true); e != nil {
		return e.value, true, true
	}
	if e := c.lookup(k, principal, false); e != nil {
		return e.value, false, true
	}
	return nil, false, false
}

// lookup finds k for principal, private partition first. With freshOnly it
// returns only a fresh entry. c.mu must be held.
func (c *Cache) lookup(k Key, principal string, freshOnly bool) *entry {
	parts := c.groups[groupKey{k.Server, k.Method}][k.Params]
	if parts == nil {
		return nil
	}
	var now time.Time
	if freshOnly {
		now = c.now()
	}
	ok := func(e *entry) bool {
		return e != nil && (!freshOnly || e.servable && now.Before(e.expires))
	}
	if e := parts[partition{private: true, principal: principal}]; ok(e) {
		return e
	}
	if e := parts[public]; ok(e) {
		return e
	}
	return nil
}

// store writes v under k in the partition its scope selects. c.mu must be
// held.
func (c *Cache) store(k Key, principal string, v any, m Meta) {
	gk := groupKey{k.Server, k.Method}
	part := partition{private: true, principal: principal}
	if m.Scope == ScopePublic {
		part = public
	}
	byParams := c.groups[gk]
	if byParams == nil {
		byParams = map[string]map[partition]*entry{}
		c.groups[gk] = byParams
	}
	parts := byParams[k.Params]
	if parts == nil {
		parts = map[partition]*entry{}
		byParams[k.Params] = parts
	}
	ttl := min(m.TTL, c.maxTTL)
	e := parts[part]
	if e == nil {
		e = &entry{gk: gk, params: k.Params, part: part}
		parts[part] = e
		c.entries++
		if k.Method == methodRead {
			e.lru = c.reads.PushFront(e)
		}
	} else if e.lru != nil {
		c.reads.MoveToFront(e.lru)
	}
	e.value = v
	e.servable = ttl > 0
	if e.servable {
		e.expires = c.now().Add(ttl)
	}
	if part == public {
		// The server now calls this result public: the principal's older
		// private copy must not shadow it.
		if old := parts[partition{private: true, principal: principal}]; old != nil {
			c.remove(old)
		}
	}
	for c.reads.Len() > c.maxReads {
		c.remove(c.reads.Back().Value.(*entry))
		c.evictions.Add(1)
	}
}

// remove deletes one entry and prunes empty maps. c.mu must be held.
func (c *Cache) remove(e *entry) {
	byParams := c.groups[e.gk]
	parts := byParams[e.params]
	if parts[e.part] != e {
		return
	}
	delete(parts, e.part)
	if len(parts) == 0 {
		delete(byParams, e.params)
		if len(byParams) == 0 {
			delete(c.groups, e.gk)
		}
	}
	if e.lru != nil {
		c.reads.Remove(e.lru)
		e.lru = nil
	}
	c.entries--
}

// dropGroup deletes every entry of one (server, method), bumps its
// generation and detaches its fetches in flight. c.mu must be held.
func (c *Cache) dropGroup(gk groupKey) {
	c.gens[gk]++
	for _, parts := range c.groups[gk] {
		for _, e := range parts {
			c.remove(e)
		}
	}
	for fk := range c.flights {
		if fk.Server == gk.server && fk.Method == gk.method {
			delete(c.flights, fk)
		}
	}
}

// Invalidate handles a list_changed notification for method on server: it
// bumps the generation of (server, method), drops its entries in every
// partition, and keeps fetches already in flight from storing their results
// or being joined by later callers. "resources/list" also invalidates
// "resources/templates/list".
func (c *Cache) Invalidate(server, method string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropGroup(groupKey{server, method})
	if method == "resources/list" {
		c.dropGroup(groupKey{server, "resources/templates/list"})
	}
}

// InvalidateURI handles resources/updated: it drops the resources/read entry
// for uri on server in every partition, and keeps a read of that URI already
// in flight from storing its result or being joined by later callers.
func (c *Cache) InvalidateURI(server, uri string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	gk := groupKey{server, methodRead}
	for _, e := range c.groups[gk][uri] {
		c.remove(e)
	}
	for fk := range c.flights {
		if fk.Server == server && fk.Method == methodRead && fk.Params == uri {
			delete(c.flights, fk)
		}
	}
}

// DropServer drops every entry of server, keeps its fetches in flight from
// storing, and forgets its identity. The host calls it when the server is
// removed from the configuration, or (through [Cache.Connected]) when its
// identity changed on reconnect.
func (c *Cache) DropServer(server string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropServer(server)
}

func (c *Cache) dropServer(server string) {
	seen := map[groupKey]bool{}
	for gk := range c.groups {
		if gk.server == server {
			seen[gk] = true
		}
	}
	for fk := range c.flights {
		if fk.Server == server {
			seen[groupKey{fk.Server, fk.Method}] = true
		}
	}
	for gk := range seen {
		c.dropGroup(gk)
	}
	delete(c.identities, server)
}

// Connected records the identity a server presented on (re)connect and
// reports whether it differs from the one recorded before, in which case the
// server's entries were dropped. The first call for a server drops nothing.
// Entries survive a reconnect only when serverInfo, era, negotiated version
// and capabilities are all unchanged.
func (c *Cache) Connected(server string, id ServerIdentity) (dropped bool) {
	sum, hashable := fingerprint(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	old, known := c.identities[server]
	if known && (old != sum || !hashable) {
		c.dropServer(server)
		dropped = true
	}
	c.identities[server] = sum
	return dropped
}

// fingerprint hashes an identity's JSON form (encoding/json sorts map keys,
// so equal identities hash equally). An identity that cannot be encoded (not
// expected for these types) reports ok false and never counts as unchanged.
func fingerprint(id ServerIdentity) (sum [sha256.Size]byte, ok bool) {
	b, err := json.Marshal(id)
	if err != nil {
		return sum, false
	}
	return sha256.Sum256(b), true
}

// Stats returns the current counters.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	n := c.entries
	c.mu.Unlock()
	return Stats{
		Hits:      c.hits.Load(),
		Misses:    c.misses.Load(),
		Evictions: c.evictions.Load(),
		Entries:   n,
	}
}
