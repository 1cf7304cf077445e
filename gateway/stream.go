package gateway

// Writing to clients.
//
// go-sdk writes every message for a client straight into that client's
// HTTP response, on whichever goroutine sends it: a server's progress and
// log messages on the goroutine that reads the server's notifications
// (go-sdk's client handles them one at a time, and every principal's calls
// share it), list_changed on a timer of go-sdk's, resources/updated from
// the host's watcher. The daemon's HTTP server has no write timeout (SSE
// streams live for hours), so a client that stopped reading blocked that
// write for good once the kernel's buffers were full, and everything
// behind it waited: every principal's progress, log messages, list_changed
// and resources/updated of that server, while go-sdk's queue of them grew
// without bound (research/redteam.md F1).
//
// So go-sdk never gets the connection's ResponseWriter: each request is
// served on a stream of the gateway's own. Its Write only queues the bytes
// (go-sdk writes one whole message, or one SSE event, per Write) and a
// goroutine of the stream writes them to the connection, so nothing that
// sends a message ever waits for a client. The queue is bounded
// (streamQueueBytes): when it is full a notification is dropped and counted
// (Gateway.WriteMetrics), and the stream logs once that it drops; a
// response or a request is still queued, since the client's own requests
// bound how many of those there are. Each write to the connection gets a
// deadline (the gateway's stall, per writeChunk bytes): a client that takes
// nothing in that time has its stream ended (the request's context is
// cancelled, which ends go-sdk's handler, and net/http closes the
// connection). A client that keeps reading keeps its stream however long
// it lives, which a server-wide WriteTimeout would not allow.
//
// A 2025-11-25 session's events are kept in the gateway's event store
// before they reach the stream, so a legacy client whose stream was ended,
// or that missed dropped notifications, resumes them with Last-Event-ID.
//
// The answer to a request that may open a 2025-11-25 session is held
// whole until go-sdk's handler has returned (hold). go-sdk writes the new
// session's id (a header) and a priming event before the session has
// handled initialize, and closes the session if the POST returns before
// it has (the gateway, for its part, closes one whose request returned
// before it claimed its slot, held.go). A client that closed the stream
// once it had the id, or lost it, went on with the id of a session being
// closed, and got 404; load widens the window (issue 30 row 20). Held, the
// id reaches the client only with the initialize answer, once the session
// is kept; a client whose stream ends before that never learns it.

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"
)

const (
	// streamQueueBytes bounds what waits to be written to one client
	// stream; past it notifications are dropped.
	streamQueueBytes = 1 << 20
	// writeChunk is how much of a message is written under one deadline,
	// so that the deadline measures a stall, not the size of a result.
	writeChunk = 32 << 10
)

// writeStall is how long a write of one chunk to a client may make no
// progress before its stream is ended. Tests shorten it (export_test.go);
// a Gateway reads it once, in New.
var writeStall = 30 * time.Second

// errStreamEnded is what a write to an ended stream returns.
var errStreamEnded = errors.New("gateway: the client's stream has ended")

// A stream is the ResponseWriter go-sdk writes one request's answer to: a
// bounded queue in front of the connection's ResponseWriter, which only
// the stream's writer goroutine touches once the status is set.
type stream struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	g      *Gateway
	who    []any  // the request's principal, endpoint and session, for the log
	cancel func() // ends the request (go-sdk's handler returns)

	mu   sync.Mutex
	cond sync.Cond // signalled when the writer goroutine stops
	q    [][]byte
	size int // bytes in q
	// running is set while a writer goroutine drains q; it starts on
	// demand and ends when q is empty, so an idle stream holds none.
	running   bool
	committed bool        // the status is set on w
	status    int         // the status set, once committed
	spare     http.Header // what Header returns after that (net/http ignores later changes)
	ended     bool        // a write failed (the client is gone or stalled), or stop
	finished  bool        // the handler returned
	held      bool        // nothing goes to the connection until the handler returns (hold)
	dropping  bool        // logged that it drops
	// noDeadline is set when w cannot take write deadlines (a wrapper
	// without Unwrap): the queue still bounds memory, but a stalled write
	// holds its goroutine until the client goes away. Writer goroutine only.
	noDeadline bool
}

// newStream returns a stream over w; cancel ends its request, and who
// (slog key-value pairs) names it in the log.
func (g *Gateway) newStream(w http.ResponseWriter, cancel func(), who ...any) *stream {
	s := &stream{w: w, rc: http.NewResponseController(w), g: g, who: who, cancel: cancel}
	s.cond.L = &s.mu
	return s
}

func (s *stream) log() *slog.Logger { return s.g.log.With(s.who...) }

// Header returns the header map of the response until the status is set.
func (s *stream) Header() http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.committed {
		if s.spare == nil {
			s.spare = http.Header{}
		}
		return s.spare
	}
	return s.w.Header()
}

// WriteHeader sets the status. It does no I/O (net/http sends the header
// with the first flush), so it runs on the caller's goroutine, before the
// writer goroutine can start. Informational statuses are not relayed.
func (s *stream) WriteHeader(code int) {
	if code < 200 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commitLocked(code)
}

func (s *stream) commitLocked(code int) {
	if s.committed || s.ended || s.finished {
		return
	}
	s.committed, s.status = true, code
	s.w.WriteHeader(code)
}

