package transport

import (
	"github.com/mcphost/mcphost/internal/logrec"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestLogLimiter runs a limiter on synctest's fake clock: a burst is
// allowed, the rest of the window is counted, and the count is reported
// when the window ends even if the server sends nothing more.
func TestLogLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &logrec.Handler{}
		l := NewLogLimiter(slog.New(rec), "suppressed", "n")
		allowed := 0
		for range StderrLogBurst + 50 {
			if l.Allow() {
				allowed++
			}
		}
		if allowed != StderrLogBurst {
			t.Errorf("allowed %d in one window, want %d", allowed, StderrLogBurst)
		}
		if got := rec.Records("suppressed"); len(got) != 0 {
			t.Fatalf("reported %d times before the window ended", len(got))
		}
		time.Sleep(stderrLogWindow + time.Millisecond) // the fake clock
		synctest.Wait()
		got := rec.Records("suppressed")
		if len(got) != 1 || got[0].Attrs["n"].Int64() != 50 {
			t.Fatalf("reports at the window's end: %+v, want one of 50", got)
		}
		// A new window allows a new burst; a flush reports at once, and
		// only once.
		for range StderrLogBurst + 1 {
			l.Allow()
		}
		l.Flush()
		l.Flush()
		time.Sleep(stderrLogWindow + time.Millisecond)
		synctest.Wait()
		if got := rec.Records("suppressed"); len(got) != 2 || got[1].Attrs["n"].Int64() != 1 {
			t.Errorf("reports: %+v, want a second one of 1", got)
		}
	})
}

func TestCutText(t *testing.T) {
	tests := []struct {
		name, in string
		limit    int
		want     string
	}{
		{"short", "abc", 5, "abc"},
		{"exact", "abcde", 5, "abcde"},
		{"long", "abcdefgh", 5, "abcde… [3 bytes cut]"},
		{"utf-8 boundary", "abcdé" + strings.Repeat("x", 10), 5, "abcd… [12 bytes cut]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := CutText(tc.in, tc.limit); got != tc.want {
				t.Errorf("cutText(%q, %d) = %q, want %q", tc.in, tc.limit, got, tc.want)
			}
		})
	}
}
