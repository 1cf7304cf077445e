package transport

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcphost/mcphost/host/config"
)

// Bounds on what mcphost keeps of a stdio server's stderr. The line and
// rate bounds apply to a server's notifications/message too (serverlog.go).
const (
	StderrLineMax   = 1024             // bytes of one line (one log message's data) kept and logged
	StderrTailLines = 100              // lines kept for error messages and the server's card
	StderrLogBurst  = 200              // lines (log messages) logged per window before suppressing
	stderrLogWindow = 10 * time.Second // the rate window
)

// NewCommand builds the exec.Cmd of a stdio server. It carries no context:
// the process lives as long as its session, not as long as the connect
// (trap T11), and the host ends it explicitly.
func NewCommand(s *config.Server, stderr *StderrLog) *exec.Cmd {
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Dir = s.Cwd
	cmd.Env = Env(s, os.LookupEnv)
	cmd.Stderr = stderr
	// Own process group, so stopping the server also stops whatever it
	// started, and the terminal's Ctrl-C reaches only mcphost, which then
	// shuts servers down in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A grandchild that keeps stderr open must not block Wait forever.
	cmd.WaitDelay = 2 * time.Second
	return cmd
}

// Env is the whole environment of the stdio server s: the variables
// of mcphost's environment (read with lookup) that s inherits
// (config.Server.InheritedEnv: the MCP SDKs' six names and inherit_env), in
// that order, then its env, sorted by name, which wins over an inherited
// variable of the same name. Nothing else of mcphost's environment passes,
// and no reserved (MCPHOST_) name whatever its source. The result is never
// nil: a nil exec.Cmd.Env would hand the server everything.
func Env(s *config.Server, lookup func(string) (string, bool)) []string {
	env := make([]string, 0, 8+len(s.Env))
	for _, name := range s.InheritedEnv() {
		if _, own := s.Env[name]; own {
			continue
		}
		if v, ok := lookup(name); ok && !config.ReservedEnv(name) {
			env = append(env, name+"="+v)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		if !config.ReservedEnv(k) {
			env = append(env, k+"="+s.Env[k])
		}
	}
	return env
}

// KillGroup sends SIGKILL to the process group of a started command, ending
// any grandchildren the server left behind. It is a no-op for a command that
// never started.
func KillGroup(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// ExitDescription says how a finished command ended ("exit status 3",
// "signal: killed"), or "" when it has not been waited for.
func ExitDescription(cmd *exec.Cmd) string {
	if cmd == nil || cmd.ProcessState == nil {
		return ""
	}
	return cmd.ProcessState.String()
}

// StderrLog is the io.Writer behind a stdio server's stderr. It splits the
// stream into lines, logs each with the server name (rate-limited by the
// server's limiter, which outlives the session), and keeps the last few
// lines for error messages. Memory is bounded whatever the server writes.
type StderrLog struct {
	logger *slog.Logger
	limit  *LogLimiter
	// OnLine, when set before the server starts, sees each line (the
	// sandbox turns refusals into hints). It must not block.
	OnLine func(line string)
	// Quiet, when set before the server starts, logs the lines at debug
	// level: the server failed the same way several times in a row, and
	// its failure's line already quotes what it printed.
	Quiet bool

	mu      sync.Mutex
	partial []byte
	tail    []string
}

func NewStderrLog(logger *slog.Logger, limit *LogLimiter) *StderrLog {
	return &StderrLog{logger: logger, limit: limit}
}

// NewStderrLimiter returns the limiter of a server's stderr lines.
func NewStderrLimiter(logger *slog.Logger) *LogLimiter {
	return NewLogLimiter(logger, "server stderr suppressed", "lines")
}

func (l *StderrLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			room := StderrLineMax - len(l.partial)
			if room > 0 {
				l.partial = append(l.partial, p[:min(room, len(p))]...)
			}
			break
		}
		room := StderrLineMax - len(l.partial)
		if room > 0 {
			l.partial = append(l.partial, p[:min(room, i)]...)
		}
		l.line(string(l.partial))
		l.partial = l.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

// line records one complete line. The caller holds l.mu.
func (l *StderrLog) line(s string) {
	s = strings.TrimRight(s, "\r")
	if s == "" {
		return
	}
	if len(l.tail) == StderrTailLines {
		copy(l.tail, l.tail[1:])
		l.tail = l.tail[:StderrTailLines-1]
	}
	l.tail = append(l.tail, s)
	if l.OnLine != nil {
		l.OnLine(s)
	}
	if l.Quiet {
		l.logger.Debug("server stderr", "line", s)
	} else if l.limit.Allow() {
		l.logger.Info("server stderr", "line", s)
	}
}

// Tail returns up to n of the last stderr lines, oldest first, including an
// unterminated last line.
func (l *StderrLog) Tail(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	lines := append([]string(nil), l.tail...)
	if len(l.partial) > 0 {
		lines = append(lines, string(l.partial))
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// WithStderr appends the last lines of a server's stderr to err, so that
// "exit status 1" comes with the reason the server printed. A line that
// says why the server failed leads the error (a *SaidError); a launcher's
// notices are left out of the tail.
func WithStderr(err error, l *StderrLog) error {
	if err == nil || l == nil {
		return err
	}
	lines := Meaningful(l.Tail(StderrTailLines))
	said := Said(lines)
	tail := lines[max(0, len(lines)-5):]
	if len(tail) == 0 {
		return err
	}
	err = fmt.Errorf("%w (stderr: %s)", err, strings.Join(tail, " | "))
	if said != "" {
		return &SaidError{Said: said, Err: err}
	}
	return err
}

// ContextErr turns a context error into a sentence about the bound that
// expired, or returns err unchanged.
func ContextErr(ctx, parent context.Context, err error, what string, bound time.Duration) error {
	if ctx.Err() == context.DeadlineExceeded && parent.Err() == nil {
		return fmt.Errorf("%s: no answer within %s", what, bound)
	}
	return err
}
