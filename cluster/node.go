package cluster

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Replica is one replica's row in the directory.
type Replica struct {
	ID string
	// Addr is the base URL other replicas reach it at (its advertise URL).
	Addr string
	// Started is when it started; Seen its last heartbeat (the
	// directory sets it).
	Started, Seen time.Time
	// Draining: it is shutting down; it still serves its sessions.
	Draining bool
}

// Directory is the shared list of replicas: the store's replicas table
// (SQLite or PostgreSQL; cmd/mcphost adapts it). PutReplica upserts a row
// and sets its Seen to now; Replicas lists them all, ordered by ID;
// SweepReplicas deletes the rows last seen before a time and says how
// many.
type Directory interface {
	PutReplica(ctx context.Context, r Replica) error
	Replicas(ctx context.Context) ([]Replica, error)
	DeleteReplica(ctx context.Context, id string) error
	SweepReplicas(ctx context.Context, seenBefore time.Time) (int64, error)
}

// DefaultHeartbeat is how often a replica renews its row. One whose Seen
// is older than [GoneAfter] heartbeats is gone.
const DefaultHeartbeat = 2 * time.Second

// GoneAfter is how many missed heartbeats make a replica gone: for what
// needs a live replica elsewhere (a question's owner, a singleton's
// holder).
const GoneAfter = 3

// StaleAfter is how many missed heartbeats make a replica's row stale:
// its sessions are no longer forwarded to it (404, as for a session that
// ended), and every replica's heartbeat deletes such rows (swept, every
// StaleAfter beats). Between GoneAfter and StaleAfter a replica that could
// not write its heartbeat (its database connection was away for a few
// seconds) still serves the sessions it holds; after it, its address may
// belong to someone else (a pod IP handed out again).
const StaleAfter = 15

// defaultDialTimeout bounds connecting to an owner replica.
const defaultDialTimeout = 3 * time.Second

// Options configure a [Node]. ID and Addr are required.
type Options struct {
	// ID is the replica id ([ResolveID]).
	ID string
	// Addr is the base URL other replicas reach this one at
	// ([CheckAdvertise]).
	Addr string
	// Directory is the shared directory; nil: a single node.
	Directory Directory
	// Secret is the shared secret ([SharedSecret]); required with a
	// Directory.
	Secret []byte
	// Heartbeat is how often the row is renewed (default
	// DefaultHeartbeat).
	Heartbeat time.Duration
	// DialTimeout bounds connecting to an owner (default 3s).
	DialTimeout time.Duration
	// Logger receives the node's logs; nil discards them.
	Logger *slog.Logger
	// Now is the clock of the "gone" rule (default time.Now; tests).
	Now func() time.Time
}

// Node is this daemon's place in the cluster. Its methods are safe for
// concurrent use.
type Node struct {
	opts     Options
	log      *slog.Logger
	started  time.Time
	hopKey   []byte // nil: no secret, no hops
	nonces   nonces // of the hops accepted within HopWindow
	draining atomic.Bool
	proxy    http.Handler

	mu      sync.Mutex // one directory read at a time
	cache   []Replica
	fetched time.Time
}

// ErrNoSecretForDirectory is returned by [New] for a directory without a
// secret.
var ErrNoSecretForDirectory = errors.New("cluster: replicas need a shared secret to trust each other's forwarded requests")

// New returns the node of opts. It starts nothing: [Node.Run] heartbeats.
func New(opts Options) (*Node, error) {
	if !ValidID(opts.ID) {
		return nil, errors.New("cluster: invalid replica id " + opts.ID)
	}
	addr, err := CheckAdvertise(opts.Addr)
	if err != nil {
		return nil, err
	}
	opts.Addr = addr
	if opts.Directory != nil && len(opts.Secret) == 0 {
		return nil, ErrNoSecretForDirectory
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = DefaultHeartbeat
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = defaultDialTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	n := &Node{opts: opts, log: opts.Logger.With("component", "cluster", "replica", opts.ID), started: opts.Now()}
	if len(opts.Secret) > 0 {
		n.hopKey = DeriveKey(opts.Secret, "hop")
	}
	n.proxy = n.newProxy()
	return n, nil
}

// ID returns the replica id.
func (n *Node) ID() string { return n.opts.ID }

// Addr returns the advertised base URL.
func (n *Node) Addr() string { return n.opts.Addr }

// Clustered reports whether the node has a directory (and so forwards).
func (n *Node) Clustered() bool { return n != nil && n.opts.Directory != nil }

// SessionID returns a new legacy gateway session id: the replica id, '.',
// and 26 random base32 characters (go-sdk's own id).
func (n *Node) SessionID() string { return n.opts.ID + "." + rand.Text() }

// OwnerOf returns the replica id a session id names. A session id not of
// the form "<replica>.<random>" (ok false) is malformed.
func OwnerOf(sessionID string) (owner string, ok bool) {
	owner, rest, found := strings.Cut(sessionID, ".")
	if !found || !ValidID(owner) || rest == "" || len(rest) > 128 || strings.ContainsAny(rest, ". \t\r\n") {
		return "", false
	}
	return owner, true
}

// Run renews the node's row every heartbeat until ctx ends; a failure is
// logged and retried at the next beat. At the first beat and every
// StaleAfter beats after it, it also sweeps the rows of replicas that
// have not been seen for StaleAfter beats (every replica does: the delete
// is idempotent, and one that has not been seen for that long runs no
// sweep of its own). A single node returns at once.
func (n *Node) Run(ctx context.Context) {
	if !n.Clustered() {
		return
	}
	n.beat(ctx)
	n.sweep(ctx)
	t := time.NewTicker(n.opts.Heartbeat)
	defer t.Stop()
	for beats := 1; ; beats++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			n.beat(ctx)
			if beats%StaleAfter == 0 {
				n.sweep(ctx)
			}
		}
	}
}

