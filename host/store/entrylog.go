package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"
)

// The entry log (SQLite with SyncNormal only). With SyncNormal a commit is
// not fsynced: what an acknowledged entry promises is that it survives
// kill -9 of the process, because its bytes are in the operating system's
// cache. One write of the entry to a file of its own promises exactly
// that, for a fraction of a SQLite transaction's cost (a copy into a shared
// mapping of the file on Linux, a write(2) elsewhere: entrylog_writer.go).
// So with SyncNormal
// AppendEntry writes the entry's record to the entry log (path + "-entries",
// entrylog_codec.go) and returns; the store's applier goroutine then writes
// the records to the database in groups, through the group commit
// (commit.go), in the order they were logged. The next open replays what
// the log holds and the database does not (a process killed before its
// applier caught up), before anything else runs. With SyncFull there is no
// log: the append commits and fsyncs as before (a log that a killed
// SyncNormal process left is replayed at open all the same, then removed).
// One process at a time holds the log (an exclusive flock): a second one
// would keep counts of its own and interleave its records.
//
// Nothing can tell that an entry was not applied yet:
//
//   - Seqs are assigned when the record is logged, from the log's own count
//     per session (sessions below; a session it does not know is read from
//     the database, which then holds all of its entries), and the applier
//     writes the records in that order, so the database gives each the seq
//     its caller was told (checked: a mismatch is logged as a bug).
//   - Every read of entries, sessions or the audit log first waits until
//     the records logged before it are applied (settle); so does every
//     write that depends on them (App contexts and displays name entries,
//     audit records keep their order). With one caller that is the
//     applier's one group, a fraction of a millisecond.
//   - DeleteSession holds the log (no append meanwhile), waits for the
//     applier, deletes, and forgets the session; an append that had read
//     the session from the database before the delete sees the generation
//     move and reads it again.
//
// What waits to be applied is bounded (maxPending entries, maxPendingBytes):
// past it an append waits for the applier, as it would for its commit
// without the log, so a burst faster than the database grows neither the
// memory nor the log without end.
//
// When the applier cannot write (a full disk), it keeps the records, logs
// the error and tries again, backing off up to a minute; meanwhile appends
// and reads fail with that error, which names how many entries wait, and
// nothing acknowledged is dropped. An entry that fails alone (its session is
// gone, which the delete rule above rules out, or a constraint) is logged
// with its id and dropped, since retrying cannot help. (An error that only
// one entry would always meet, written alone, cannot be told from a
// failing database, so it is retried like one; entries are validated
// before they are logged, and none is known.) The log is emptied
// when an append takes it past logTruncateBytes (that append holds the
// others while the applier catches up, one group), at every delete, and
// at Close, which applies what remains and removes it.

const (
	// logTruncateBytes is the size past which the log is emptied.
	logTruncateBytes = 4 << 20
	// logSessions bounds the sessions the log keeps counts for; past it
	// the counts are dropped when nothing waits to be applied.
	logSessions = 1 << 14
	// maxApplyBackoff bounds the wait between two failed attempts.
	maxApplyBackoff = time.Minute
	// maxPending and maxPendingBytes bound what waits to be applied:
	// past them an append waits for the applier (honouring its context),
	// as it would wait for its commit without the log, so that a burst
	// faster than the database grows neither the memory nor the log
	// without end.
	maxPending      = queueLen
	maxPendingBytes = 64 << 20
)

// logSession is what the log knows of a session: whose it is and its
// last seq.
type logSession struct {
	principal string
	seq       int64
}

type entryLog struct {
	path   string
	logger *slog.Logger

	// mu serialises the appends: the file's end, the sessions' counts and
	// the record buffer. DeleteSession holds it while it deletes.
	mu       sync.Mutex
	f        *os.File
	w        logWriter // writes f's records (entrylog_writer.go)
	size     int64     // what the log holds: the end of its last record
	sessions map[string]logSession
	gen      uint64 // moved by every delete
	buf      []byte
	closed   bool
	broken   error // set by fail: appends fail with it

	// amu guards the queue of logged records not yet applied and the
	// counts; changed is closed (and replaced) whenever applied or err
	// moves.
	amu     sync.Mutex
	queue   []*appendReq
	queued  int // bytes of JSON in queue
	written uint64
	applied uint64
	err     error // the applier's last failure, nil once it succeeds
	changed chan struct{}

	kick chan struct{}
	stop chan struct{}
	done chan struct{}
}

func entryLogPath(db string) string { return db + "-entries" }

