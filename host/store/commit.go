package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// Group commit. Every entry append goes through one committer goroutine,
// which takes the appends that are waiting, writes them in one transaction
// and commits once: one fsync (with SyncFull) for the whole group instead
// of one per entry. There is no deliberate delay: while a commit is being
// written the next appends queue up, and they form the next group. One
// append alone is therefore written exactly as before, and under load the
// groups grow with the load.
//
// What an append promises does not change: AppendEntry returns nil only
// after the group holding its entry has committed, and an error means its
// entry is not stored. An entry that fails on its own (its session is
// missing or someone else's, a constraint) is undone alone and the others
// commit: it wrote nothing, or its savepoint is rolled back to, or (when
// neither can be known) the others are written again in a new
// transaction (see tryGroup). When the transaction itself fails (a full
// disk, an I/O error, a failed commit) every entry of the group gets the
// error and none is stored.
//
// On SQLite the committer writes through the writer connection's driver
// connection, with statements prepared on it once (writer.go).

const (
	// maxGroupEntries and maxGroupBytes bound one group, so that a burst of
	// large results is written in several commits rather than one huge one
	// that every caller in it waits for.
	maxGroupEntries = 128
	maxGroupBytes   = 8 << 20
	// queueLen is how many appends may wait for the committer; beyond it
	// AppendEntry blocks (honouring its context).
	queueLen = 1024
)

// errClosed is the error of an append made after Close.
var errClosed = errors.New("store is closed")

// appendReq is one entry waiting for the committer.
type appendReq struct {
	id   string
	kind string
	e    *Entry
	size int
	// htmlBytes is the display record's HTML length (app_html_bytes),
	// measured before the entry is queued.
	htmlBytes int64

	// state moves once, from pending to taken (the committer will write
	// it) or to abandoned (its caller gave up first); whoever wins the
	// swap decides.
	state atomic.Int32

	seq  int64
	err  error
	done chan struct{}
}

const (
	reqPending int32 = iota
	reqTaken
	reqAbandoned
)

// committer is the group-commit queue and its goroutine.
type committer struct {
	mu     sync.RWMutex // held for reading while enqueueing; Close takes it to close reqs
	closed bool
	reqs   chan *appendReq
	exited chan struct{}

	// taken counts the appends the committer has taken, groups the
	// commits and grouped the entries in them: for tests and benchmarks.
	taken, groups, grouped atomic.Int64
}

func (s *Store) startCommitter() {
	c := &committer{reqs: make(chan *appendReq, queueLen), exited: make(chan struct{})}
	s.commit = c
	go func() {
		defer close(c.exited)
		s.runCommitter(c)
	}()
}

// stopCommitter lets the appends already queued finish, then stops the
// goroutine. Appends made afterwards fail with errClosed.
func (s *Store) stopCommitter() {
	c := s.commit
	if c == nil {
		return
	}
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		close(c.reqs)
	}
	c.mu.Unlock()
	<-c.exited
}

// enqueue hands r to the committer and waits for its outcome. It gives up
// with ctx's error only while r is still waiting in the queue: once the
// committer has taken r, the outcome is the transaction's, and returning
// early could report an entry as failed that is then stored.
func (s *Store) enqueue(ctx context.Context, r *appendReq) (int64, error) {
	c := s.commit
	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		return 0, errClosed
	}
	select {
	case c.reqs <- r:
		c.mu.RUnlock()
	case <-ctx.Done():
		c.mu.RUnlock()
		return 0, ctx.Err()
	}
	select {
	case <-r.done:
		return r.seq, r.err
	case <-ctx.Done():
		if r.state.CompareAndSwap(reqPending, reqAbandoned) {
			return 0, ctx.Err()
		}
		<-r.done
		return r.seq, r.err
	}
}

// runCommitter writes groups until reqs is closed and drained.
func (s *Store) runCommitter(c *committer) {
	group := make([]*appendReq, 0, maxGroupEntries)
	var carry *appendReq // the request that did not fit in the last group
	for {
		group = group[:0]
		size := 0
		add := func(r *appendReq) {
			if !r.state.CompareAndSwap(reqPending, reqTaken) {
				return // abandoned by its caller: skip it
			}
			group = append(group, r)
			size += r.size
			c.taken.Add(1)
		}
		if carry != nil {
			add(carry)
			carry = nil
		} else {
			r, ok := <-c.reqs
			if !ok {
				return
			}
			add(r)
		}
	fill:
		for len(group) < maxGroupEntries && size < maxGroupBytes {
			select {
			case r, ok := <-c.reqs:
				if !ok {
					break fill
				}
				if len(group) > 0 && size+r.size > maxGroupBytes {
					carry = r
					break fill
				}
				add(r)
			default:
				break fill
			}
		}
		if len(group) == 0 {
			continue
		}
		s.writeGroup(group)
		c.groups.Add(1)
		c.grouped.Add(int64(len(group)))
		for _, r := range group {
			close(r.done)
		}
	}
}

