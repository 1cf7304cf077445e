package store

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Events across replicas. On PostgreSQL with a replica id ([Options.Replica])
// the store carries small notices between the replicas sharing it: a
// [Poke], sent with pg_notify on the channel [PokeChannel] and heard by
// [Store.Listen] on every other replica. A poke names a row ("poke, then
// read"): the receiver reads what it names. Delivery is at most once, at
// commit, and only to listeners connected at that moment; a listener that
// reconnects is told to resync ([PokeResync]). On SQLite, or without a
// replica id, there is one process: Poke does nothing and Listen returns.
//
// Any role that may connect to the database may NOTIFY on PokeChannel
// (and LISTEN to it). So a poke travels sealed ([cluster.Notices]: an HMAC
// under a key derived from [Options.Secret], over a time and a nonce), and
// Listen passes on only what opens: sealed by a replica with the same
// secret, within [cluster.HopWindow] of this replica's clock, once.
// Anything else is refused, counted ([Store.PokesRefused]) and logged (at
// most once a minute), with the backend pid that sent it.

// PokeChannel is the PostgreSQL notification channel of the pokes.
const PokeChannel = "mcphost_events"

// MaxPokeBytes bounds one sealed poke (its JSON and about 90 bytes of
// seal): PostgreSQL refuses a notification payload of 8000 bytes or more.
const MaxPokeBytes = 8000

// Kinds of pokes the store sends or delivers itself. The host defines the
// others (call_started, progress, approval, answer, reload, …).
const (
	// PokeEntry: an entry was appended (ID, Principal). The append sends it
	// in its own transaction, so it arrives only when the entry committed.
	PokeEntry = "entry"
	// PokeAppContext: an App context was set (ID is the entry, Principal).
	// The receiving store bumps its AppContextVersion before passing it on.
	PokeAppContext = "appcontext"
	// PokeResync is delivered by Listen after it reconnected: pokes sent
	// while it was away are lost, and the receiver must read anew.
	PokeResync = "resync"
	// PokeListening is delivered by Listen once, when it first listens:
	// from then on pokes arrive.
	PokeListening = "listening"
)

