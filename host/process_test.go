package host

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
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
	lim := newStderrLimiter(slog.New(h))
	l := newStderrLog(slog.New(h), lim)

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

	if got := h.stderr.Load(); got != stderrLogBurst {
		t.Errorf("logged %d stderr lines, want the burst of %d", got, stderrLogBurst)
	}
	tail := l.Tail(stderrTailLines + 10)
	if len(tail) != stderrTailLines+1 {
		t.Errorf("tail has %d lines, want %d kept plus the unterminated one", len(tail), stderrTailLines+1)
	}
	last := tail[len(tail)-1]
	if len(last) != stderrLineMax || strings.Trim(last, "y") != "" {
		t.Errorf("unterminated line kept as %d bytes, want %d", len(last), stderrLineMax)
	}
	l.Write([]byte("\nafter\n"))
	if got := l.Tail(1); len(got) != 1 || got[0] != "after" {
		t.Errorf("tail after the huge line = %q", got)
	}
	if h.longest.Load() > stderrLineMax {
		t.Errorf("a logged line has %d bytes, more than %d", h.longest.Load(), stderrLineMax)
	}
	// 9,800 non-empty flood lines, the huge one and "after": every line
	// not logged is reported, at the latest when the server stops.
	lim.flush()
	const lines = 9800 + 2
	if got := h.stderr.Load() + h.suppressedLines.Load(); got != lines || h.suppressed.Load() == 0 {
		t.Errorf("%d lines logged and %d reported suppressed in %d reports, want %d in all",
			h.stderr.Load(), h.suppressedLines.Load(), h.suppressed.Load(), lines)
	}
}

func TestBackoff(t *testing.T) {
	const lo, hi = 500_000_000, 60_000_000_000 // 500ms, 1m
	tests := []struct {
		attempt  int
		min, max int64
	}{
		{0, lo * 8 / 10, lo * 12 / 10},
		{1, 2 * lo * 8 / 10, 2 * lo * 12 / 10},
		{3, 8 * lo * 8 / 10, 8 * lo * 12 / 10},
		{20, hi * 8 / 10, hi * 12 / 10},
		{1000, hi * 8 / 10, hi * 12 / 10},
	}
	for _, tc := range tests {
		for range 100 {
			d := int64(backoff(tc.attempt, lo, hi))
			if d < tc.min || d > tc.max {
				t.Fatalf("backoff(%d) = %d, want in [%d, %d]", tc.attempt, d, tc.min, tc.max)
			}
		}
	}
}
