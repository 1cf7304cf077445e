package main

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
)

// Timing of watch_config.
const (
	// watchInterval is how often the file's modification time and size
	// are looked at. Polling needs no dependency and works on every file
	// system (network mounts, editors that replace the file by a rename,
	// Kubernetes' symlink swaps), at the cost of one stat a second.
	watchInterval = time.Second
	// watchQuiet is how long the file must stay unchanged before it is
	// read: an editor or a generator that writes in several steps is left
	// to finish.
	watchQuiet = 500 * time.Millisecond
)

// fileState is what the watcher compares: a change of either is a write.
type fileState struct {
	mod  time.Time
	size int64
}

func statFile(path string) (fileState, bool) {
	fi, err := os.Stat(path) // follows symlinks: a swapped link target shows
	if err != nil {
		return fileState{}, false
	}
	return fileState{mod: fi.ModTime(), size: fi.Size()}, true
}

// contentHash is the hash the config would have with src as the file's
// bytes: the form of host.ConfigHash, so the file is compared with the
// config in force.
func contentHash(path string, src []byte) string {
	return (&config.Config{Files: map[string]*hcl.File{path: {Bytes: src}}}).Hash()
}

// watchFile reloads the config file when it changes, while watch_config
// is on, until ctx ends. The file is looked at every interval; once a
// change has been still for quiet, its bytes are compared with the config
// in force (a write of the same bytes, or a reload someone else made
// already, changes nothing) and with the last content that failed: a file
// with errors is reported once, however long it stays as it is, and the
// next change is tried again.
func (r *reloader) watchFile(ctx context.Context, interval, quiet time.Duration) {
	seen, _ := statFile(r.path)
	failed := "" // the content hash of the last failed reload
	pending := false
	timer := time.NewTimer(interval)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		next := interval
		st, ok := statFile(r.path)
		switch {
		case !r.watch.Load():
			seen, pending = st, false // the reload that turns it on has read the file
		case !ok:
			// Gone for a moment (a rename under way) or for good: wait
			// for it to come back.
		case st != seen:
			seen, pending, next = st, true, quiet
		case pending:
			pending = false
			r.reloadChanged(ctx, &failed)
		}
		timer.Reset(next)
	}
}

// reloadChanged reloads the file unless its content is the config in
// force or the one that failed last.
func (r *reloader) reloadChanged(ctx context.Context, failed *string) {
	src, err := os.ReadFile(r.path)
	if err != nil {
		return // the reload would fail the same way; the next change tries again
	}
	sum := contentHash(r.path, src)
	switch sum {
	case r.h.ConfigHash():
		return // written again as it was, or reloaded already
	case *failed:
		r.logger.Info("watch_config: the config file changed but holds what failed to reload last; waiting for another change", "config", r.path)
		return
	}
	_, err = r.reload(ctx, "watch_config", "", host.ReloadOptions{})
	switch {
	case err == nil:
		*failed = ""
	case errors.Is(err, host.ErrClosing):
	default:
		*failed = sum
	}
}