// Poke is one notice between replicas. Origin is the sending replica's id
// (set by Poke). Data is small JSON a kind carries directly.
type Poke struct {
	Kind      string          `json:"kind"`
	ID        string          `json:"id,omitempty"`
	Principal string          `json:"principal,omitempty"`
	Origin    string          `json:"origin,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
}

// PokeTooBigError refuses a poke whose payload would reach MaxPokeBytes.
type PokeTooBigError struct {
	Kind  string
	Bytes int
}

func (e *PokeTooBigError) Error() string {
	return fmt.Sprintf("store: poke %q: the payload has %d bytes; PostgreSQL notifications take fewer than %d: send an id and let the receiver read the row", e.Kind, e.Bytes, MaxPokeBytes)
}

// Replica is this store's replica id ([Options.Replica]); empty on a
// single node.
func (s *Store) Replica() string { return s.replica }

// Clustered says that the store is shared by replicas: it is PostgreSQL
// and has a replica id. Only then do pokes travel.
func (s *Store) Clustered() bool { return s.pg != nil && s.replica != "" }

// encodePoke sets p's origin, encodes and seals it, refusing a payload
// too big. Only a clustered store calls it.
func (s *Store) encodePoke(p Poke) ([]byte, error) {
	p.Origin = s.replica
	if p.Data != nil && !json.Valid(p.Data) {
		return nil, fmt.Errorf("store: poke %q: data is not valid JSON", p.Kind)
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("store: poke %q: %w", p.Kind, err)
	}
	sealed := s.notices.Seal(b)
	if len(sealed) >= MaxPokeBytes {
		return nil, &PokeTooBigError{Kind: p.Kind, Bytes: len(sealed)}
	}
	return []byte(sealed), nil
}

// Poke sends p to the other replicas (pg_notify, one round trip), with
// this replica as its origin. It refuses a payload of MaxPokeBytes or
// more with a *PokeTooBigError. On a store that is not clustered it does
// nothing.
func (s *Store) Poke(ctx context.Context, p Poke) error {
	if !s.Clustered() {
		return nil
	}
	b, err := s.encodePoke(p)
	if err != nil {
		return err
	}
	if _, err := s.w.ExecContext(ctx, `SELECT pg_notify(?, ?)`, PokeChannel, string(b)); err != nil {
		return scrub(fmt.Errorf("store: poke %q: %w", p.Kind, err), s.pg.secrets)
	}
	return nil
}

// Listen backoff bounds between reconnections.
const (
	listenBackoffMin = 50 * time.Millisecond
	listenBackoffMax = 5 * time.Second
)

// Listen calls fn with every poke another replica sends, until ctx ends
// (then it returns nil). It listens on a connection of its own, not one of
// the pool's; when that connection is lost it connects again, with capped
// exponential backoff, and then calls fn(Poke{Kind: PokeResync}): what was
// sent in between is lost. The first time it listens it calls
// fn(Poke{Kind: PokeListening}). Pokes of this replica are skipped. fn
// runs on Listen's goroutine, one poke at a time, and should not block
// long. On a store that is not clustered Listen returns nil at once.
func (s *Store) Listen(ctx context.Context, fn func(Poke)) error {
	if !s.Clustered() {
		return nil
	}
	cfg := s.pg.listenCfg.Copy()
	cfg.RuntimeParams["application_name"] = "mcphost listen " + s.replica
	backoff := listenBackoffMin
	first := true
	for {
		conn, err := s.listenConn(ctx, cfg)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			s.logger.Warn("listening for other replicas' events: cannot connect; retrying", "db", s.pg.name,
				"error", scrub(err, s.pg.secrets), "in", backoff)
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return nil
			}
			backoff = min(2*backoff, listenBackoffMax)
			continue
		}
		backoff = listenBackoffMin
		if first {
			fn(Poke{Kind: PokeListening})
			first = false
		} else {
			s.logger.Info("listening for other replicas' events again; resyncing", "db", s.pg.name)
			fn(Poke{Kind: PokeResync})
		}
		err = s.listenOn(ctx, conn, fn)
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn.Close(closeCtx)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		s.logger.Warn("listening for other replicas' events: connection lost; reconnecting", "db", s.pg.name,
			"error", scrub(err, s.pg.secrets))
	}
}

// listenConn connects and runs LISTEN.
func (s *Store) listenConn(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+PokeChannel); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return conn, nil
}

// listenOn delivers the pokes arriving on conn until it fails or ctx ends.
func (s *Store) listenOn(ctx context.Context, conn *pgx.Conn, fn func(Poke)) error {
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		payload, err := s.notices.Open(n.Payload)
		if err != nil {
			s.refused.refuse(s.logger, s.now(), n, err)
			continue
		}
		var p Poke
		if err := json.Unmarshal(payload, &p); err != nil {
			s.logger.Warn("ignoring a poke that does not decode", "error", err, "bytes", len(n.Payload))
			continue
		}
		if p.Origin == s.replica || p.Kind == PokeResync || p.Kind == PokeListening {
			continue
		}
		if p.Kind == PokeAppContext {
			s.appContexts.Add(1)
		}
		fn(p)
	}
}

// PokesRefused is how many notifications on [PokeChannel] Listen has
// refused: not sealed with the cluster secret, stale or replayed.
func (s *Store) PokesRefused() int64 { return s.refused.total.Load() }

// refusalLogEvery is how often, at most, Listen logs a refused
// notification.
const refusalLogEvery = time.Minute

// pokeRefusals counts the notifications Listen refused, and logs the
// first and then at most one every refusalLogEvery, each with how many
// were refused since the last one logged: another role's NOTIFY cannot
// flood the log.
type pokeRefusals struct {
	total  atomic.Int64
	mu     sync.Mutex
	logged time.Time // when the last warning was logged
	since  int64     // refused since then, not logged
}

func (r *pokeRefusals) refuse(logger *slog.Logger, now time.Time, n *pgconn.Notification, why error) {
	r.total.Add(1)
	r.mu.Lock()
	r.since++
	if !r.logged.IsZero() && now.Sub(r.logged) < refusalLogEvery {
		r.mu.Unlock()
		return
	}
	since := r.since
	r.logged, r.since = now, 0
	r.mu.Unlock()
	logger.Warn("refused a notification on the replicas' channel: only a replica with the same cluster secret may send one there; "+
		"if it comes from another program, revoke its role's access to the database",
		"channel", n.Channel, "sender_pid", n.PID, "reason", why, "refused", since, "log_every", refusalLogEvery.String())
}