// writeGroup stores the group's entries and sets each request's seq or err.
func (s *Store) writeGroup(group []*appendReq) {
	if h := s.beforeGroup.Load(); h != nil {
		(*h)()
	}
	for len(group) > 0 {
		if s.pg != nil {
			group = s.tryGroupPostgres(group)
			continue
		}
		group = s.tryGroup(group)
	}
}

// tryGroup writes group in one transaction. An entry without audit
// records is one statement, which SQLite applies whole or not at all; one
// with audit records gets a savepoint (in a group of more than one), so
// that it is undone alone. The sessions' counters are bumped once per
// session at the end of the group (touchSessions), for the entries stored.
//
// When an entry fails with an error of SQLite's (rather than ErrNotFound,
// which writes nothing), the transaction may be gone: SQLite rolls it back
// whole on a full disk and some I/O errors, savepoints included. Unless
// the entry's savepoint could be rolled back to, that entry keeps its
// error, the transaction is rolled back and the others are returned to be
// tried again in a new one: none of them may be reported as stored, nor
// failed for another entry's sake.
func (s *Store) tryGroup(group []*appendReq) (retry []*appendReq) {
	fail := func(err error) {
		for _, r := range group {
			if r.err == nil {
				r.seq, r.err = 0, err
			}
		}
	}
	// The transaction is not bound to any caller's context: the callers
	// in the group are all waiting for it, and one of them going away
	// must not roll back the others' entries. It is bounded by the
	// connection's busy_timeout.
	ctx := context.Background()
	conn, err := s.w.Conn(ctx) // the writer connection, once the other writers are done
	if err != nil {
		fail(err)
		return nil
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(*writerConn)
		if !ok {
			return fmt.Errorf("the writer's connection is a %T", dc)
		}
		var usable bool
		retry, usable = s.tryGroupOn(ctx, c, group)
		if !usable {
			return driver.ErrBadConn // database/sql closes it; the next group gets a new one
		}
		return nil
	})
	if err != nil && !errors.Is(err, driver.ErrBadConn) {
		fail(err)
	}
	return retry
}

// tryGroupOn is tryGroup on the writer's connection c. usable is false
// when c may have been left inside a transaction.
func (s *Store) tryGroupOn(ctx context.Context, c *writerConn, group []*appendReq) (retry []*appendReq, usable bool) {
	fail := func(err error) {
		for _, r := range group {
			if r.err == nil {
				r.seq, r.err = 0, err
			}
		}
	}
	abort := func(err error) bool {
		ok := c.rollback(ctx)
		fail(err)
		return ok
	}
	now := s.now().UnixNano()
	if err := c.exec(ctx, stBegin); err != nil { // BEGIN IMMEDIATE
		fail(err)
		return nil, true
	}
	for i, r := range group {
		savepoint := len(group) > 1 && len(r.e.Audit) > 0
		if savepoint {
			if err := c.exec(ctx, stSavepoint); err != nil {
				return nil, abort(err)
			}
		}
		r.seq, r.err = s.insertEntry(ctx, c, r)
		if r.err == nil || errors.Is(r.err, ErrNotFound) {
			if savepoint {
				if err := c.exec(ctx, stRelease); err != nil {
					return nil, abort(err)
				}
			}
			continue
		}
		r.seq = 0
		if len(group) == 1 {
			return nil, c.rollback(ctx)
		}
		if savepoint && c.exec(ctx, stRollbackTo) == nil {
			if err := c.exec(ctx, stRelease); err != nil {
				return nil, abort(err)
			}
			continue
		}
		// The transaction may be gone: retry everyone who has not failed.
		usable = c.rollback(ctx)
		for j, o := range group {
			if j != i && o.err == nil {
				o.seq = 0
				retry = append(retry, o)
			}
		}
		s.logger.Warn("an entry's failure rolled back its group's transaction; writing the others again",
			"session", r.e.SessionID, "error", r.err, "retrying", len(retry))
		return retry, usable
	}
	if err := s.touchSessions(ctx, c, group, now); err != nil {
		return nil, abort(err)
	}
	if err := c.exec(ctx, stCommit); err != nil {
		// A failed COMMIT can leave the transaction open (SQLITE_BUSY).
		return nil, abort(err)
	}
	return nil, true
}

// touchSessions bumps, for each session with entries stored in group, its
// entry count by their number and its UpdatedAt to now: one UPDATE per
// session rather than one per entry.
func (s *Store) touchSessions(ctx context.Context, c *writerConn, group []*appendReq, now int64) error {
	for i, r := range group {
		if r.err != nil || storedIn(group[:i], r.e.SessionID) > 0 {
			continue // failed, or its session was counted with an earlier entry
		}
		if err := c.exec(ctx, stTouchSession, now, storedIn(group[i:], r.e.SessionID), r.e.SessionID); err != nil {
			return err
		}
	}
	return nil
}

// storedIn counts the entries of group stored in session sessionID.
func storedIn(group []*appendReq, sessionID string) int64 {
	var n int64
	for _, r := range group {
		if r.err == nil && r.e.SessionID == sessionID {
			n++
		}
	}
	return n
}