// sweep deletes the directory's stale rows. The cut-off is this
// replica's clock and Seen the heartbeating replica's: a clock that is off
// by less than the bound deletes nothing live, and a live replica whose
// row was deleted writes it again at its next beat.
func (n *Node) sweep(ctx context.Context) {
	sctx, cancel := context.WithTimeout(ctx, n.opts.Heartbeat)
	defer cancel()
	gone, err := n.opts.Directory.SweepReplicas(sctx, n.opts.Now().Add(-n.staleAfter()))
	switch {
	case err != nil && ctx.Err() == nil:
		n.log.Warn("cluster: sweeping the rows of gone replicas failed; trying again later", "err", err)
	case gone > 0:
		n.log.Info("cluster: swept the rows of replicas not seen for "+n.staleAfter().String(), "rows", gone)
	}
}

// staleAfter is StaleAfter heartbeats.
func (n *Node) staleAfter() time.Duration { return StaleAfter * n.opts.Heartbeat }

func (n *Node) beat(ctx context.Context) {
	bctx, cancel := context.WithTimeout(ctx, n.opts.Heartbeat)
	defer cancel()
	err := n.opts.Directory.PutReplica(bctx, Replica{ID: n.opts.ID, Addr: n.opts.Addr, Started: n.started, Draining: n.draining.Load()})
	if err != nil && ctx.Err() == nil {
		n.log.Warn("cluster: heartbeat failed; other replicas take this one for gone after "+(GoneAfter*n.opts.Heartbeat).String()+" without one, and stop forwarding its sessions to it after "+n.staleAfter().String(), "err", err)
	}
}

// Drain marks the node draining in the directory at once (the heartbeat
// keeps the mark). The node goes on serving its sessions until it leaves.
func (n *Node) Drain(ctx context.Context) {
	if n.draining.Swap(true) || !n.Clustered() {
		return
	}
	n.beat(ctx)
}

// Draining reports whether Drain was called.
func (n *Node) Draining() bool { return n.draining.Load() }

// Leave deletes the node's row; the node's sessions answer 404 through
// every other replica from then on. A single node has nothing to leave.
func (n *Node) Leave(ctx context.Context) error {
	if !n.Clustered() {
		return nil
	}
	if err := n.opts.Directory.DeleteReplica(ctx, n.opts.ID); err != nil {
		return errors.Join(errors.New("cluster: leaving the directory"), err)
	}
	return nil
}

// cacheFor is how long a directory read is used for lookups.
func (n *Node) cacheFor() time.Duration { return min(time.Second, n.opts.Heartbeat/2) }

// missRefetch is how old a read must be before a lookup that found no
// such replica reads again (a replica that started since).
const missRefetch = 100 * time.Millisecond

// Lookup returns a live replica by id: in the directory and seen within
// the last GoneAfter heartbeats. The directory is read at most once per
// cacheFor (and again on a miss once the read is missRefetch old).
func (n *Node) Lookup(ctx context.Context, id string) (Replica, bool, error) {
	return n.lookup(ctx, id, false)
}

// lookup is Lookup; fresh reads the directory whatever the cache's age.
func (n *Node) lookup(ctx context.Context, id string, fresh bool) (Replica, bool, error) {
	r, found, err := n.lookupRow(ctx, id, fresh)
	if err != nil || !found || n.opts.Now().Sub(r.Seen) > GoneAfter*n.opts.Heartbeat {
		return Replica{}, false, err
	}
	return r, true, nil
}

// lookupLive is lookup with the bound of forwarding: a row seen within
// the last StaleAfter heartbeats.
func (n *Node) lookupLive(ctx context.Context, id string, fresh bool) (Replica, bool, error) {
	r, found, err := n.lookupRow(ctx, id, fresh)
	if err != nil || !found || n.opts.Now().Sub(r.Seen) > n.staleAfter() {
		return Replica{}, false, err
	}
	return r, true, nil
}

// lookupRow returns replica id's row, however late its last heartbeat;
// fresh reads the directory whatever the cache's age.
func (n *Node) lookupRow(ctx context.Context, id string, fresh bool) (Replica, bool, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	now := n.opts.Now()
	age := now.Sub(n.fetched)
	r, found := find(n.cache, id)
	if fresh || n.fetched.IsZero() || age >= n.cacheFor() || (!found && age >= missRefetch) {
		rs, err := n.opts.Directory.Replicas(ctx)
		if err != nil {
			return Replica{}, false, errors.Join(errors.New("cluster: reading the directory of replicas"), err)
		}
		n.cache, n.fetched = rs, now
		r, found = find(rs, id)
	}
	return r, found, nil
}

func find(rs []Replica, id string) (Replica, bool) {
	for _, r := range rs {
		if r.ID == id {
			return r, true
		}
	}
	return Replica{}, false
}
