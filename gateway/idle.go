package gateway

// When a 2025-11-25 session is idle.
//
// A legacy session ends after session_timeout without a request (POST) in
// flight. go-sdk can keep that time, but only for the requests it serves,
// and the gateway answers most tools/call requests itself (fastcall.go):
// a client that only calls tools would see its session end under it. So
// the gateway keeps the time for every request of a session, whichever
// path serves it, and go-sdk keeps none. As go-sdk did, a GET stream does
// not count: a client that only listens still times out.

import (
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startIdleLocked arms the idle timer of s, a session just opened.
func (r *held) startIdleLocked(s *slot) {
	s.idle = time.AfterFunc(r.timeout(), func() { r.expired(s) })
}

// expired ends the session of s when it is still open and idle: a request
// that began as the timer fired has stopped it, and re-arms it when done.
func (r *held) expired(s *slot) {
	r.mu.Lock()
	idle := s.state == slotOpen && s.busy == 0
	ss := s.ss
	r.mu.Unlock()
	if idle {
		r.expire(ss)
	}
}

// busy marks a request of principal's session id in flight, and returns
// the function that marks it done; the session's idle time starts again
// when it has none. A session that is not principal's is left alone
// (go-sdk refuses the request).
func (r *held) busy(id, principal string) (done func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.byID[id]
	if s == nil || s.caller.Name != principal || s.idle == nil {
		return func() {}
	}
	s.busy++
	s.idle.Stop()
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if s.busy--; s.busy == 0 && s.state == slotOpen {
			s.idle.Reset(r.timeout())
		}
	}
}

// logging records that the client of session id set a log level: from
// then on its calls may carry log messages, which only go-sdk can put on
// the call's stream.
func (r *held) logging(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.byID[id]; s != nil {
		s.logging = true
	}
}

// session returns principal's open session id on endpoint e, and whether
// its client set a log level; nil when there is none.
func (r *held) session(id, principal string, e *endpoint) (ss *mcp.ServerSession, logging bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.byID[id]
	if s == nil || s.state != slotOpen || s.caller.Name != principal || s.ep != e {
		return nil, false
	}
	return s.ss, s.logging
}
