package upstream

import (
	"errors"
	"sync"
	"time"
)

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

// errRestartAsked ends a session that RestartServer asked to replace.
var errRestartAsked = errors.New("restart requested")

// errPlacementMoved ends a singleton server's session when the replica
// that runs it changed (singleton.go).
var errPlacementMoved = errors.New("the singleton server moved to another replica")
