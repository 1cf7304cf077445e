package gateway

// What ends when a client leaves.
//
// A call that waits for an approval must not outlive the client that made
// it: once its client has gone, approving it would run a call nobody
// hears the answer of (a newcomer saw exactly that: the call ran after
// its client had cancelled and left). A 2026-07-28 request is its HTTP
// request (go-sdk ends the handler with it, PropagateRequestCancellation),
// and notifications/cancelled ends a call in both eras. A 2025-11-25
// call is a message of a session, though, and go-sdk keeps its handler
// running past the two other ways such a client leaves:
//
//   - It ends its session (DELETE), or the session is closed (a reload
//     revoked its credential, its endpoint went away, the gateway
//     closes). go-sdk's Close waits for the handlers in flight, which
//     would keep a call waiting for its approval (and the DELETE itself)
//     until the approval expired. So the gateway cancels the session's
//     handlers first: handlers records them per session.
//   - Its HTTP request drops, the client killed without a word. The
//     session lives on (until session_timeout), and the call may too: the
//     client may resume its stream (Last-Event-ID) and hear the answer.
//     But a wait for a person is not worth keeping for a client that may
//     never come back: the call's approval ends with the request that
//     carried it (host.WithClient), and the call then answers "not
//     approved" on the resumed stream, if anyone resumes it.

import (
	"context"
	"net/http"
	"sync"

	"github.com/mcphost/mcphost/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// requestExtraKey carries, in a request's auth.TokenInfo, the context of
// the HTTP request that carried the message (see tokenVerifier): it ends
// when the request does.
const requestExtraKey = "mcphost.request"

// handlers are the handlers in flight of each 2025-11-25 session, by
// session id.
type handlers struct {
	mu sync.Mutex
	m  map[string]map[*handler]struct{}
}

type handler struct{ cancel context.CancelFunc }

// add records a handler of session id until the returned function is
// called; cancel ends it.
func (hs *handlers) add(id string, cancel context.CancelFunc) (remove func()) {
	h := &handler{cancel: cancel}
	hs.mu.Lock()
	if hs.m == nil {
		hs.m = map[string]map[*handler]struct{}{}
	}
	if hs.m[id] == nil {
		hs.m[id] = map[*handler]struct{}{}
	}
	hs.m[id][h] = struct{}{}
	hs.mu.Unlock()
	return func() {
		hs.mu.Lock()
		defer hs.mu.Unlock()
		delete(hs.m[id], h)
		if len(hs.m[id]) == 0 {
			delete(hs.m, id)
		}
	}
}

// end cancels the handlers in flight of session id; it returns how many.
func (hs *handlers) end(id string) int {
	hs.mu.Lock()
	var cancels []context.CancelFunc
	for h := range hs.m[id] {
		cancels = append(cancels, h.cancel)
	}
	hs.mu.Unlock()
	for _, cancel := range cancels {
		cancel()
	}
	return len(cancels)
}

// track gives a handler of a 2025-11-25 session a context that ends when
// its session ends (closeSession, a DELETE), and whose approvals end when
// the HTTP request that carried it does. done releases it.
func (g *Gateway) track(ctx context.Context, req mcp.Request) (_ context.Context, done func()) {
	if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
		if carrier, ok := extra.TokenInfo.Extra[requestExtraKey].(context.Context); ok {
			ctx = host.WithClient(ctx, carrier)
		}
	}
	ss, _ := req.GetSession().(*mcp.ServerSession)
	if ss == nil || ss.ID() == "" {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	remove := g.handlers.add(ss.ID(), cancel)
	return ctx, func() {
		remove()
		cancel()
	}
}

// closeSession closes a 2025-11-25 session, its handlers in flight
// cancelled first (go-sdk's Close waits for them).
func (g *Gateway) closeSession(ss *mcp.ServerSession) error {
	g.handlers.end(ss.ID())
	return ss.Close()
}

// leaving cancels the handlers of the session a DELETE ends, when the
// session is the caller's: go-sdk then closes it without waiting on them.
func (g *Gateway) leaving(r *http.Request, principal string) {
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Method != http.MethodDelete || sid == "" || stateless(r) || g.held.owner(sid) != principal {
		return
	}
	if n := g.handlers.end(sid); n > 0 {
		g.log.Debug("gateway: a session ended with requests in flight; they are cancelled", "principal", principal, "session_id", clip(sid, 100), "requests", n)
	}
}
