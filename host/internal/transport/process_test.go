package transport

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/host/config"
)

// countingHandler counts log records by message.
type countingHandler struct {
	stderr, suppressed atomic.Int64
	suppressedLines    atomic.Int64 // the sum of the suppressed reports' counts
	longest            atomic.Int64
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	switch r.Message {
	case "server stderr":
		h.stderr.Add(1)
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "line" && int64(len(a.Value.String())) > h.longest.Load() {
				h.longest.Store(int64(len(a.Value.String())))
			}
			return true
		})
	case "server stderr suppressed":
		h.suppressed.Add(1)
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "lines" {
				h.suppressedLines.Add(a.Value.Int64())
			}
			return true
		})
	}
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

func TestStderrLogIsBounded(t *testing.T) {
	h := &countingHandler{}
	lim := NewStderrLimiter(slog.New(h))
	l := NewStderrLog(slog.New(h), lim)

	// A flood of lines, written in odd-sized chunks, plus one huge line
	// without a newline at the end.
	var b strings.Builder
	for i := range 10000 {
		b.WriteString(strings.Repeat("x", i%50))
		b.WriteString("\n")
	}
	flood := b.String()
	for len(flood) > 0 {
		n := min(777, len(flood))
		l.Write([]byte(flood[:n]))
		flood = flood[n:]
	}
	l.Write([]byte(strings.Repeat("y", 1<<20)))

	if got := h.stderr.Load(); got != StderrLogBurst {
		t.Errorf("logged %d stderr lines, want the burst of %d", got, StderrLogBurst)
	}
	tail := l.Tail(StderrTailLines + 10)
	if len(tail) != StderrTailLines+1 {
		t.Errorf("tail has %d lines, want %d kept plus the unterminated one", len(tail), StderrTailLines+1)
	}
	last := tail[len(tail)-1]
	if len(last) != StderrLineMax || strings.Trim(last, "y") != "" {
		t.Errorf("unterminated line kept as %d bytes, want %d", len(last), StderrLineMax)
	}
	l.Write([]byte("\nafter\n"))
	if got := l.Tail(1); len(got) != 1 || got[0] != "after" {
		t.Errorf("tail after the huge line = %q", got)
	}
	if h.longest.Load() > StderrLineMax {
		t.Errorf("a logged line has %d bytes, more than %d", h.longest.Load(), StderrLineMax)
	}
	// 9,800 non-empty flood lines, the huge one and "after": every line
	// not logged is reported, at the latest when the server stops.
	lim.Flush()
	const lines = 9800 + 2
	if got := h.stderr.Load() + h.suppressedLines.Load(); got != lines || h.suppressed.Load() == 0 {
		t.Errorf("%d lines logged and %d reported suppressed in %d reports, want %d in all",
			h.stderr.Load(), h.suppressedLines.Load(), h.suppressed.Load(), lines)
	}
}

func TestServerEnv(t *testing.T) {
	daemon := map[string]string{
		"HOME": "/home/op", "PATH": "/usr/bin:/bin", "USER": "op", "LANG": "C.UTF-8",
		"MCPHOST_SECRET_KEY": "key", "DATABASE_URL": "postgres://u:pw@db/m", "FOO": "bar",
	}
	lookup := func(name string) (string, bool) { v, ok := daemon[name]; return v, ok }
	tests := []struct {
		name    string
		env     map[string]string
		inherit []string
		lookup  func(string) (string, bool)
		want    []string
	}{
		{
			name: "the six that are set, in their order",
			want: []string{"HOME=/home/op", "PATH=/usr/bin:/bin", "USER=op"},
		},
		{
			name: "env after them, sorted, winning over an inherited name",
			env:  map[string]string{"ZED": "z", "PATH": "/opt/bin", "ALPHA": "a"},
			want: []string{"HOME=/home/op", "USER=op", "ALPHA=a", "PATH=/opt/bin", "ZED=z"},
		},
		{
			name:    "inherit_env adds names that are set",
			inherit: []string{"LANG", "TZ", "FOO"},
			want:    []string{"HOME=/home/op", "PATH=/usr/bin:/bin", "USER=op", "LANG=C.UTF-8", "FOO=bar"},
		},
		{
			name:    "never a reserved name, from either side",
			env:     map[string]string{"MCPHOST_TOKEN": "t"},
			inherit: []string{"MCPHOST_SECRET_KEY"},
			want:    []string{"HOME=/home/op", "PATH=/usr/bin:/bin", "USER=op"},
		},
		{
			// A nil exec.Cmd.Env would inherit everything.
			name:   "an empty environment is not nil",
			lookup: func(string) (string, bool) { return "", false },
			want:   []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &config.Server{Env: tt.env, Sandbox: config.Sandbox{InheritEnv: tt.inherit}}
			l := lookup
			if tt.lookup != nil {
				l = tt.lookup
			}
			got := Env(s, l)
			if got == nil {
				t.Fatal("serverEnv returned nil")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("serverEnv (-want +got):\n%s", diff)
			}
		})
	}
}
