package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Replica is one mcphost process registered in the shared store.
type Replica struct {
	ID, Addr      string
	Started, Seen time.Time
	Draining      bool
}

// PutReplica registers r, or updates its registration (an upsert by ID),
// and sets its Seen time to now: the replica's heartbeat. It fails for an
// empty ID.
func (s *Store) PutReplica(ctx context.Context, r Replica) error {
	if r.ID == "" {
		return errors.New("store: put replica: empty id")
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO replicas (id, addr, started_at, seen_at, draining) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET addr = excluded.addr, started_at = excluded.started_at,
	seen_at = excluded.seen_at, draining = excluded.draining`,
		r.ID, r.Addr, unixOrZero(r.Started), s.now().UTC().UnixNano(), r.Draining)
	if err != nil {
		return fmt.Errorf("store: put replica %q: %w", r.ID, diskFull(err))
	}
	return nil
}

// Replicas returns every registered replica, ordered by ID (an empty,
// non-nil slice when there is none). Whether a replica is alive is the
// reader's call, from Seen.
func (s *Store) Replicas(ctx context.Context) ([]Replica, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, addr, started_at, seen_at, draining FROM replicas ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: replicas: %w", err)
	}
	defer rows.Close()
	out := []Replica{}
	for rows.Next() {
		var r Replica
		var started, seen int64
		if err := rows.Scan(&r.ID, &r.Addr, &started, &seen, &r.Draining); err != nil {
			return nil, fmt.Errorf("store: replicas: %w", err)
		}
		r.Started, r.Seen = timeOrZero(started), timeOrZero(seen)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: replicas: %w", err)
	}
	return out, nil
}

// DeleteReplica removes a replica's registration; a missing one is no
// error.
func (s *Store) DeleteReplica(ctx context.Context, id string) error {
	if _, err := s.w.ExecContext(ctx, `DELETE FROM replicas WHERE id = ?`, id); err != nil {
		return fmt.Errorf("store: delete replica %q: %w", id, err)
	}
	return nil
}

// SweepReplicas deletes the registrations of replicas whose last
// heartbeat (Seen) is before seenBefore, and returns how many it deleted:
// a replica that crashed never deletes its own. A live replica whose row
// was swept registers again at its next heartbeat.
func (s *Store) SweepReplicas(ctx context.Context, seenBefore time.Time) (int64, error) {
	res, err := s.w.ExecContext(ctx, `DELETE FROM replicas WHERE seen_at < ?`, seenBefore.UTC().UnixNano())
	if err != nil {
		return 0, fmt.Errorf("store: sweep replicas: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store: sweep replicas: %w", err)
	}
	return n, nil
}

// Shared says that the database can be shared by several mcphost
// processes, the replicas of a cluster: it is PostgreSQL. A SQLite file
// belongs to one daemon.
func (s *Store) Shared() bool { return s.pg != nil }
