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
// and sets its Seen to now; Replicas lists them all, ordered by ID.
type Directory interface {
	PutReplica(ctx context.Context, r Replica) error
	Replicas(ctx context.Context) ([]Replica, error)
	DeleteReplica(ctx context.Context, id string) error
}

// DefaultHeartbeat is how often a replica renews its row. One whose Seen
// is older than [GoneAfter] heartbeats is gone.
const DefaultHeartbeat = 2 * time.Second

// GoneAfter is how many missed heartbeats make a replica gone.
const GoneAfter = 3

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
	hopProof string // this replica's HeaderHopAuth value
	hopKey   []byte
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
		n.hopProof = hopProof(n.hopKey, opts.ID)
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
// logged and retried at the next beat. A single node returns at once.
func (n *Node) Run(ctx context.Context) {
	if !n.Clustered() {
		return
	}
	n.beat(ctx)
	t := time.NewTicker(n.opts.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			n.beat(ctx)
		}
	}
}

func (n *Node) beat(ctx context.Context) {
	bctx, cancel := context.WithTimeout(ctx, n.opts.Heartbeat)
	defer cancel()
	err := n.opts.Directory.PutReplica(bctx, Replica{ID: n.opts.ID, Addr: n.opts.Addr, Started: n.started, Draining: n.draining.Load()})
	if err != nil && ctx.Err() == nil {
		n.log.Warn("cluster: heartbeat failed; other replicas stop forwarding to this one after "+(GoneAfter*n.opts.Heartbeat).String()+" without one", "err", err)
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
