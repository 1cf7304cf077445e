// Package clustertest is a directory of replicas in memory, for tests that
// run several replicas in one process (cluster.Directory without a store).
// Production code must never import it.
package clustertest

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcphost/mcphost/cluster"
)

// Directory is a cluster.Directory in memory. Its clock is Now (time.Now
// when nil; set it before use).
type Directory struct {
	mu   sync.Mutex
	rows map[string]cluster.Replica
	fail error
	Now  func() time.Time
}

// SetFail makes every method return err (nil: work again).
func (d *Directory) SetFail(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.fail = err
}

var _ cluster.Directory = (*Directory)(nil)

func (d *Directory) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// PutReplica upserts r with Seen set to now.
func (d *Directory) PutReplica(_ context.Context, r cluster.Replica) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fail != nil {
		return d.fail
	}
	if d.rows == nil {
		d.rows = map[string]cluster.Replica{}
	}
	r.Seen = d.now()
	d.rows[r.ID] = r
	return nil
}

// Replicas lists the rows ordered by ID.
func (d *Directory) Replicas(context.Context) ([]cluster.Replica, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fail != nil {
		return nil, d.fail
	}
	out := make([]cluster.Replica, 0, len(d.rows))
	for _, r := range d.rows {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b cluster.Replica) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// DeleteReplica removes a row (none is no error).
func (d *Directory) DeleteReplica(_ context.Context, id string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fail != nil {
		return d.fail
	}
	delete(d.rows, id)
	return nil
}

// SweepReplicas deletes the rows seen before seenBefore.
func (d *Directory) SweepReplicas(_ context.Context, seenBefore time.Time) (int64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fail != nil {
		return 0, d.fail
	}
	var n int64
	for id, r := range d.rows {
		if r.Seen.Before(seenBefore) {
			delete(d.rows, id)
			n++
		}
	}
	return n, nil
}

// Get returns one row.
func (d *Directory) Get(id string) (cluster.Replica, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r, ok := d.rows[id]
	return r, ok
}

// Set writes a row as it is (Seen included): a replica that crashed, or
// one whose address is wrong.
func (d *Directory) Set(r cluster.Replica) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.rows == nil {
		d.rows = map[string]cluster.Replica{}
	}
	d.rows[r.ID] = r
}
