//go:build !linux

package main

import (
	"context"
	"errors"
)

// runCluster needs Linux: the PostgreSQL it starts (internal/pgserver) and
// the replicas' counters (/proc).
func (r *runner) runCluster(context.Context, binaries) error {
	return errors.New("-cluster runs on Linux only")
}
