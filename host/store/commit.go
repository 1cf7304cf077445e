package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Group commit. Entry appends are written in groups: the appends that are
// waiting are written in one transaction and committed once: one fsync
// (with SyncFull) for the whole group instead of one per entry.
//
// There is no committer goroutine: the callers write the groups
// themselves, one group at a time. A caller queues its append, then
// waits for whichever comes first: its append being done, the leadership
// (committer.lead), which one caller at a time holds, or its context
// ending (it gives up if its append is still queued). The leader writes
// groups, each made of what waits at the head of the queue when it is
// taken, up to the bounds, until its own append is done; then it lets go
// of the leadership, and one of the callers still waiting takes it and
// writes the next group. An append made while nobody is committing is
// therefore written on its caller's goroutine, in a group of one, without
// waking any other goroutine; the appends made while a group is being
// written queue up and form the next group. There is no deliberate delay:
// under load the groups grow with the load.
//
// No queued append is left without a leader: its caller waits for the
// leadership as long as it waits for the append, and a leader lets go of
// it only after the groups it took are done. An append whose caller gave
// up is skipped by the next leader; a caller that finds the queue full
// while nobody leads (their callers all gave up) writes a group itself to
// make room. Close takes the leadership, writes what is still queued and
// keeps it.
//
// What an append promises does not change: AppendEntry returns nil only
// after the group holding its entry has committed, and an error means its
// entry is not stored. The transaction is not bound to any caller's
// context, the leader's included: a leader whose context ends while it
// writes finishes the group. An entry that fails on its own (its session
// is missing or someone else's, a constraint) is undone alone and the
// others commit: it wrote nothing, or its savepoint is rolled back to, or
// (when neither can be known) the others are written again in a new
// transaction (see tryGroup). When the transaction itself fails (a full
// disk, an I/O error, a failed commit) every entry of the group gets the
// error and none is stored.
//
// On SQLite the leader writes through the writer connection's driver
// connection, with statements prepared on it once (writer.go); on
// PostgreSQL through the append path's own connection (postgres.go).

const (
	// maxGroupEntries and maxGroupBytes bound one group, so that a burst of
	// large results is written in several commits rather than one huge one
	// that every caller in it waits for.
	maxGroupEntries = 128
	maxGroupBytes   = 8 << 20
	// queueLen is how many appends may wait to be written; beyond it
	// AppendEntry blocks (honouring its context).
	queueLen = 1024
)

var (
	// errClosed is the error of an append made after Close.
	errClosed = errors.New("store is closed")
	// errGroupPanicked is the error of the appends of a group whose
	// writing panicked (a bug): their callers must not wait for ever.
	errGroupPanicked = errors.New("writing the group panicked")
)

// appendReq is one entry waiting to be written.
type appendReq struct {
	id   string
	kind string
	e    *Entry
	size int
	// htmlBytes is the display record's HTML length (app_html_bytes),
	// measured before the entry is queued.
	htmlBytes int64

	// state moves once, from pending to taken (a leader will write it)
	// or to abandoned (its caller gave up first); whoever wins the swap
	// decides.
	state atomic.Int32

	seq  int64
	err  error
	done chan struct{}
	// logged is the seq the entry log assigned (entrylog.go), which the
	// database must give it too, and at the time of the append (Unix
	// nanoseconds), its session's UpdatedAt; 0 without the log.
	logged, at int64
}

const (
	reqPending int32 = iota
	reqTaken
	reqAbandoned
)

// committer is the group-commit queue and its leadership.
type committer struct {
	mu     sync.RWMutex // held for reading while enqueueing; Close takes it to set closed
	closed bool
	reqs   chan *appendReq
	// lead is the leadership: a send takes it, a receive gives it back.
	// Its holder alone writes groups and uses carry and group.
	lead chan struct{}
	// carry is the request that did not fit in the last group; group is
	// the slice the groups are built in, reused.
	carry *appendReq
	group []*appendReq

	// taken counts the appends taken into groups, groups the commits and
	// grouped the entries in them: for tests and benchmarks.
	taken, groups, grouped atomic.Int64
}

func (s *Store) startCommitter() {
	s.commit = &committer{
		reqs:  make(chan *appendReq, queueLen),
		lead:  make(chan struct{}, 1),
		group: make([]*appendReq, 0, maxGroupEntries),
	}
}

// stopCommitter writes the appends already queued, after the group being
// written if there is one, and keeps the leadership: nothing is written
// afterwards. Appends made afterwards fail with errClosed.
func (s *Store) stopCommitter() {
	c := s.commit
	if c == nil {
		return
	}
	c.mu.Lock()
	stopped := c.closed
	c.closed = true
	c.mu.Unlock()
	if stopped {
		return
	}
	// Nothing can be queued any more: once the leader of the moment, if
	// any, lets go, drain the queue.
	c.lead <- struct{}{}
	for s.commitNext(c) {
	}
}

// enqueue queues r and waits for its outcome, writing groups itself when
// it takes the leadership. It gives up with ctx's error only while r is
// still waiting in the queue: once a leader has taken r, the outcome is
// the transaction's, and returning early could report an entry as failed
// that is then stored.
func (s *Store) enqueue(ctx context.Context, r *appendReq) (int64, error) {
	c := s.commit
	if err := s.push(ctx, c, r); err != nil {
		return 0, err
	}
	select {
	case <-r.done:
	case c.lead <- struct{}{}:
		s.leadUntil(c, r)
	case <-ctx.Done():
		if r.state.CompareAndSwap(reqPending, reqAbandoned) {
			return 0, ctx.Err()
		}
	}
	<-r.done
	return r.seq, r.err
}