// openEntryLog opens the log of the database at db, replays into s what it
// holds, and starts the applier. It runs at open, before any append. With
// keep false (SyncFull) there is no log to keep, but one left by a process
// that ran with SyncNormal and was killed is replayed, then removed: the
// mode can change between two runs without losing an acknowledged entry.
func (s *Store) openEntryLog(ctx context.Context, db string, keep bool) error {
	path := entryLogPath(db)
	flags := os.O_RDWR | os.O_APPEND
	if keep {
		flags |= os.O_CREATE
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if !keep && errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("opening the entry log: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return fmt.Errorf("the entry log %q is held by another process: with sync = \"normal\" one process at a time writes this data_dir's transcript (run one `mcphost serve` and let other commands use it, or use sync = \"full\"): %w", path, err)
	}
	l := &entryLog{path: path, logger: s.logger, f: f, sessions: make(map[string]logSession),
		changed: make(chan struct{}), kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if err := s.replay(ctx, l); err != nil {
		f.Close()
		return fmt.Errorf("replaying the entry log %q: %w", path, err)
	}
	if !keep {
		return errors.Join(os.Remove(path), f.Close())
	}
	if l.w, err = newLogWriter(f); err != nil {
		f.Close()
		return fmt.Errorf("the entry log %q: %w", path, err)
	}
	s.elog = l
	go s.applyLoop(l)
	return nil
}

// replay applies the records of l's file that the database does not hold,
// in order, then empties the file. A torn record ends the log (the write a
// crash cut short was never acknowledged); what follows it is dropped.
func (s *Store) replay(ctx context.Context, l *entryLog) error {
	data, err := io.ReadAll(l.f)
	if err != nil {
		return err
	}
	var reqs []*appendReq
	off := 0
	for off < len(data) {
		r, n, err := nextRecord(data[off:])
		if errors.Is(err, errLogEnd) {
			break // a mapped log's zeros
		}
		if errors.Is(err, errTornRecord) {
			l.logger.Warn("the entry log ends in a torn record, dropped: a write cut short by a crash, never acknowledged",
				"path", l.path, "offset", off, "bytes", len(data)-off)
			break
		}
		if err != nil {
			return fmt.Errorf("the record at offset %d: %w", off, err)
		}
		off += n
		stored, err := s.entryStored(ctx, r.id)
		if err != nil {
			return err
		}
		if !stored {
			reqs = append(reqs, r)
		}
	}
	for len(reqs) > 0 {
		n := groupLen(reqs)
		if err := s.applyGroup(l, reqs[:n]); err != nil {
			return err
		}
		reqs = reqs[n:]
	}
	if len(data) > 0 {
		l.logger.Info("replayed the entry log", "path", l.path, "bytes", len(data))
	}
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("emptying it: %w", err)
	}
	return nil
}

func (s *Store) entryStored(ctx context.Context, id string) (bool, error) {
	var n int
	if err := s.w.QueryRowContext(ctx, `SELECT count(*) FROM entries WHERE id = ?`, id).Scan(&n); err != nil {
		return false, fmt.Errorf("looking up entry %q: %w", id, err)
	}
	return n > 0, nil
}

// groupLen is how many of reqs go in the next group.
func groupLen(reqs []*appendReq) int {
	size := 0
	for i, r := range reqs {
		if i == maxGroupEntries || (i > 0 && size+r.size > maxGroupBytes) {
			return i
		}
		size += r.size
	}
	return len(reqs)
}

// applyGroup writes group to the database holding the group commit's
// leadership. It returns an error, with nothing to be taken as applied,
// when the whole group failed (the transaction); entries that failed
// alone are logged and dropped.
func (s *Store) applyGroup(l *entryLog, group []*appendReq) error {
	size := 0
	for _, r := range group {
		r.err, r.done = nil, nil
		r.state.Store(reqTaken)
		size += r.size
	}
	c := s.commit
	c.lead <- struct{}{}
	func() {
		defer func() { <-c.lead }()
		defer func() {
			if p := recover(); p != nil { // a bug: keep the records and the daemon
				l.logger.Error("writing logged entries panicked", "panic", p)
				for _, r := range group {
					r.seq, r.err = 0, errGroupPanicked
				}
			}
		}()
		s.writeGroup(group, size)
		c.groups.Add(1)
		c.grouped.Add(int64(len(group)))
	}()
	failed := 0
	for _, r := range group {
		if r.err != nil {
			failed++
		}
	}
	if failed == len(group) {
		for _, r := range group {
			if !errors.Is(r.err, ErrNotFound) {
				return diskFull(r.err)
			}
		}
	}
	for _, r := range group {
		switch {
		case r.err != nil:
			l.logger.Error("an acknowledged entry could not be written to the database and is dropped",
				"entry", r.id, "session", r.e.SessionID, "seq", r.logged, "err", r.err)
		case r.seq != r.logged:
			l.logger.Error("an entry was written with another seq than its caller was told (a bug)",
				"entry", r.id, "session", r.e.SessionID, "told", r.logged, "stored", r.seq)
		}
	}
	return nil
}

