// Package cache will own mcphost's host-level cache of list and read results,
// above go-sdk's per-session cache: ttlMs and cacheScope (public, or private
// per principal), whole-list aggregation with a pagination loop guard,
// invalidation on list_changed and resources/updated, singleflight per key,
// and entries that survive reconnects when the server's identity is unchanged
// (../shared/docs/protocol.md §3.10).
//
// It holds no code yet. It must never import the host package or another leaf.
package cache
