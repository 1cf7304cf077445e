package host

import (
	"errors"
	"github.com/mcphost/mcphost/host/internal/transport"
	"sync"
	"time"
)

// What a server's card shows on demand (admins): the last lines its
// process wrote on stderr and its last log messages (notifications/message),
// each bounded; and a restart.

// recentLogLines bounds the log messages kept per server.
const recentLogLines = 100

// LogLine is one log message a server sent.
type LogLine struct {
	At     time.Time `json:"at"`
	Level  string    `json:"level"`
	Logger string    `json:"logger,omitempty"`
	Data   string    `json:"data"`
}

// logRing keeps a server's last log messages.
type logRing struct {
	mu    sync.Mutex
	lines []LogLine
}

func (r *logRing) add(l LogLine) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.lines) == recentLogLines {
		copy(r.lines, r.lines[1:])
		r.lines = r.lines[:recentLogLines-1]
	}
	r.lines = append(r.lines, l)
}

func (r *logRing) list() []LogLine {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]LogLine{}, r.lines...)
}

// ServerLogs is what a server's card shows on demand.
type ServerLogs struct {
	Server string `json:"server"`
	// Stderr is the last lines of the current (or last) process's stderr,
	// oldest first; empty for a remote server.
	Stderr []string `json:"stderr"`
	// Messages is the server's last log messages, oldest first.
	Messages []LogLine `json:"messages"`
}

// ServerLogs returns a server's stderr tail and last log messages; only
// for admins (the API checks), since a server's stderr may say anything.
func (h *Host) ServerLogs(name string) (ServerLogs, error) {
	g := h.acquire()
	defer g.release()
	c, err := g.conn(name)
	if err != nil {
		return ServerLogs{}, err
	}
	out := ServerLogs{Server: name, Stderr: []string{}, Messages: c.recent.list()}
	if l := c.stderr.Load(); l != nil {
		out.Stderr = l.Tail(transport.StderrTailLines)
	}
	return out, nil
}

// errRestartAsked ends a session that RestartServer asked to replace.
var errRestartAsked = errors.New("restart requested")

// errPlacementMoved ends a singleton server's session when the replica
// that runs it changed (singleton.go).
var errPlacementMoved = errors.New("the singleton server moved to another replica")

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
	defer g.release()
	c, err := g.conn(name)
	if err != nil {
		return err
	}
	if !c.cfg.Enabled {
		return ErrServerDisabled
	}
	select {
	case c.restart <- struct{}{}:
	default: // one is already asked for
	}
	c.logger.Info("restart requested")
	return nil
}