// appendLogged is AppendEntry with the log: r's seq is assigned and its
// record written before it returns.
func (s *Store) appendLogged(ctx context.Context, l *entryLog, r *appendReq) (int64, error) {
	e := r.e
	if err := l.waitRoom(ctx); err != nil {
		return 0, err
	}
	for {
		l.mu.Lock()
		if err := l.usable(); err != nil {
			l.mu.Unlock()
			return 0, err
		}
		if sess, known := l.sessions[e.SessionID]; known {
			seq, err := s.logKnown(ctx, l, r, sess)
			l.mu.Unlock()
			return seq, err
		}
		// The log has no record of the session that is not applied: read
		// it from the database, learn it unless a delete (or the counts'
		// clearing) moved the generation meanwhile, and go round again.
		gen := l.gen
		l.mu.Unlock()
		sess, err := s.logSessionOf(ctx, e.SessionID)
		if err != nil {
			return 0, err
		}
		l.mu.Lock()
		if _, known := l.sessions[e.SessionID]; !known && l.gen == gen {
			l.sessions[e.SessionID] = sess
		}
		l.mu.Unlock()
	}
}

// logKnown logs r in session sess, which the log knows. Under l.mu.
func (s *Store) logKnown(ctx context.Context, l *entryLog, r *appendReq, sess logSession) (int64, error) {
	if sess.principal != r.e.Principal {
		return 0, ErrNotFound
	}
	seq, err := s.logRecord(l, r, sess)
	if err == nil && l.size >= logTruncateBytes {
		// Empty the log: appends wait for this one while the applier
		// catches up, one group, once per logTruncateBytes. Under a
		// steady load the applier is never idle on its own, and the log
		// would grow without end.
		if s.settle(ctx) == nil {
			l.truncate()
		}
	}
	return seq, err
}

// waitRoom waits while more than maxPending entries or maxPendingBytes
// wait to be applied. The bound is loose: appends that find room at once
// all go on.
func (l *entryLog) waitRoom(ctx context.Context) error {
	l.amu.Lock()
	defer l.amu.Unlock()
	for len(l.queue) >= maxPending || l.queued >= maxPendingBytes {
		if l.err != nil {
			return l.failing()
		}
		ch := l.changed
		l.amu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			l.amu.Lock()
			return ctx.Err()
		}
		l.amu.Lock()
	}
	return nil
}

// usable is nil when an append may be logged. Under l.mu.
func (l *entryLog) usable() error {
	if l.closed {
		return errClosed
	}
	if l.broken != nil {
		return l.broken
	}
	l.amu.Lock()
	defer l.amu.Unlock()
	if l.err != nil {
		return l.failing()
	}
	return nil
}

// failing is the applier's failure for callers. Under l.amu.
func (l *entryLog) failing() error {
	return fmt.Errorf("%d acknowledged entries wait to be written to the database: %w", len(l.queue), l.err)
}

// logSessionOf reads session id's owner and last seq from the database;
// [ErrNotFound] when it is missing. The log has no record of it that is
// not applied: it would know the session otherwise.
func (s *Store) logSessionOf(ctx context.Context, id string) (logSession, error) {
	var sess logSession
	err := s.r.QueryRowContext(ctx, `SELECT principal, (SELECT coalesce(max(seq), 0) FROM entries WHERE session_id = sessions.id)
		FROM sessions WHERE id = ?`, id).Scan(&sess.principal, &sess.seq)
	if errors.Is(err, sql.ErrNoRows) {
		return sess, ErrNotFound
	}
	if err != nil {
		return sess, fmt.Errorf("reading session %q: %w", id, err)
	}
	return sess, nil
}

// logRecord writes r's record with the session's next seq and queues it
// for the applier. Under l.mu.
func (s *Store) logRecord(l *entryLog, r *appendReq, sess logSession) (int64, error) {
	r.logged = sess.seq + 1
	buf, err := appendRecord(l.buf[:0], r)
	if err != nil {
		return 0, err
	}
	if cap(buf) <= 1<<20 {
		l.buf = buf
	}
	if err := l.w.write(l.size, buf); err != nil {
		if errors.Is(err, errLogBroken) {
			l.fail(err)
		}
		return 0, fmt.Errorf("writing the entry log: %w", err)
	}
	l.size += int64(len(buf))
	sess.seq = r.logged
	if len(l.sessions) >= logSessions && l.idle() {
		clear(l.sessions)
		l.gen++ // an append reading a session meanwhile must read it again
	}
	l.sessions[r.e.SessionID] = sess
	l.amu.Lock()
	l.queue = append(l.queue, r)
	l.queued += r.size
	l.written++
	l.amu.Unlock()
	select {
	case l.kick <- struct{}{}:
	default:
	}
	return r.logged, nil
}

