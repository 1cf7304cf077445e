// Package cache is mcphost's host-level cache of list and read results. It sits
// above go-sdk's per-session cache (mcp/cache.go), which keys by cursor or URI
// only, ignores cacheScope, dies with the session and has no singleflight,
// loop guard or size bound (../shared/docs/protocol.md §1.9, §1.10, §3.10).
//
// # Keys and partitions
//
// An entry is keyed by [Key] (server name, method, params) plus a partition:
// the public partition, shared by every principal, or the private partition of
// one principal. Params is "" for a whole-list aggregate and the URI for a
// resources/read. A result whose cacheScope is "public" goes to the public
// partition; anything else, including an absent or unknown cacheScope, is
// private to the principal that fetched it (mcphost follows the TypeScript SDK
// here; the spec contradicts itself). A lookup tries the principal's private
// partition, then the public one. The principal is an opaque, stable string
// chosen by the host (a hash of the OAuth subject or token, of the static
// headers, or the server config for stdio); "" is a principal like any other
// and never collides with the public partition.
//
// # Freshness
//
// An entry is fresh while now < storedAt + min(TTL, MaxTTL), where TTL comes
// from the result's ttlMs ([MetaOf]) and storedAt is when the fetch returned.
// A TTL of 0, absent or negative means stale at once: the entry is stored (it
// backs the host's name index and stale fallback, see [Cache.Peek]) but
// [Cache.Do] never serves it. A ttlMs of days is capped by [Options.MaxTTL]
// (24h by default). A TTL bounds freshness; it is not a refresh schedule.
// Legacy servers send no ttlMs, so their entries are stale at once unless the
// host fills in a TTL of its own; they are invalidated the same way.
//
// # Invalidation and reconnects
//
// [Cache.Invalidate] handles list_changed: it bumps the generation of
// (server, method), drops the entries, and detaches fetches in flight, so a
// list fetched before a change notification is returned to its callers but
// never stored after it, and callers arriving after the notification start a
// new fetch instead of joining the old one. resources/list also drops
// resources/templates/list. [Cache.InvalidateURI] handles resources/updated
// for one URI. Entries survive a reconnect of the same server: the host calls
// [Cache.Connected] with the server's identity after each connect, and the
// cache drops the server's entries when serverInfo, era, negotiated version or
// capabilities changed. [Cache.DropServer] drops them unconditionally.
//
// # Concurrency and bounds
//
// A Cache is safe for concurrent use. Concurrent misses for the same key and
// principal share one fetch (singleflight). resources/read entries are bounded
// by [Options.MaxReads] with least-recently-used eviction; list aggregates are
// exempt (there are few of them per server and principal, and they back name
// lookups). [Cache.Stats] exposes hit, miss and eviction counters for metrics.
//
// # Multi-round-trip requests
//
// A result with [Meta.NoStore] (an input_required result, or the answer to a
// retry carrying inputResponses or requestState) is returned to the caller
// whose fetch produced it and nobody else: it is never stored, and callers
// that joined that fetch run their own. A retry carrying inputResponses or
// requestState should not go through [Cache.Do] at all: it is a different
// request from a plain read of the same URI, and coalescing the two would hand
// one caller's answer to another.
//
// # Whole lists
//
// [Walk] fetches every page of a list with the host's loop guard (a repeated
// cursor, more than [MaxPages] pages or more than [MaxItems] items is an
// error, never a partial list), restarts once from the first page when a later
// page answers -32602 (invalid cursor), and folds the pages' [Meta] into one:
// the minimum TTL, private if any page is, NoStore if any page is. The cache
// stores the aggregate as one entry with Params "".
//
// The go-sdk page cache underneath cannot be bypassed, so a host refresh never
// beats the server's TTL; both layers are invalidated from the same
// notification handlers.
//
// The package imports neither the host package nor another leaf.
package cache