// statusCode returns the status the answer was given (0 before one was).
func (s *stream) statusCode() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// Write queues b (a whole message or SSE event: go-sdk writes one per
// call) for the writer goroutine; when the queue is full and b is a
// notification, b is dropped and counted instead.
func (s *stream) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended || s.finished {
		return 0, errStreamEnded
	}
	s.commitLocked(http.StatusOK)
	if len(s.q) > 0 && s.size+len(b) > streamQueueBytes && isNotification(b) {
		s.g.dropped.Add(1)
		if !s.dropping {
			s.dropping = true
			s.log().Warn("gateway: a client does not read its stream; notifications to it are dropped until it catches up",
				"queued_bytes", s.size)
		}
		return len(b), nil
	}
	s.pushLocked(bytes.Clone(b))
	return len(b), nil
}

// Flush asks for what is queued to be flushed; the writer flushes whenever
// it has emptied the queue, so only an empty queue needs a marker (an
// empty write: the header, or nothing new).
func (s *stream) Flush() { _ = s.FlushError() }

// FlushError is what http.ResponseController.Flush calls.
func (s *stream) FlushError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended || s.finished {
		return errStreamEnded
	}
	s.commitLocked(http.StatusOK)
	if len(s.q) == 0 {
		s.pushLocked(nil)
	}
	return nil
}

func (s *stream) pushLocked(b []byte) {
	s.q = append(s.q, b)
	s.size += len(b)
	s.startLocked()
}

// startLocked starts the writer goroutine when there is something to
// write and none runs.
func (s *stream) startLocked() {
	if !s.running && !s.held && !s.ended && len(s.q) > 0 {
		s.running = true
		go s.drain()
	}
}

// hold keeps everything go-sdk writes from the connection until the
// handler returns (finish): the status, headers and queued bytes then go
// out together. It is for the answer of a request that may open a session
// (see the top of this file); a handler that streams for long has nothing
// reach its client until it ends.
func (s *stream) hold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = true
}

// drain writes the queue to the connection until it is empty or the
// stream has ended.
func (s *stream) drain() {
	for {
		s.mu.Lock()
		if len(s.q) == 0 || s.ended {
			s.running = false
			s.cond.Broadcast()
			s.mu.Unlock()
			return
		}
		b := s.q[0]
		s.q[0] = nil
		s.q = s.q[1:]
		s.size -= len(b)
		last := len(s.q) == 0
		s.mu.Unlock()
		if err := s.write(b, last); err != nil {
			s.end(err)
		}
	}
}

// write writes b, each writeChunk of it under a deadline, and flushes
// when it is the last of the queue.
func (s *stream) write(b []byte, flush bool) error {
	for len(b) > 0 {
		n := min(len(b), writeChunk)
		s.deadline()
		if _, err := s.w.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	if flush {
		s.deadline()
		if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
	}
	if !s.noDeadline {
		// No deadline between writes: an idle stream is not a stalled one,
		// and net/http's own last write after the handler must not fail.
		_ = s.rc.SetWriteDeadline(time.Time{})
	}
	return nil
}

func (s *stream) deadline() {
	if s.noDeadline {
		return
	}
	if err := s.rc.SetWriteDeadline(time.Now().Add(s.g.stall)); err != nil {
		s.noDeadline = true
		s.g.noDeadline.Do(func() {
			s.g.log.Warn("gateway: the HTTP server's ResponseWriter takes no write deadline; a client that stops reading holds its stream until it goes away", "err", err)
		})
	}
}

// end ends the stream after a failed write: what is queued is discarded,
// later writes fail, and the request's context is cancelled so that
// go-sdk's handler returns.
func (s *stream) end(err error) {
	s.mu.Lock()
	s.ended = true
	s.q, s.size = nil, 0
	s.mu.Unlock()
	if errors.Is(err, os.ErrDeadlineExceeded) {
		s.g.stalled.Add(1)
		s.log().Warn("gateway: a client stopped reading its stream; the stream is ended", "duration", s.g.stall)
	} else {
		s.log().Debug("gateway: writing to a client failed; the stream is ended", "err", err)
	}
	s.cancel()
}

// stop ends the stream from outside (its caller's credential was
// revoked): what is queued is discarded, nothing more is written, and the
// request's context is cancelled.
func (s *stream) stop() {
	s.mu.Lock()
	s.ended = true
	s.q, s.size = nil, 0
	s.mu.Unlock()
	s.cancel()
}

// finish is called when the handler has returned: it lets a held answer
// go, and waits until the queue is written (each write bounded by the
// stall) or the stream ended. No write is taken after it.
func (s *stream) finish() {
	s.mu.Lock()
	s.finished = true
	s.held = false
	s.startLocked()
	for s.running {
		s.cond.Wait()
	}
	s.mu.Unlock()
}

// isNotification reports whether b, one write of go-sdk's (an SSE event,
// or a JSON body), carries a JSON-RPC notification: a method and no id.
// Anything else (a response, a request, a comment, a close event) is kept.
func isNotification(b []byte) bool {
	i := bytes.Index(b, []byte("data: "))
	if i < 0 || (i > 0 && b[i-1] != '\n') {
		return false // not an SSE event: a JSON answer
	}
	data := b[i+len("data: "):]
	if j := bytes.IndexByte(data, '\n'); j >= 0 {
		data = data[:j]
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	return json.Unmarshal(data, &m) == nil && m.Method != "" && m.ID == nil
}

// Interface guards: go-sdk flushes through http.ResponseController, which
// finds FlushError.
var (
	_ http.ResponseWriter             = (*stream)(nil)
	_ http.Flusher                    = (*stream)(nil)
	_ interface{ FlushError() error } = (*stream)(nil)
)
