package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcphost/mcphost/apps"
	"github.com/mcphost/mcphost/host/store"
)

// Defaults of [AppCompaction].
const (
	defaultAppCompactAfter        = 7 * 24 * time.Hour
	defaultAppCompactSessionBytes = 16 << 20
	defaultAppCompactInterval     = 10 * time.Minute
)

// AppCompaction configures the daemon's background compaction of MCP App
// display records (apps.md §7): a compacted record keeps its type,
// serverName, resourceUri and fallbackText, loses its HTML, and shows as
// text with no App frame. The zero value means the defaults.
type AppCompaction struct {
	// After compacts the records of calls that started longer ago than
	// this: 0 means defaultAppCompactAfter (7 days), negative never.
	After time.Duration
	// SessionBytes bounds the App HTML of one session: while a session's
	// records hold more than this, its oldest are compacted. 0 means
	// defaultAppCompactSessionBytes (16 MiB), negative no bound.
	SessionBytes int64
	// Interval is the time between passes (0: defaultAppCompactInterval).
	// The first pass runs when the host starts.
	Interval time.Duration
}

// appCompactor is the host's background compaction loop.
type appCompactor struct {
	wg    sync.WaitGroup
	now   func() time.Time // time.Now; tests substitute a clock
	retry time.Duration    // how often a replica that does not lead tries again (0: DefaultLeadRetry)
}

// appCompactJob is the name under which one replica at a time compacts.
const appCompactJob = "app-compaction"

// startAppCompaction starts the background pass when the host has a store
// and at least one bound is on; it ends with ctx and Close waits for it.
// With replicas on one PostgreSQL, one replica at a time runs it (the
// leader of appCompactJob, see whileLeading); the others wait and take
// over when it goes.
func (h *Host) startAppCompaction(ctx context.Context) {
	o := h.opts.AppCompaction
	if h.store == nil || o.After < 0 && o.SessionBytes < 0 {
		return
	}
	interval := o.Interval
	if interval <= 0 {
		interval = defaultAppCompactInterval
	}
	h.apps.compactor.wg.Add(1)
	go func() {
		defer h.apps.compactor.wg.Done()
		whileLeading(ctx, h.store, h.opts.Logger, appCompactJob, h.apps.compactor.retry, func(ctx context.Context) {
			h.compactWhileLeading(ctx, interval)
		})
	}()
}

// compactWhileLeading runs a pass at once and then every interval, until
// ctx ends (the host closes, or the leadership is lost).
func (h *Host) compactWhileLeading(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if n, err := h.CompactApps(ctx); err != nil && ctx.Err() == nil {
			h.opts.Logger.Warn("compacting App records", "err", err)
		} else if n > 0 {
			h.opts.Logger.Info("compacted App records", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// CompactApps runs one pass of App compaction over every principal's
// sessions under the host's [AppCompaction] bounds and returns how many
// records it compacted: first every record of a call that started before the
// age bound, then, in each session whose App HTML still adds up to more than
// the size bound, its oldest records until the rest fit. It fails when the
// store does, after compacting what it could.
func (h *Host) CompactApps(ctx context.Context) (int, error) {
	if h.store == nil {
		return 0, ErrNoStore
	}
	o := h.opts.AppCompaction
	after, bound := o.After, o.SessionBytes
	if after == 0 {
		after = defaultAppCompactAfter
	}
	if bound == 0 {
		bound = defaultAppCompactSessionBytes
	}
	now := time.Now()
	if h.apps.compactor.now != nil {
		now = h.apps.compactor.now()
	}
	n := 0
	if after > 0 {
		for {
			old, err := h.store.AppHTMLStartedBefore(ctx, now.Add(-after), 500)
			if err != nil {
				return n, err
			}
			for _, a := range old {
				if err := h.compactEntry(ctx, a.Principal, a.EntryID); err != nil {
					return n, err
				}
				n++
			}
			if len(old) < 500 {
				break
			}
		}
	}
	if bound > 0 {
		over, err := h.store.SessionsOverAppHTML(ctx, bound)
		if err != nil {
			return n, err
		}
		for _, s := range over {
			recs, err := h.store.AppHTMLOfSession(ctx, s.SessionID)
			if err != nil {
				return n, err
			}
			total := s.Bytes
			for _, a := range recs {
				if total <= bound {
					break
				}
				if err := h.compactEntry(ctx, a.Principal, a.EntryID); err != nil {
					return n, err
				}
				total -= a.Bytes
				n++
			}
		}
	}
	return n, nil
}

// compactEntry compacts the display record of one of principal's entries;
// a record without HTML (or that is not an App record) is left alone.
func (h *Host) compactEntry(ctx context.Context, principal, entryID string) error {
	e, err := h.store.Entry(ctx, principal, entryID)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err
	}
	_, err = h.compactRecord(ctx, e)
	return err
}

// compactRecord replaces e's display record by its compacted form when it
// holds App HTML, and reports whether it did.
func (h *Host) compactRecord(ctx context.Context, e store.Entry) (bool, error) {
	if len(e.Display) == 0 || string(e.Display) == "null" {
		return false, nil
	}
	var d apps.Display
	if err := json.Unmarshal(e.Display, &d); err != nil || d.HTML == "" {
		return false, nil
	}
	raw, err := json.Marshal(apps.Compact(d))
	if err != nil {
		return false, fmt.Errorf("host: compact %s: %w", e.ID, err)
	}
	if err := h.store.SetDisplay(ctx, e.Principal, e.ID, raw); err != nil {
		return false, mapStoreErr(err)
	}
	return true, nil
}
