package upstream

// The supervisor loop of one server (run, in conn.go): connect, serve,
// and after a failure wait, longer after each failure in a row.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"regexp"
	"time"

	"github.com/mcphost/mcphost/host/config"
)

// stableAfter is how long a session must stay up before a later failure
// starts the backoff from the beginning again.
const stableAfter = time.Minute

// next is what the supervisor does after an attempt or a wait.
type next int

const (
	nextAgain   next = iota // connect again at once
	nextBackoff             // it failed: wait before the next attempt
	nextStop                // the server is stopped (its context ended)
)

// supervision is the state of one server's supervisor loop: how many
// failed attempts in a row, and the log of its failures.
type supervision struct {
	c        *Conn
	attempt  int
	failures failureLog
}

// once makes one attempt: connect, then serve until the session ends.
func (s *supervision) once(ctx context.Context) next {
	c := s.c
	// A restart asked for before this attempt is this attempt.
	select {
	case <-c.restart:
	default:
	}
	c.SetState(StateConnecting, func(st *ServerStatus) { st.NextAttempt = time.Time{} })
	// A server failing the same way again logs its stderr at debug level:
	// the failure's line says it all (failureLog).
	c.quietStderr.Store(s.failures.repeating())
	start := time.Now()
	c.forgetAuthFailure()
	sess, cmd, stderr, err := c.connect(ctx)
	if err = c.authCause(err); err != nil {
		return s.failedToStart(ctx, err, start)
	}
	upSince := time.Now()
	c.Settle()
	return s.ended(ctx, c.Serve(ctx, sess, cmd, stderr), upSince)
}

// failedToStart decides what follows a connection that failed: a sign-in
// to wait for is no failure (no backoff, no restart count).
func (s *supervision) failedToStart(ctx context.Context, err error, start time.Time) next {
	c := s.c
	if ctx.Err() != nil {
		return nextStop
	}
	if state, ok := authState(err); ok {
		c.logger.Info("server waits for a sign-in", "state", state, "err", err)
		c.SetState(state, func(st *ServerStatus) { st.LastError = err.Error(); st.NextAttempt = time.Time{} })
		c.Settle()
		return s.waitAuth(ctx)
	}
	s.failures.failed("server failed to start", err, "duration", time.Since(start).Round(time.Millisecond))
	c.SetState(StateFailed, func(st *ServerStatus) { st.LastError = err.Error() })
	c.Settle()
	return nextBackoff
}

// ended decides what follows a session that ended with err, after it
// had been up since upSince.
func (s *supervision) ended(ctx context.Context, err error, upSince time.Time) next {
	c := s.c
	switch {
	case ctx.Err() != nil:
		return nextStop
	case errors.Is(err, errPlacementMoved):
		// Not a failure: connect again at once, where it runs now.
		s.reset()
		return nextAgain
	case errors.Is(err, errRestartAsked):
		c.logger.Info("server restarted on request")
		s.reset()
		c.countRestart()
		return nextAgain
	}
	if state, ok := authState(err); ok {
		c.logger.Info("server session ended for a sign-in", "state", state, "err", err)
		c.SetState(state, func(st *ServerStatus) { st.LastError = err.Error(); st.NextAttempt = time.Time{} })
		return s.waitAuth(ctx)
	}
	s.failures.failed("server stopped unexpectedly", err)
	c.SetState(StateFailed, func(st *ServerStatus) { st.LastError = err.Error() })
	if time.Since(upSince) >= stableAfter {
		s.reset()
	}
	return nextBackoff
}

// waitAuth waits for the credential to change.
func (s *supervision) waitAuth(ctx context.Context) next {
	if !s.c.waitAuth(ctx) {
		return nextStop
	}
	return nextAgain
}

// reset forgets the failures in a row.
func (s *supervision) reset() {
	s.attempt = 0
	s.failures.reset()
}

