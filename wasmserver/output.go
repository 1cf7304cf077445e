package wasmserver

import (
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// tailKeep is how much of a module's stderr is kept for errors, and
// tailLines how many of its last lines an error quotes.
const (
	tailKeep  = 4 << 10
	tailLines = 3
)

// tail passes what a module writes to stderr on to w (if any) and keeps
// the last tailKeep bytes of it.
type tail struct {
	w  io.Writer
	mu sync.Mutex
	b  []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	if len(p) >= tailKeep {
		t.b = append(t.b[:0], p[len(p)-tailKeep:]...)
	} else {
		if over := len(t.b) + len(p) - tailKeep; over > 0 {
			t.b = t.b[:copy(t.b, t.b[over:])]
		}
		t.b = append(t.b, p...)
	}
	t.mu.Unlock()
	if t.w != nil {
		// The module's stderr must not fail because the host's sink did.
		_, _ = t.w.Write(p)
	}
	return len(p), nil
}

// lastLines returns what an error quotes of the output: the last line that
// starts a Go panic or fatal error, if the kept output has one (what
// follows is a stack trace), else the last non-empty lines joined with
// " | "; clipped, or "".
func (t *tail) lastLines() string {
	lines := t.lines()
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "panic: ") || strings.HasPrefix(lines[i], "fatal error: ") {
			return clip(lines[i], 512)
		}
	}
	if len(lines) > tailLines {
		lines = lines[len(lines)-tailLines:]
	}
	return clip(strings.Join(lines, " | "), 512)
}

// lines returns the non-empty lines kept, trimmed.
func (t *tail) lines() []string {
	t.mu.Lock()
	s := string(t.b)
	t.mu.Unlock()
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// reset forgets what was kept: a plugin's output is kept per call.
func (t *tail) reset() {
	t.mu.Lock()
	t.b = t.b[:0]
	t.mu.Unlock()
}

// withTail adds the quoted output to a message.
func (t *tail) withTail(msg string) string {
	if l := t.lastLines(); l != "" {
		return msg + " (stderr: " + l + ")"
	}
	return msg
}

// clip makes s valid UTF-8 without control characters (a module's text goes
// to logs and the WebShell) and at most n bytes, marking a cut with "…".
func clip(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// sleeper is a module's nanosleep: a real sleep that ends early when the
// server stops, so that Close never waits for a guest's time.Sleep.
type sleeper chan struct{}

func (s sleeper) sleep(ns int64) {
	if ns <= 0 {
		return
	}
	t := time.NewTimer(time.Duration(ns))
	defer t.Stop()
	select {
	case <-t.C:
	case <-s:
	}
}