// push puts r in the queue, under c.mu held for reading so that Close
// cannot pass it. When the queue is full and nobody leads (the callers of
// what it holds gave up), the caller takes the leadership and writes a
// group to make room.
func (s *Store) push(ctx context.Context, c *committer, r *appendReq) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return errClosed
	}
	for {
		select {
		case c.reqs <- r:
			return nil
		default:
		}
		select {
		case c.reqs <- r:
			return nil
		case c.lead <- struct{}{}:
			s.leadOnce(c)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// leadUntil writes groups, holding the leadership, until r is done, then
// lets go of it. Until then r is in the queue or is the carry: leaders let
// go only after their groups are done, r's caller (the one leading) has
// not abandoned it, and the queue is first in, first out.
func (s *Store) leadUntil(c *committer, r *appendReq) {
	defer func() { <-c.lead }()
	for !isDone(r) && s.commitNext(c) {
	}
}

// hold takes the leadership without writing anything, so that no group is
// written until release: the checkpointer's closing round. It returns
// false, without it, when stop is closed first.
func (c *committer) hold(stop <-chan struct{}) bool {
	select {
	case c.lead <- struct{}{}:
		return true
	case <-stop:
		return false
	}
}

func (c *committer) release() { <-c.lead }

// leadOnce writes one group, holding the leadership, then lets go of it.
func (s *Store) leadOnce(c *committer) {
	defer func() { <-c.lead }()
	s.commitNext(c)
}

func isDone(r *appendReq) bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// commitNext writes the next group and lets its callers go; false when no
// append was waiting. Only the leader calls it.
func (s *Store) commitNext(c *committer) bool {
	group, size := c.nextGroup()
	if len(group) == 0 {
		return false
	}
	written := false
	defer func() {
		if !written { // writeGroup panicked: fail the group rather than leave it waiting
			for _, r := range group {
				if r.err == nil {
					r.seq, r.err = 0, errGroupPanicked
				}
			}
		}
		c.groups.Add(1)
		c.grouped.Add(int64(len(group)))
		for _, r := range group {
			close(r.done)
		}
		clear(group) // the entries are their callers' again
	}()
	s.writeGroup(group, size)
	written = true
	return true
}

// nextGroup takes the carry, then what waits in the queue, up to the
// group's bounds, skipping the requests their callers abandoned; size is
// the group's bytes of JSON.
func (c *committer) nextGroup() (_ []*appendReq, size int) {
	group := c.group[:0]
	add := func(r *appendReq) {
		if !r.state.CompareAndSwap(reqPending, reqTaken) {
			return // abandoned by its caller: skip it
		}
		group = append(group, r)
		size += r.size
		c.taken.Add(1)
	}
	if c.carry != nil {
		add(c.carry)
		c.carry = nil
	}
fill:
	for len(group) < maxGroupEntries && size < maxGroupBytes {
		select {
		case r := <-c.reqs:
			if len(group) > 0 && size+r.size > maxGroupBytes {
				c.carry = r
				break fill
			}
			add(r)
		default:
			break fill
		}
	}
	c.group = group
	return group, size
}

// writeGroup stores the group's entries, size bytes of JSON, and sets each
// request's seq or err.
func (s *Store) writeGroup(group []*appendReq, size int) {
	if h := s.beforeGroup.Load(); h != nil {
		(*h)()
	}
	if s.pg != nil {
		for len(group) > 0 {
			group = s.tryGroupPostgres(group)
		}
		return
	}
	n := len(group)
	for len(group) > 0 {
		group = s.tryGroup(group)
	}
	if s.ckpt != nil {
		s.ckpt.wrote(n, size)
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

// touchEvery is how far a session's UpdatedAt may lag behind its last
// append on SQLite. Most appends write no page of the sessions table: the
// row and its (principal, updated_at) index would be two of the five
// pages of an append, and each page is a frame in the WAL.
const touchEvery = int64(time.Second)

// touchSessions moves, for each session with entries stored in group, its
// UpdatedAt to the time of its last one (now, or with the entry log the
// time of its append: r.at), once per session, unless it was moved less than
// touchEvery ago and the session is already its principal's most recently
// updated: then leaving it changes no order (Sessions lists it first either
// way), and the next append of another session moves that one above it, as
// it would have. The check reads the index the order comes from, and
// writes nothing. The session's entry count is not kept in the row: it is
// the highest seq of its entries (sessionCols).
func (s *Store) touchSessions(ctx context.Context, c *writerConn, group []*appendReq, now int64) error {
	// Each session at its last entry, so in the order of their last
	// entries: the order in which one append per group would touch them.
	for i, r := range group {
		if r.err != nil || storedIn(group[i+1:], r.e.SessionID) {
			continue // failed, or its session is touched with a later entry
		}
		at := now
		if r.at != 0 {
			at = r.at
		}
		if err := c.exec(ctx, stTouchSession, at, r.e.SessionID, at-touchEvery); err != nil {
			return err
		}
	}
	return nil
}

// storedIn says whether an entry of group was stored in session sessionID.
func storedIn(group []*appendReq, sessionID string) bool {
	for _, r := range group {
		if r.err == nil && r.e.SessionID == sessionID {
			return true
		}
	}
	return false
}
