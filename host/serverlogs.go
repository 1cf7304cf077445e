package host

import (
	"errors"

	"github.com/mcphost/mcphost/host/internal/upstream"
)

// What a server's card shows on demand (admins): the last lines its
// process wrote on stderr and its last log messages (notifications/message),
// each bounded; and a restart.

// ServerLogs is what a server's card shows on demand.
type ServerLogs struct {
	Server string `json:"server"`
	// Stderr is the last lines of the current (or last) process's stderr,
	// oldest first; empty for a remote server.
	Stderr []string `json:"stderr"`
	// Messages is the server's last log messages, oldest first.
	Messages []upstream.LogLine `json:"messages"`
}

// ServerLogs returns a server's stderr tail and last log messages; only
// for admins (the API checks), since a server's stderr may say anything.
func (h *Host) ServerLogs(name string) (ServerLogs, error) {
	g := h.acquire()
	defer g.Release()
	c, err := g.Conn(name)
	if err != nil {
		return ServerLogs{}, err
	}
	msgs, stderr := c.Logs()
	return ServerLogs{Server: name, Stderr: stderr, Messages: msgs}, nil
}

// ErrServerDisabled is the answer to restarting a server whose block has
// enabled = false.
var ErrServerDisabled = errors.New("the server is disabled (enabled = false in its block)")

// RestartServer asks the server's supervisor for a new session now: a
// ready server's session is closed (running calls on it fail as at any
// disconnect) and a new one started; a server waiting in its backoff, or
// failed for good after max_restarts, starts again at once with its count
// reset.
func (h *Host) RestartServer(name string) error {
	g := h.acquire()
	defer g.Release()
	c, err := g.Conn(name)
	if err != nil {
		return err
	}
	if !c.Cfg.Enabled {
		return ErrServerDisabled
	}
	c.RequestRestart()
	return nil
}
