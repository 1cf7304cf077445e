package gateway

// What callers hold open on the gateway.
//
// A 2025-11-25 session costs the daemon memory and goroutines for as long as
// it lives (session_timeout idle, 30 minutes by default), and opening one
// took nothing but a token: one principal opened about 630 a second
// (research/redteam.md F6). So a request that may open one (a legacy POST
// without Mcp-Session-Id: go-sdk opens a session for it and keeps the
// session when it answered initialize) is counted against the principal's
// rate_limit (host.Host.GatewayAdmit) and takes a slot first: at most
// max_sessions_per_principal for its principal and max_sessions in all,
// 429 beyond. The slot rides in the request's context, which go-sdk makes
// the session's own (it connects a session with the context of the
// request that opened it, and its handlers' contexts keep that one's
// values), so the middleware claims the slot for the session when
// initialize succeeds. The slot is freed when that session ends (DELETE,
// session_timeout, Close, revocation), or when the request returns without
// having opened one. A session whose request returned before it was
// claimed is closed, as go-sdk closes one whose request returned before it
// handled initialize; the answer of that request is held until it returns
// (stream.go), so no client learns the id of a session closed so.
//
// A reload can revoke a credential (its token rotated or removed, its
// groups or admin rights changed) while what it opened is still open: a GET
// stream went on receiving notifications after its token was rotated
// (F12). So every request in flight and every session is held under the
// credential that opened it, and after each change of the host (sync) the
// ones whose caller the host no longer accepts (host.Host.StillValid) end:
// requests are cancelled (which ends a GET or listen stream and a call),
// sessions closed (the client gets 404 and starts a new one with its new
// token), as the API's event streams are.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionRetryAfter is the Retry-After of a session refused by a cap:
// sessions end when their clients end them, so any figure is a guess; the
// API's event streams answer the same.
const sessionRetryAfter = 5 * time.Second

// A holder is the credential a request came with and the caller it
// authenticated as. Its key tells holders apart for revocation: the same
// token authenticated under two configs can be two callers (other groups).
type holder struct {
	caller host.Caller
	key    string
}

func newHolder(token string, c host.Caller) holder {
	d := sha256.Sum256([]byte(token))
	n := 2*len(d) + len(c.Name) + 8 + len(c.Groups)
	for _, g := range c.Groups {
		n += len(g)
	}
	b := make([]byte, 0, n)
	b = hex.AppendEncode(b, d[:])
	b = append(b, 0)
	b = append(b, c.Name...)
	b = append(b, 0)
	b = strconv.AppendBool(b, c.Admin)
	b = append(b, 0)
	for i, g := range c.Groups {
		if i > 0 {
			b = append(b, 1)
		}
		b = append(b, g...)
	}
	return holder{caller: c, key: string(b)}
}

// held is everything callers hold open: their requests in flight and
// their legacy sessions, with the session slots of each principal.
type held struct {
	// timeout is session_timeout now; expire ends a session idle that
	// long (idle.go). Both are set once, by New.
	timeout func() time.Duration
	expire  func(*mcp.ServerSession)

	mu       sync.Mutex
	requests map[*heldRequest]struct{}
	sessions map[*slot]struct{} // slots whose session is open
	byID     map[string]*slot   // the same, by session id
	slots    map[string]int     // by principal: slots reserved or open
	total    int
}

// A heldRequest is one request in flight.
type heldRequest struct {
	holder
	cancel func() // ends the request
	slot   *slot  // the slot it reserved for the session it may open, or nil
}

// A slot is one principal's place for one legacy session: reserved by the
// request that may open it, then open with the session, then released.
type slot struct {
	holder
	state slotState // under held.mu
	ss    *mcp.ServerSession
	// Once open (all under held.mu): the endpoint the session is on,
	// whether its client set a log level, its requests in flight and the
	// timer that ends it when none has been for session_timeout (idle.go).
	ep      *endpoint
	logging bool
	busy    int
	idle    *time.Timer
}

type slotState int

