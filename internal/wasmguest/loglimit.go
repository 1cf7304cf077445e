package wasmguest

import (
	"sync"
	"time"
)

// The bounds of a guest's log lines, per [LogLimiter].
const (
	// LogBurst is how many lines a guest may log at once.
	LogBurst = 20
	// LogPerSecond is how many lines a guest may log per second after a
	// burst.
	LogPerSecond = 5
)

// LogLimiter is a token bucket over one guest's log lines: [LogBurst] lines
// at once, then [LogPerSecond] per second. Its zero value is a full bucket,
// and it is safe for concurrent use.
type LogLimiter struct {
	mu      sync.Mutex
	tokens  float64
	last    time.Time
	dropped int
}

// Allow reports whether a line may be logged at now, and, when it may, how
// many lines were refused since the last one that was allowed. A caller
// that has no use for the count ignores it.
func (l *LogLimiter) Allow(now time.Time) (ok bool, dropped int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last.IsZero() {
		l.tokens = LogBurst
	} else {
		l.tokens = min(LogBurst, l.tokens+now.Sub(l.last).Seconds()*LogPerSecond)
	}
	l.last = now
	if l.tokens < 1 {
		l.dropped++
		return false, 0
	}
	l.tokens--
	d := l.dropped
	l.dropped = 0
	return true, d
}
