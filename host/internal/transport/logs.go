package transport

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"
)

// LogNameMax bounds the level and logger name of a server's log message as
// logged (the data gets StderrLineMax).
const LogNameMax = 128

// LogLimiter rate-limits what one server puts into mcphost's log from one
// source (its stderr, its notifications/message): at most StderrLogBurst
// records per stderrLogWindow. What it suppresses is counted and reported
// as one record when the window ends, or at flush. An upstream.Conn owns one
// limiter per source for its whole life, so a server cannot renew its
// budget by crashing and reconnecting, and a count is never lost with a
// session. Its methods are safe for concurrent use.
type LogLimiter struct {
	logger *slog.Logger
	report string // the suppressed report's message
	key    string // the suppressed report's count attribute

	mu         sync.Mutex
	windowEnd  time.Time
	logged     int
	suppressed int
	timer      *time.Timer // reports the suppressed count when the window ends
}

func NewLogLimiter(logger *slog.Logger, report, key string) *LogLimiter {
	return &LogLimiter{logger: logger, report: report, key: key}
}

// Allow reports whether one more record may be logged now. A false answer
// is counted; the first one of a window arms the report at its end.
func (l *LogLimiter) Allow() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if now.After(l.windowEnd) {
		l.reportLocked()
		l.windowEnd = now.Add(stderrLogWindow)
		l.logged = 0
	}
	if l.logged < StderrLogBurst {
		l.logged++
		return true
	}
	l.suppressed++
	if l.timer == nil {
		l.timer = time.AfterFunc(time.Until(l.windowEnd), l.Flush)
	}
	return false
}

// Flush reports the records suppressed so far, if any. The supervisor calls
// it when it returns, so a flood just before a stop is still counted.
func (l *LogLimiter) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reportLocked()
}

// reportLocked logs and resets the suppressed count; l.mu is held.
func (l *LogLimiter) reportLocked() {
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	if l.suppressed > 0 {
		l.logger.Warn(l.report, l.key, l.suppressed)
		l.suppressed = 0
	}
}

// CutText returns s when it has at most limit bytes, else its first limit
// bytes (backed off to a UTF-8 boundary) and a marker saying how many bytes
// were cut: "… [10484736 bytes cut]".
func CutText(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	n := limit
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%s… [%d bytes cut]", s[:n], len(s)-n)
}

// RenderLogData renders the data of a log message for one log line: a
// string as it is, anything else as compact JSON.
func RenderLogData(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("(data not JSON: %v)", err)
	}
	return string(b)
}