const (
	slotReserved slotState = iota
	slotOpen
	slotReleased
)

type slotKey struct{}

// sessionLimitError is a session refused by a cap on open sessions.
type sessionLimitError struct {
	limit        int
	perPrincipal bool
}

func (e *sessionLimitError) Error() string {
	if e.perPrincipal {
		return fmt.Sprintf("this principal already has %d MCP sessions open, its limit (the gateway's max_sessions_per_principal): end one with DELETE, or let one time out, before opening another", e.limit)
	}
	return fmt.Sprintf("the gateway already holds %d MCP sessions open, its limit (max_sessions); try again later", e.limit)
}

// sessionCaps are the config's caps on open legacy sessions, or the
// defaults.
func sessionCaps(cfg config.Gateway) (perPrincipal, total int) {
	perPrincipal, total = cfg.MaxSessionsPerPrincipal, cfg.MaxSessions
	if perPrincipal <= 0 {
		perPrincipal = config.DefaultGatewayMaxSessionsPerPrincipal
	}
	if total <= 0 {
		total = config.DefaultGatewayMaxSessions
	}
	return perPrincipal, total
}

// hold records a request of h in flight until drop; cancel ends it.
func (r *held) hold(h holder, cancel func(), s *slot) *heldRequest {
	q := &heldRequest{holder: h, cancel: cancel, slot: s}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.requests == nil {
		r.requests = map[*heldRequest]struct{}{}
	}
	r.requests[q] = struct{}{}
	return q
}

func (r *held) drop(q *heldRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.requests, q)
}

// reserve takes a session slot for h, or returns a *sessionLimitError.
func (r *held) reserve(h holder, perPrincipal, total int) (*slot, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.slots[h.caller.Name] >= perPrincipal:
		return nil, &sessionLimitError{limit: perPrincipal, perPrincipal: true}
	case r.total >= total:
		return nil, &sessionLimitError{limit: total}
	}
	if r.slots == nil {
		r.slots = map[string]int{}
	}
	r.slots[h.caller.Name]++
	r.total++
	return &slot{holder: h}, nil
}

// claim gives s to the session ss its request opened. It reports whether
// the caller is to watch ss (and release s when ss ends), and whether ss
// must be closed instead: s was released already, because its request
// returned first (the client went away before its answer) or its
// credential was revoked.
func (r *held) claim(s *slot, ss *mcp.ServerSession, e *endpoint) (watch, close bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch s.state {
	case slotReserved:
		s.state, s.ss, s.ep = slotOpen, ss, e
		r.startIdleLocked(s)
		if r.sessions == nil {
			r.sessions, r.byID = map[*slot]struct{}{}, map[string]*slot{}
		}
		r.sessions[s] = struct{}{}
		r.byID[ss.ID()] = s
		return true, false
	case slotOpen:
		return false, s.ss != ss // initialize again on its own session: nothing to do
	default:
		return false, true
	}
}

// release frees s (again: a no-op).
func (r *held) release(s *slot) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.releaseLocked(s)
}

func (r *held) releaseLocked(s *slot) {
	if s.state == slotReleased {
		return
	}
	s.state = slotReleased
	if s.idle != nil {
		s.idle.Stop()
	}
	if s.ss != nil {
		delete(r.sessions, s)
		if r.byID[s.ss.ID()] == s {
			delete(r.byID, s.ss.ID())
		}
	}
	if r.slots[s.caller.Name]--; r.slots[s.caller.Name] <= 0 {
		delete(r.slots, s.caller.Name)
	}
	r.total--
}

// deleted frees the slot of principal's session id, which a DELETE ended.
func (r *held) deleted(principal, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.byID[id]; s != nil && s.caller.Name == principal {
		r.releaseLocked(s)
	}
}

// owner returns the principal whose open session id is, or "".
func (r *held) owner(id string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.byID[id]; s != nil {
		return s.caller.Name
	}
	return ""
}

