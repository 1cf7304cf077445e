package appgate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mcphost/mcphost/apps"
	"github.com/mcphost/mcphost/host/store"
)

// Defaults of [Compaction].
const (
	defaultAppCompactAfter        = 7 * 24 * time.Hour
	defaultAppCompactSessionBytes = 16 << 20
	defaultAppCompactInterval     = 10 * time.Minute
)

// Compaction configures the daemon's background compaction of MCP App
// display records (apps.md §7): a compacted record keeps its type,
// serverName, resourceUri and fallbackText, loses its HTML, and shows as
// text with no App frame. The zero value means the defaults.
type Compaction struct {
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

// Compactor compacts the App display records of a store under the bounds
// of Compaction: in one pass (Pass), or in the background (Start).
type Compactor struct {
	Store    *store.Store
	Logger   *slog.Logger
	Settings Compaction
	wg       sync.WaitGroup
}

// appCompactJob is the name under which one replica at a time compacts.
const CompactJob = "app-compaction"

// Start starts the background pass when at least one bound is on; it ends
// with ctx, and Wait waits for it. lead runs its function while this
// replica leads the job CompactJob (with replicas on one PostgreSQL, one
// replica at a time compacts; the others take over when it goes).
func (c *Compactor) Start(ctx context.Context, lead func(ctx context.Context, job string, run func(context.Context))) {
	o := c.Settings
	if c.Store == nil || o.After < 0 && o.SessionBytes < 0 {
		return
	}
	interval := o.Interval
	if interval <= 0 {
		interval = defaultAppCompactInterval
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		lead(ctx, CompactJob, func(ctx context.Context) { c.whileLeading(ctx, interval) })
	}()
}

// Wait waits for the background pass to end.
func (c *Compactor) Wait() { c.wg.Wait() }

// whileLeading runs a pass at once and then every interval, until ctx
// ends (the host closes, or the leadership is lost).
func (c *Compactor) whileLeading(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if n, err := c.Pass(ctx); err != nil && ctx.Err() == nil {
			c.Logger.Warn("compacting App records", "err", err)
		} else if n > 0 {
			c.Logger.Info("compacted App records", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Pass runs one pass of App compaction over every principal's sessions
// and returns how many records it compacted: first every record of a call
// that started before the age bound, then, in each session whose App HTML
// still adds up to more than the size bound, its oldest records until the
// rest fit. It fails when the store does, after compacting what it could.
func (c *Compactor) Pass(ctx context.Context) (int, error) {
	o := c.Settings
	after, bound := o.After, o.SessionBytes
	if after == 0 {
		after = defaultAppCompactAfter
	}
	if bound == 0 {
		bound = defaultAppCompactSessionBytes
	}
	now := time.Now()
	n := 0
	if after > 0 {
		for {
			old, err := c.Store.AppHTMLStartedBefore(ctx, now.Add(-after), 500)
			if err != nil {
				return n, err
			}
			for _, a := range old {
				if err := c.entry(ctx, a.Principal, a.EntryID); err != nil {
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
		over, err := c.Store.SessionsOverAppHTML(ctx, bound)
		if err != nil {
			return n, err
		}
		for _, s := range over {
			recs, err := c.Store.AppHTMLOfSession(ctx, s.SessionID)
			if err != nil {
				return n, err
			}
			total := s.Bytes
			for _, a := range recs {
				if total <= bound {
					break
				}
				if err := c.entry(ctx, a.Principal, a.EntryID); err != nil {
					return n, err
				}
				total -= a.Bytes
				n++
			}
		}
	}
	return n, nil
}

// entry compacts the display record of one of principal's entries; a
// record without HTML (or that is not an App record) is left alone.
func (c *Compactor) entry(ctx context.Context, principal, entryID string) error {
	e, err := c.Store.Entry(ctx, principal, entryID)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err
	}
	_, err = c.Record(ctx, e)
	return err
}

// Record replaces e's display record by its compacted form when it holds
// App HTML, and reports whether it did.
func (c *Compactor) Record(ctx context.Context, e store.Entry) (bool, error) {
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
	if err := c.Store.SetDisplay(ctx, e.Principal, e.ID, raw); err != nil {
		return false, err
	}
	return true, nil
}