// backoff waits before the next attempt, growing with the failures in a
// row; past max_restarts it gives up until a restart is asked for.
func (s *supervision) backoff(ctx context.Context) next {
	c := s.c
	if c.Cfg.MaxRestarts > 0 && s.attempt >= c.Cfg.MaxRestarts {
		return s.gaveUp(ctx)
	}
	delay := backoff(s.attempt, c.deps.BackoffMin, c.backoffMax())
	s.attempt++
	c.mu.Lock()
	c.status.NextAttempt = time.Now().Add(delay)
	c.mu.Unlock()
	if c.deps.OnStatus != nil && !c.retired.Load() {
		c.deps.OnStatus(c.Snapshot()) // the card shows when the next try is
	}
	c.logger.Info("server restart scheduled", "in", delay.Round(time.Millisecond), "attempt", s.attempt)
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nextStop
	case <-t.C:
	case <-c.restart:
		c.logger.Info("server restarted on request before its backoff ended")
		s.attempt = 0
	case <-c.placeChanged():
		// A singleton's holder changed: try where it runs now.
		s.attempt = 0
	}
	c.countRestart()
	return nextAgain
}

// gaveUp keeps a server that failed max_restarts times failed until a
// restart is asked for.
func (s *supervision) gaveUp(ctx context.Context) next {
	c := s.c
	c.logger.Error("server failed too often; it stays failed until the daemon restarts or its block changes", "restarts", s.attempt, "max_restarts", c.Cfg.MaxRestarts)
	c.SetState(StateFailed, func(st *ServerStatus) {
		st.NextAttempt = time.Time{}
		st.LastError = fmt.Sprintf("%s (gave up after %d restarts: max_restarts)", st.LastError, s.attempt)
	})
	select {
	case <-ctx.Done():
		return nextStop
	case <-c.restart:
		c.logger.Info("server restarted on request after giving up")
		s.reset()
		return nextAgain
	}
}

// countRestart counts one restart in the server's status.
func (c *Conn) countRestart() {
	c.mu.Lock()
	c.status.Restarts++
	c.mu.Unlock()
}

// backoff returns the delay before retry number attempt (0-based): min
// doubled per attempt, capped at max, with ±20% jitter so that many servers
// failing together do not retry in lockstep.
// backoffMax is the longest wait between restarts: the server block's
// restart_backoff_max, capped by Options.BackoffMax when that is set.
func (c *Conn) backoffMax() time.Duration {
	d := c.Cfg.RestartBackoffMax
	if d <= 0 {
		d = config.DefaultRestartBackoffMax
	}
	if c.deps.BackoffMax > 0 {
		d = min(d, c.deps.BackoffMax)
	}
	return max(d, c.deps.BackoffMin)
}

// failureLog logs a server's failures without repeating itself: the first
// failures in a row as they come, then one line for each doubling of the
// count ("failed again", with how many times), or at once when the cause
// changes; flush reports the count not yet logged. Two errors have the
// same cause when they differ in numbers only (a timestamped log path, a
// process id, a port).
type failureLog struct {
	logger  *slog.Logger
	last    string // the cause (causeOf) of the last failure
	count   int    // failures in a row with the same cause
	logged  int    // count when last logged
	pending []any
}

func (f *failureLog) failed(msg string, err error, attrs ...any) {
	text := err.Error()
	if cause := causeOf(text); cause != f.last {
		f.flush()
		f.last, f.count, f.logged = cause, 0, 0
	}
	f.count++
	if f.count <= 3 || f.count&(f.count-1) == 0 {
		args := append([]any{"err", text}, attrs...)
		if f.count > 1 {
			msg = "server failed again"
			args = append(args, "times", f.count)
		}
		f.logger.Warn(msg, args...)
		f.logged, f.pending = f.count, nil
		return
	}
	f.pending = append([]any{"err", text, "times", f.count}, attrs...)
}

// flush logs the failures counted since the last line.
func (f *failureLog) flush() {
	if f.count > f.logged && f.pending != nil {
		f.logger.Warn("server failed again", f.pending...)
	}
	f.logged, f.pending = f.count, nil
}

// repeating reports whether the last failures were the same one three
// times or more.
func (f *failureLog) repeating() bool { return f.count >= 3 }

// digits are the parts of an error that change from one failure to the
// next with the same cause.
var digits = regexp.MustCompile(`[0-9]+`)

// causeOf is err's text with its numbers blanked out.
func causeOf(text string) string { return digits.ReplaceAllString(text, "#") }

func (f *failureLog) reset() {
	f.flush()
	f.last, f.count, f.logged = "", 0, 0
}

func backoff(attempt int, minDelay, maxDelay time.Duration) time.Duration {
	d := minDelay
	for i := 0; i < attempt && d < maxDelay; i++ {
		d *= 2
	}
	d = min(d, maxDelay)
	jitter := 0.8 + 0.4*rand.Float64()
	return time.Duration(float64(d) * jitter)
}