// unclaimed frees s when its request returns without having opened a
// session with it.
func (r *held) unclaimed(s *slot) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.state == slotReserved {
		r.releaseLocked(s)
	}
}

// revoke ends what holders that are no longer valid hold: it returns the
// cancel functions of their requests and their sessions, to be called and
// closed outside the lock, and frees their slots. valid is asked once per
// holder key.
func (r *held) revoke(valid func(host.Caller) bool) (cancels []func(), sessions []*mcp.ServerSession) {
	r.mu.Lock()
	defer r.mu.Unlock()
	known := map[string]bool{}
	ok := func(h holder) bool {
		v, seen := known[h.key]
		if !seen {
			v = valid(h.caller)
			known[h.key] = v
		}
		return v
	}
	for q := range r.requests {
		if ok(q.holder) {
			continue
		}
		delete(r.requests, q)
		cancels = append(cancels, q.cancel)
		if q.slot != nil && q.slot.state == slotReserved {
			r.releaseLocked(q.slot) // its session, if it opens one, is closed at once
		}
	}
	for s := range r.sessions {
		if !ok(s.holder) {
			sessions = append(sessions, s.ss)
			r.releaseLocked(s)
		}
	}
	return cancels, sessions
}

// opensSession reports whether r may open a legacy session: go-sdk opens
// one for a POST that names none (and keeps it when it answered
// initialize).
func opensSession(r *http.Request) bool {
	return r.Method == http.MethodPost && !stateless(r) && r.Header.Get("Mcp-Session-Id") == ""
}

// admitSession counts a request that may open a session against its
// principal's rate limit and takes a slot for the session, or answers
// 429 and returns nil.
func (g *Gateway) admitSession(w http.ResponseWriter, h holder) *slot {
	if err := g.h.GatewayAdmit(h.caller); err != nil {
		retry := time.Second
		var rl *host.RateLimitError
		if errors.As(err, &rl) {
			retry = rl.RetryAfter
		}
		tooManyRequests(w, retry, err.Error())
		return nil
	}
	per, total := sessionCaps(g.h.GatewayConfig())
	s, err := g.held.reserve(h, per, total)
	if err != nil {
		g.log.Debug("gateway: a session was refused: too many open", "principal", h.caller.Name, "err", err)
		tooManyRequests(w, sessionRetryAfter, err.Error())
		return nil
	}
	return s
}

// sessionOpened gives the slot of the request that opened ss to ss, once
// its initialize has been answered (the middleware calls it); a session
// opened without a slot (on stdio) has none to take.
func (g *Gateway) sessionOpened(ctx context.Context, e *endpoint, ss *mcp.ServerSession) {
	s, ok := ctx.Value(slotKey{}).(*slot)
	if !ok || ss == nil {
		return
	}
	watch, closeIt := g.held.claim(s, ss, e)
	switch {
	case watch:
		go func() {
			_ = ss.Wait()
			g.held.release(s)
		}()
	case closeIt:
		// Not from here: Close waits for the handlers in flight, this
		// one included.
		go func() { _ = g.closeSession(ss) }()
	}
}

// revoke ends the requests and sessions of callers the host no longer
// accepts, after a reload revoked their credential.
func (g *Gateway) revoke() {
	cancels, sessions := g.held.revoke(g.h.StillValid)
	for _, cancel := range cancels {
		cancel()
	}
	if len(cancels)+len(sessions) == 0 {
		return
	}
	g.log.Info("gateway: requests and sessions ended: their credential no longer authenticates", "requests", len(cancels), "sessions", len(sessions))
	go func() {
		for _, ss := range sessions {
			_ = g.closeSession(ss)
		}
	}()
}

// tooManyRequests answers 429 with Retry-After (whole seconds, at least
// one) and a JSON-RPC error a client can show: there is no request id to
// answer yet, so it is null.
func tooManyRequests(w http.ResponseWriter, retryAfter time.Duration, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(max(retryAfter, time.Second).Seconds()))))
	w.WriteHeader(http.StatusTooManyRequests)
	_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": codeServerError, "message": msg}})
}
