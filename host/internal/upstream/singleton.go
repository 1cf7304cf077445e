package upstream

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host/config"
)

// Singleton placement (placement = "singleton", for a server that keeps
// state: a stdio process, a session-bound remote server). When replicas
// share a PostgreSQL store, one of them runs the server: the holder of the
// advisory lock "server:NAME" (store.TryLead). Every other replica
// connects its Conn, instead of to the server, to the holder's
// relay (RelayPath + NAME): a 2025-11-25 Streamable HTTP session whose
// requests the holder passes to its own session of the server. Everything
// above the connection stays the same on every replica: the pipeline
// (rate limit, policies, plugins, transcript, Apps and questions) is that
// of the replica that took the call, which then passes it down its relay
// session as it would to a server of its own.
//
// The relay trusts a request for what its hop proves (cluster.HopOnly):
// every request is signed anew by the calling replica, for the holder,
// over its method, path and body, within cluster.HopWindow, once; a call,
// read, prompt or completion also names, signed, the principal it is made
// for (RelayAs, hopSigner). The holder refuses one that names nobody and
// adds a record of each to the audit log (phase "relay": who, from which
// replica, what). So only a replica that ran its pipeline can reach the
// holder's session, and a captured request opens nothing.
//
// What the server asks during a relayed call comes back the same way: the
// holder puts its elicitation/create (a 2025-11-25 server's, or a
// 2026-07-28 server's input_required round) to the relay session, tagged
// with the caller's call, and the calling replica answers it for that
// call as it would for a server of its own. Progress, log messages,
// resources/updated and list changes are relayed too.
//
// The holder is found in PostgreSQL (store.Leader: who holds the lock,
// never a stale record). When the lock moves (the holder drained, died,
// or lost its database connection), the holder stops the server before
// it lets go, another replica takes the lock within singletonRetry and
// starts it, and the others connect to the new holder: the server's state
// is that of a fresh process, as after any restart.

// RelayPath is where a replica serves its singleton servers to the other
// replicas: RelayPath + the server's name. Only a request whose hop
// headers verify (cluster.HopOf) is served.
const RelayPath = "/_cluster/singleton/"

// singletonRetry is how often a replica that does not run a singleton
// server asks whether it can (and which replica does): the bound, once
// PostgreSQL has freed a dead holder's lock, on how long the server is
// away.
const singletonRetry = 2 * time.Second

// Metadata on the relay, between replicas only.
const (
	// MetaRelayCall names the calling replica's call (its inflight
	// sequence number) on a relayed tools/call and on the elicitation the
	// holder relays back for it. (The call's principal travels in the
	// signed hop, cluster.HeaderHopPrincipal.)
	MetaRelayCall = "mcphost.dev/relay-call"
	// MetaRelayEra and MetaRelayReplica tell the calling replica, in the
	// relay's initialize result, the era of the holder's session and the
	// holder's id.
	MetaRelayEra     = "mcphost.dev/era"
	MetaRelayReplica = "mcphost.dev/replica"
)

// role is where a singleton server runs, as this replica sees it.
type role struct {
	// holder: this replica runs it. Otherwise on names the replica that
	// does ("" while nobody is known to).
	holder bool
	on     string
}

// placement is a singleton Conn's view of who runs it.
type placement struct {
	job   string // the lock's name
	self  string
	retry time.Duration
	mu    sync.Mutex
	cur   role
	// changed signals the supervisor of every change; moved is closed
	// (and replaced) on every change, for whoever waits for one.
	changed chan struct{}
	moved   chan struct{}
}

func newPlacement(server, self string) *placement {
	return &placement{job: "server:" + server, self: self, retry: singletonRetry,
		changed: make(chan struct{}, 1), moved: make(chan struct{})}
}

func (p *placement) get() role {
	r, _ := p.watch()
	return r
}

// watch returns the role and a channel closed when it next changes.
func (p *placement) watch() (role, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cur, p.moved
}

func (p *placement) set(r role) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur == r {
		return
	}
	p.cur = r
	close(p.moved)
	p.moved = make(chan struct{})
	select {
	case p.changed <- struct{}{}:
	default:
	}
}

// placeChanged is the channel a singleton's supervisor hears placement
// changes on; nil (never ready) for every other server.
func (c *Conn) placeChanged() <-chan struct{} {
	if c.place == nil {
		return nil
	}
	return c.place.changed
}

// singleton reports whether the server runs on one replica of a cluster:
// placement = "singleton" on a host whose store is shared and that knows
// its cluster node. Anywhere else the server runs here, as any other.
func singleton(s *config.Server, deps *Deps) bool {
	return s.Placement == config.PlacementSingleton && deps.Cluster.Clustered() && deps.Store != nil && deps.Store.Shared()
}

// runPlacement keeps c.place true until ctx ends: it tries to take the
// server's lock every retry; while it holds it, this replica runs the
// server; otherwise it reads which replica holds it. A lost lock ends
// this replica's session of the server (serve hears the change) before
// the lock is tried again. On return the lock is released: the caller
// ends ctx only after the supervisor has stopped the server.
func (c *Conn) runPlacement(ctx context.Context) {
	p, st := c.place, c.deps.Store
	t := time.NewTimer(0)
	defer t.Stop()
	var unsure failureLog
	unsure.logger = c.logger
	defer unsure.flush()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		lease, ok, err := st.TryLead(ctx, p.job)
		switch {
		case err != nil:
			// The store is away: a replica that relays keeps its relay
			// session, which needs no database, and one that runs the
			// server has lost the lock with its connection anyway.
			if ctx.Err() == nil {
				unsure.failed("cannot ask the store which replica runs a singleton server; trying again", err, "retry", p.retry)
			}
		case ok:
			unsure.reset()
			c.logger.Info("this replica runs the singleton server")
			p.set(role{holder: true, on: p.self})
			select {
			case <-lease.Lost():
				if ctx.Err() == nil {
					c.logger.Warn("lost the lock of a singleton server (its database connection ended); the server stops here, and a replica that takes the lock starts it")
					p.set(role{})
				}
			case <-ctx.Done():
			}
			lease.Release()
			if ctx.Err() != nil {
				return
			}
		default:
			on, found, err := st.Leader(ctx, p.job)
			switch {
			case err != nil:
				if ctx.Err() == nil {
					unsure.failed("cannot read which replica runs a singleton server; trying again", err, "retry", p.retry)
				}
			case found && on != p.self:
				unsure.reset()
				if p.get().on != on {
					c.logger.Info("the singleton server runs on another replica; this one relays to it", "on", on)
				}
				p.set(role{on: on})
			}
		}
		t.Reset(p.retry)
	}
}

// awaitRole returns where the server runs once that is known, or an error
// when ctx ends first.
func (c *Conn) awaitRole(ctx context.Context) (role, error) {
	for {
		r, moved := c.place.watch()
		if r.holder || r.on != "" {
			return r, nil
		}
		select {
		case <-ctx.Done():
			return role{}, fmt.Errorf("no replica runs this singleton server yet (placement = %q): waiting for one to take its lock", config.PlacementSingleton)
		case <-moved:
		}
	}
}
