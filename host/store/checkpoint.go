package store

import (
	"context"
	"database/sql"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Checkpoints on SQLite. A checkpoint copies the pages committed to the WAL
// back into the database file, so that the WAL can start again from its
// beginning, and fsyncs them (in either sync mode). SQLite's own automatic
// checkpoint runs inside the commit that takes the WAL past 1,000 pages, on
// the goroutine that commits: with group commit that is an appending
// caller, whose answer then waits for the copy and the fsyncs (a third of
// the serial appends' mean time and most of their p99). So the writer
// connection turns it off (wal_autocheckpoint=0, see dsn) and the store
// checkpoints on a goroutine and a connection of its own instead, with
// PASSIVE checkpoints: they take neither the write lock nor wait for
// readers, so appends go on while one runs.
//
// A checkpoint that runs while appends commit cannot let the WAL start
// again: SQLite restarts it only at a write transaction that finds every
// frame copied, and the appends made during the copy are not. Under a
// steady stream of appends the WAL would grow without end. So each turn
// is two rounds: the first copies what is there while appends go on; the
// second holds the group commit's leadership (no group is written
// meanwhile) and copies what the appends added during the first, usually
// a few pages, then lets go. The next group then finds the WAL copied and
// writes it from its beginning. The appends that queue during the second
// round wait for it (and its fsyncs, when it copied anything); that is
// the whole of the checkpoint's cost on the append path, instead of a
// copy of a thousand pages on one caller's goroutine.
//
// The checkpointer runs when the appends since the last checkpoint may have
// written checkpointPages pages (an estimate: the driver does not say how
// many frames a commit wrote), and every checkpointIdle in any case, for
// the other writes (sessions, credentials, App records) and for a WAL the
// last checkpoint could not finish because a reader still used it. A
// PASSIVE checkpoint with nothing to copy does no I/O. A failed
// checkpoint (a full disk) is logged and tried again at the next turn; it
// loses nothing, the pages stay in the WAL. Close stops the checkpointer
// before it closes the connections; the last connection to close
// checkpoints what is left and removes the WAL, as before.

const (
	// checkpointPages is SQLite's own default threshold
	// (SQLITE_DEFAULT_WAL_AUTOCHECKPOINT).
	checkpointPages = 1000
	// checkpointIdle bounds the time between two checkpoints.
	checkpointIdle = 30 * time.Second
	// pageSize is SQLite's default page size, which the store does not
	// change: the unit of the estimate.
	pageSize = 4096
)

type checkpointer struct {
	db     *sql.DB // one connection, not query_only, never in a transaction
	logger *slog.Logger
	// commit is the group commit whose leadership the second round holds.
	commit *committer
	// pages estimates the pages written since the last checkpoint;
	// kick wakes the loop when it crosses checkpointPages.
	pages atomic.Int64
	kick  chan struct{}
	stop  chan struct{}
	done  sync.WaitGroup
	// runs counts the checkpoints made and failed the failures: for
	// tests.
	runs, failed atomic.Int64
}

func startCheckpointer(db *sql.DB, logger *slog.Logger, commit *committer) *checkpointer {
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	k := &checkpointer{db: db, logger: logger, commit: commit, kick: make(chan struct{}, 1), stop: make(chan struct{})}
	k.done.Add(1)
	go k.loop()
	return k
}

// wrote notes a committed group of n entries holding about bytes bytes of
// JSON: each entry writes a page of the entries table and one of each of
// its two indexes, plus its overflow pages. It is called by the leader of
// the group and costs an atomic add, and a non-blocking send once past
// the threshold.
func (k *checkpointer) wrote(n, bytes int) {
	if k.pages.Add(int64(3*n+bytes/pageSize)) >= checkpointPages {
		select {
		case k.kick <- struct{}{}:
		default:
		}
	}
}

func (k *checkpointer) loop() {
	defer k.done.Done()
	idle := time.NewTimer(checkpointIdle)
	defer idle.Stop()
	for {
		select {
		case <-k.stop:
			return
		case <-k.kick:
		case <-idle.C:
		}
		k.checkpoint()
		idle.Reset(checkpointIdle)
	}
}

// checkpoint runs one turn: a PASSIVE checkpoint while appends go on, then
// another holding the group commit's leadership.
func (k *checkpointer) checkpoint() {
	k.pages.Store(0)
	k.runs.Add(1)
	if !k.round("") {
		return
	}
	if !k.commit.hold(k.stop) {
		return
	}
	defer k.commit.release()
	k.round("closing ")
}

// round runs one PASSIVE checkpoint; false when it failed.
func (k *checkpointer) round(which string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), busyTimeout)
	defer cancel()
	var busy, log, moved int64
	if err := k.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &moved); err != nil {
		k.failed.Add(1)
		k.logger.Warn("WAL "+which+"checkpoint failed; the pages stay in the WAL and the next checkpoint tries again",
			"error", diskFull(err))
		return false
	}
	if log > moved {
		// A reader still uses the frames after moved: a later turn
		// copies them.
		k.logger.Debug("WAL "+which+"checkpoint partial", "frames", log, "copied", moved)
	}
	return true
}

// close stops the loop, waiting for a checkpoint that is running, and
// closes the connection.
func (k *checkpointer) close() error {
	close(k.stop)
	k.done.Wait()
	return k.db.Close()
}
