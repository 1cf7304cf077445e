package upstream

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/mcphost/mcphost/host/internal/transport"
)

// Start runs an enabled server's supervisor under parent, with a cancel
// of its own so that a reload can stop it alone (Retire).
func (c *Conn) Start(parent context.Context) {
	if !c.Cfg.Enabled {
		return
	}
	ctx, cancel := context.WithCancel(parent)
	c.stop = cancel
	go c.Run(ctx)
}

// Started reports whether Start ran the supervisor.
func (c *Conn) Started() bool { return c.stop != nil }

// Settled is closed once the first connection attempt has ended.
func (c *Conn) Settled() <-chan struct{} { return c.settled }

// Done is closed when the supervisor has returned.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Retire stops the supervisor of a connection a reload replaced; its last
// states are not news (a successor may have its name).
func (c *Conn) Retire() {
	c.retired.Store(true)
	if c.stop != nil {
		c.stop()
	}
}

// Logger is the connection's logger (with the server's name).
func (c *Conn) Logger() *slog.Logger { return c.logger }

// Refresh fetches the catalog of the live session again and returns the
// status. Lists whose ttlMs says they are still fresh come from the host
// cache without a request to the server.
func (c *Conn) Refresh(ctx context.Context) (ServerStatus, error) {
	cs, _, err := c.Current()
	if err != nil {
		return ServerStatus{}, err
	}
	rctx, cancel := context.WithTimeout(ctx, c.Cfg.DiscoveryTimeout)
	defer cancel()
	cat, err := FetchCatalog(rctx, cs, c.lists)
	if err != nil {
		return ServerStatus{}, fmt.Errorf("refresh %s: %w", c.Cfg.Name, err)
	}
	c.mu.Lock()
	if c.session == cs {
		c.cat = cat
	}
	c.mu.Unlock()
	return c.Snapshot(), nil
}

// Logs returns the server's last log messages and the tail of its
// current (or last) process's stderr.
func (c *Conn) Logs() (messages []LogLine, stderr []string) {
	stderr = []string{}
	if l := c.stderr.Load(); l != nil {
		stderr = l.Tail(transport.StderrTailLines)
	}
	return c.recent.list(), stderr
}

// RequestRestart asks the supervisor for a new session now.
func (c *Conn) RequestRestart() {
	select {
	case c.restart <- struct{}{}:
	default: // one is already asked for
	}
	c.logger.Info("restart requested")
}

// Track registers a running call, to which the server's requests and log
// messages during it are attributed; remove ends that.
func (c *Conn) Track(call *Call) (remove func()) { return c.inflight.add(call) }

// ListChanged counts the server's list_changed notifications per list,
// across its sessions.
func (c *Conn) ListChanged() (tools, prompts, resources uint64) {
	return c.listChanged.tools.Load(), c.listChanged.prompts.Load(), c.listChanged.resources.Load()
}

// ReleaseClient closes the per-client sessions of the gateway client key.
func (c *Conn) ReleaseClient(key string) { c.clients.release(key) }

// Catalog is the catalog of the current session (nil before the first).
func (c *Conn) Catalog() *Catalog {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cat
}

// Singleton reports whether the server runs on one replica of a cluster.
func (c *Conn) Singleton() bool { return c.place != nil }

// Holds reports whether this replica runs the singleton server now.
func (c *Conn) Holds() bool { return c.place != nil && c.place.get().holder }
