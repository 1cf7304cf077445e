package host

import (
	"context"
	"log/slog"
	"time"

	"github.com/mcphost/mcphost/host/store"
)

// defaultLeadRetry is how often a replica that does not lead a once-only
// background job asks again whether it can: the bound on how long the job
// pauses after its leader died (once PostgreSQL has noticed).
const defaultLeadRetry = 30 * time.Second

// whileLeading runs a background job that must run on one replica at a
// time (App compaction; any future retention pass or pre-refresh): every
// retry it tries to lead job ([store.Store.TryLead]: an advisory lock on
// PostgreSQL, always granted on SQLite); while it leads, run runs with a
// context that ends when the lease is lost or ctx ends. It returns when
// ctx ends, after releasing a lease it holds.
func whileLeading(ctx context.Context, st *store.Store, logger *slog.Logger, job string, retry time.Duration, run func(ctx context.Context)) {
	logger = logger.With("job", job)
	if retry <= 0 {
		retry = defaultLeadRetry
	}
	t := time.NewTimer(0)
	defer t.Stop()
	waiting := false // logged once per wait, not every retry
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		lease, ok, err := st.TryLead(ctx, job)
		switch {
		case err != nil:
			if ctx.Err() == nil {
				logger.Warn("cannot ask the store who runs a background job; trying again", "err", err, "retry", retry)
			}
		case !ok:
			if !waiting {
				logger.Info("another replica runs a background job; this one waits", "retry", retry)
				waiting = true
			}
		default:
			waiting = false
			logger.Info("this replica runs a background job")
			lctx, cancel := context.WithCancel(ctx)
			go func() {
				select {
				case <-lease.Lost():
				case <-lctx.Done():
				}
				cancel()
			}()
			run(lctx)
			cancel()
			lost := false
			select {
			case <-lease.Lost():
				lost = ctx.Err() == nil
			default:
			}
			lease.Release()
			if lost {
				logger.Warn("lost the leadership of a background job (its lock connection ended, or the store closed); another replica may take it", "retry", retry)
			}
		}
		t.Reset(retry)
	}
}