// fail marks the log unusable: appends fail from now on. Under l.mu.
func (l *entryLog) fail(err error) {
	l.broken = fmt.Errorf("the entry log cannot be written: %w", err)
	l.logger.Error("the entry log cannot be written any more; appends fail until mcphost restarts", "path", l.path, "err", err)
}

// idle reports whether every logged record is applied.
func (l *entryLog) idle() bool {
	l.amu.Lock()
	defer l.amu.Unlock()
	return l.applied == l.written
}

// applyLoop is the applier: it writes the logged records to the database
// until stop, then what is left.
func (s *Store) applyLoop(l *entryLog) {
	defer close(l.done)
	backoff := 100 * time.Millisecond
	for {
		l.amu.Lock()
		n := groupLen(l.queue)
		group := l.queue[:n:n]
		l.amu.Unlock()
		if n == 0 {
			select {
			case <-l.kick:
				continue
			case <-l.stop:
				return
			}
		}
		err := s.applyGroup(l, group)
		l.amu.Lock()
		if err == nil {
			for _, r := range group {
				l.queued -= r.size
			}
			clear(l.queue[:n])
			l.queue = l.queue[n:]
			l.applied += uint64(n)
			backoff = 100 * time.Millisecond
		}
		l.err = err
		close(l.changed)
		l.changed = make(chan struct{})
		l.amu.Unlock()
		if err != nil {
			l.logger.Error("writing logged entries to the database; trying again", "entries", n, "in", backoff, "err", err)
			select {
			case <-time.After(backoff):
			case <-l.stop:
				return // Close reports what is left
			}
			backoff = min(2*backoff, maxApplyBackoff)
			continue
		}
	}
}

// truncateLog empties the log if everything in it is applied. Under
// l.mu.
func (l *entryLog) truncate() {
	if l.size == 0 || !l.idle() {
		return
	}
	emptied, err := l.w.reset()
	if emptied {
		l.size = 0
	}
	if err != nil {
		l.logger.Warn("emptying the entry log", "path", l.path, "emptied", emptied, "err", err)
	}
}

// settle waits until every entry logged before it is in the database, so
// that what follows reads it. It fails when the applier is failing, with
// its error, or with ctx's.
func (s *Store) settle(ctx context.Context) error {
	l := s.elog
	if l == nil {
		return nil
	}
	l.amu.Lock()
	target := l.written
	for l.applied < target {
		if l.err != nil {
			err := l.failing()
			l.amu.Unlock()
			return fmt.Errorf("store: %w", err)
		}
		ch := l.changed
		l.amu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		l.amu.Lock()
	}
	l.amu.Unlock()
	return nil
}

// holdLog stops appends, waits for the applier and returns a function that
// forgets session id (when it is not "") and lets appends go on: the frame
// of DeleteSession.
func (s *Store) holdLog(ctx context.Context) (release func(forget string), err error) {
	l := s.elog
	if l == nil {
		return func(string) {}, nil
	}
	l.mu.Lock()
	if err := s.settle(ctx); err != nil {
		l.mu.Unlock()
		return nil, err
	}
	return func(forget string) {
		if forget != "" {
			delete(l.sessions, forget)
			l.gen++
		}
		l.truncate()
		l.mu.Unlock()
	}, nil
}

// closeEntryLog refuses appends from now on, lets the applier write what
// is logged, and removes the log once all of it is in the database. What
// the applier could not write stays in the log for the next open.
func (s *Store) closeEntryLog() error {
	l := s.elog
	if l == nil {
		return nil
	}
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	var err error
	for {
		l.amu.Lock()
		left, failing, changed := len(l.queue), l.err, l.changed
		l.amu.Unlock()
		if failing != nil {
			err = fmt.Errorf("%d entries stay in the entry log %q for the next open: %w", left, l.path, failing)
		}
		if left == 0 || failing != nil {
			break
		}
		<-changed
	}
	close(l.stop)
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil && l.idle() {
		if rerr := os.Remove(l.path); rerr != nil {
			err = fmt.Errorf("removing the entry log: %w", rerr)
		}
	}
	return errors.Join(err, l.w.close(), l.f.Close())
}
