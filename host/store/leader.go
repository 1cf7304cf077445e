package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/semaphore"
)

// Leadership of once-only jobs. Some background work must run on one
// replica at a time (App compaction: two replicas compacting the same
// records would only waste work, but a job such as a retention pass or a
// pre-refresh must not run twice). Store.TryLead gives one holder per job
// name across every Store on the same database:
//
//   - PostgreSQL: pg_try_advisory_lock(hashtext('mcphost:'||job)) on a
//     connection of the lease's own, outside the pool. The server keeps
//     the lock while that session lives, so a replica that dies (kill -9,
//     a lost network) lets go of it as soon as PostgreSQL notices, and the
//     lease sees its connection end (Lease.Lost).
//   - SQLite: one node, so the caller always leads.

// leaseCheck is how long a lease's connection stays idle before it is
// pinged: the lease notices a dead connection at once when the server
// closes it (pg_terminate_backend, a restart), and within about this long
// when the network fails silently.
const leaseCheck = 15 * time.Second

// Lease is leadership of one job, held until Release or until it is lost.
type Lease struct {
	job    string
	lost   chan struct{}
	cancel context.CancelFunc
	done   chan struct{} // the watcher has ended (nil on SQLite)
	conn   *pgx.Conn
	owner  *storeLocks
	once   sync.Once
}

// Job is the name the lease was taken for.
func (l *Lease) Job() string { return l.job }

// Lost is closed when the lease ends: it was released, or (PostgreSQL) its
// connection ended, and with it the lock. A holder stops its job then.
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// Release gives the leadership up: the lock is unlocked and its connection
// closed. Calling it again, or after the lease was lost, does nothing.
func (l *Lease) Release() {
	l.once.Do(func() {
		if l.cancel != nil {
			l.cancel()
			<-l.done
		}
		// The holder is told before the lock is free for another.
		select {
		case <-l.lost:
		default:
			close(l.lost)
		}
		if l.conn != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if !l.conn.IsClosed() {
				_, _ = l.conn.Exec(ctx, `SELECT pg_advisory_unlock(hashtext($1))`, "mcphost:"+l.job)
			}
			_ = l.conn.Close(ctx)
			cancel()
		}
		if l.owner != nil {
			l.owner.forget(l)
		}
	})
}

// TryLead tries to take the leadership of job without waiting. ok is false
// when another holder has it (another replica on PostgreSQL); err is set
// when the database could not be asked (then ok is false too). The caller
// releases a lease it got ([Lease.Release]); [Store.Close] releases those
// still held. On SQLite it always succeeds: one node is always the leader.
func (s *Store) TryLead(ctx context.Context, job string) (lead *Lease, ok bool, err error) {
	l := &Lease{job: job, lost: make(chan struct{}), owner: &s.locks}
	if s.pg == nil {
		if !s.locks.keep(l) {
			return nil, false, errors.New("store: lead: the store is closed")
		}
		return l, true, nil
	}
	s.locks.mu.Lock()
	closed := s.locks.closed
	s.locks.mu.Unlock()
	if closed {
		return nil, false, errors.New("store: lead: the store is closed")
	}
	cfg := s.pg.cfg.Copy()
	// A plain dial: the committer's connections count round trips, a
	// lease's must not.
	cfg.DialFunc = (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext
	// The lock's holder is found by its session's application_name
	// (Store.Leader).
	cfg.RuntimeParams["application_name"] = leaseAppName(s.replica)
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, false, scrub(fmt.Errorf("store: lead %q: postgres %s: %w", job, s.pg.name, err), s.pg.secrets)
	}
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtext($1))`, "mcphost:"+job).Scan(&ok); err != nil || !ok {
		conn.Close(context.WithoutCancel(ctx))
		if err != nil {
			return nil, false, scrub(fmt.Errorf("store: lead %q: %w", job, err), s.pg.secrets)
		}
		return nil, false, nil
	}
	wctx, cancel := context.WithCancel(context.Background())
	l.conn, l.cancel, l.done = conn, cancel, make(chan struct{})
	if !s.locks.keep(l) {
		cancel()
		conn.Close(context.WithoutCancel(ctx))
		return nil, false, errors.New("store: lead: the store is closed")
	}
	go l.watch(wctx)
	return l, true, nil
}

// leaseAppPrefix starts the application_name of a lease's connection; the
// replica id follows.
const leaseAppPrefix = "mcphost lease "

func leaseAppName(replica string) string { return leaseAppPrefix + replica }

// Leader returns the replica that leads job now: the one whose lease
// connection holds job's advisory lock (PostgreSQL), read from pg_locks
// and pg_stat_activity, so it is never a stale record: a holder that died
// stops being named as soon as the server has noticed. ok is false when
// nobody leads job. On SQLite the store's own replica always leads.
// Replicas must connect as the same database role (or one that may read
// the others' pg_stat_activity rows, pg_read_all_stats).
func (s *Store) Leader(ctx context.Context, job string) (replica string, ok bool, err error) {
	if s.pg == nil {
		return s.replica, true, nil
	}
	// pg_try_advisory_lock(bigint) keeps the key's high half in classid
	// and its low half in objid, with objsubid 1; hashtext is an int4,
	// sign-extended.
	var name string
	key := "mcphost:" + job
	err = s.r.QueryRowContext(ctx, `SELECT a.application_name
FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
	AND l.classid = ((hashtext(?)::bigint >> 32) & 4294967295)::oid
	AND l.objid = (hashtext(?)::bigint & 4294967295)::oid
	AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`, key, key).Scan(&name)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, scrub(fmt.Errorf("store: leader of %q: %w", job, err), s.pg.secrets)
	}
	replica, ok = strings.CutPrefix(name, leaseAppPrefix)
	if !ok || replica == "" {
		return "", false, fmt.Errorf("store: leader of %q: the lock is held by a session that is no mcphost lease (application_name %q)", job, name)
	}
	return replica, true, nil
}

// watch waits on the lease's connection until it ends or the lease is
// released; an idle connection is pinged every leaseCheck.
func (l *Lease) watch(ctx context.Context) {
	defer close(l.done)
	for {
		wctx, cancel := context.WithTimeout(ctx, leaseCheck)
		err := l.conn.PgConn().WaitForNotification(wctx)
		timedOut := wctx.Err() != nil
		cancel()
		switch {
		case ctx.Err() != nil:
			return // released
		case err == nil:
			continue // a notification: none is expected, and it does no harm
		case timedOut && !l.conn.IsClosed():
			pctx, cancel := context.WithTimeout(ctx, leaseCheck)
			err = l.conn.Ping(pctx)
			cancel()
			if err == nil || ctx.Err() != nil {
				continue
			}
		}
		// The connection ended, and the lock with it.
		close(l.lost)
		l.conn.Close(context.Background())
		return
	}
}

// storeLocks are a Store's in-process locks: the leases it handed out,
// the credential mutexes of RefreshCredential on SQLite and the bound on
// PostgreSQL connections that refreshes hold.
type storeLocks struct {
	mu     sync.Mutex
	closed bool
	leases map[*Lease]struct{}
	creds  map[[2]string]chan struct{} // a mutex per credential that honours ctx
	conns  *semaphore.Weighted
}

func (k *storeLocks) keep(l *Lease) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return false
	}
	if k.leases == nil {
		k.leases = map[*Lease]struct{}{}
	}
	k.leases[l] = struct{}{}
	return true
}

func (k *storeLocks) forget(l *Lease) {
	k.mu.Lock()
	delete(k.leases, l)
	k.mu.Unlock()
}

// close releases every lease still held; the store is closing.
func (k *storeLocks) close() {
	k.mu.Lock()
	k.closed = true
	held := make([]*Lease, 0, len(k.leases))
	for l := range k.leases {
		held = append(held, l)
	}
	k.mu.Unlock()
	for _, l := range held {
		l.Release()
	}
}

// credential locks the credential (server, principal) in this process
// until unlock is called, or fails when ctx ends first.
func (k *storeLocks) credential(ctx context.Context, server, principal string) (unlock func(), err error) {
	key := [2]string{server, principal}
	k.mu.Lock()
	if k.creds == nil {
		k.creds = map[[2]string]chan struct{}{}
	}
	ch := k.creds[key]
	if ch == nil {
		ch = make(chan struct{}, 1)
		k.creds[key] = ch
	}
	k.mu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// refreshConn takes one of the refreshLockConns slots.
func (k *storeLocks) refreshConn(ctx context.Context) (release func(), err error) {
	k.mu.Lock()
	if k.conns == nil {
		k.conns = semaphore.NewWeighted(refreshLockConns)
	}
	sem := k.conns
	k.mu.Unlock()
	if err := sem.Acquire(ctx, 1); err != nil {
		return nil, err
	}
	return func() { sem.Release(1) }, nil
}
