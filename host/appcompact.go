package host

import (
	"context"

	"github.com/mcphost/mcphost/host/internal/appgate"
	"github.com/mcphost/mcphost/host/store"
)

// AppCompaction configures the daemon's background compaction of MCP App
// display records (apps.md §7); the zero value means the defaults (see
// package appgate).
type AppCompaction = appgate.Compaction

// startAppCompaction starts the background pass when the host has a store
// and at least one bound is on; it ends with ctx and Close waits for it.
// With replicas on one PostgreSQL, one replica at a time runs it (the
// leader of its job, see whileLeading); the others wait and take over
// when it goes.
func (h *Host) startAppCompaction(ctx context.Context) {
	h.apps.compactor.Start(ctx, func(ctx context.Context, job string, run func(context.Context)) {
		whileLeading(ctx, h.store, h.opts.Logger, job, 0, run)
	})
}

// CompactApps runs one pass of App compaction over every principal's
// sessions under the host's [AppCompaction] bounds and returns how many
// records it compacted: first every record of a call that started before the
// age bound, then, in each session whose App HTML still adds up to more than
// the size bound, its oldest records until the rest fit. It fails when the
// store does, after compacting what it could.
func (h *Host) compactApps(ctx context.Context) (int, error) {
	if h.store == nil {
		return 0, ErrNoStore
	}
	return h.apps.compactor.Pass(ctx)
}

// compactRecord replaces e's display record by its compacted form when it
// holds App HTML, and reports whether it did.
func (h *Host) compactRecord(ctx context.Context, e store.Entry) (bool, error) {
	ok, err := h.apps.compactor.Record(ctx, e)
	return ok, mapStoreErr(err)
}
