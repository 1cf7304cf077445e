package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"syscall"
	"time"
)

// Handler returns next behind the node's front, for a door that has
// authenticated its client already (the gateway puts it behind its bearer
// check: nothing is forwarded, and no body read, for a request that does
// not authenticate). The hop headers of the request are checked and
// removed (admitHop); then, for a request that stateless does not claim (a
// 2025-11-25 one) and that carries a Mcp-Session-Id, a session of this
// replica goes to next and one of another replica is forwarded to it (GET
// streams, POST streams and DELETE alike), with a proof of its own. A
// malformed session id, an owner that is unknown, gone or whose heartbeat
// is over [StaleAfter] beats late, and a hop that reached a replica that
// is not the owner are answered 404, as for a session that ended (the
// client then starts a new session). A hop header that does not verify,
// is outside [HopWindow] or was used before is 403. A single node returns
// next as it is.
func (n *Node) Handler(next http.Handler, stateless func(*http.Request) bool) http.Handler {
	if !n.Clustered() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, hop, ok := n.admitHop(w, r)
		if !ok {
			return
		}
		sid := r.Header.Get(headerSession)
		if sid == "" || stateless(r) {
			next.ServeHTTP(w, r)
			return
		}
		owner, ok := OwnerOf(sid)
		switch {
		case !ok:
			sessionGone(w, "malformed session id")
			return
		case owner == n.opts.ID:
			next.ServeHTTP(w, r)
			return
		case hop:
			// The forwarding replica's directory named this one; ours
			// does not: never forward a second time.
			from, _ := FromReplica(r)
			n.log.Warn("cluster: a forwarded request is for another replica's session; not forwarding it again", "from", from, "owner", owner)
			sessionGone(w, "session owner is not this replica")
			return
		}
		// An owner whose heartbeat is late by a few beats still serves
		// its sessions (it could not write its row while the database was
		// away); one late by more than StaleAfter beats is gone, and its
		// address may be someone else's by now.
		rep, ok, err := n.lookupLive(r.Context(), owner, false)
		if err != nil {
			n.log.Warn("cluster: cannot look up a session's owner", "owner", owner, "err", err)
			writeError(w, http.StatusServiceUnavailable, "directory_unavailable", "mcphost cannot read its directory of replicas; retry")
			return
		}
		if !ok {
			sessionGone(w, "session owner "+owner+" is gone")
			return
		}
		addr := rep.Addr
		target, err := url.Parse(addr)
		if err != nil {
			n.log.Warn("cluster: a replica advertises an address that is no URL", "owner", owner)
			sessionGone(w, "session owner "+owner+" has no address")
			return
		}
		// The body is read whole before it is forwarded. Streamed, it
		// races the answer: once the proxy has flushed the first event of
		// an SSE answer, net/http's server fails further reads of the
		// incoming body, and the outgoing transport takes that for a
		// failed request and closes the connection under the stream it is
		// still copying (the client saw a stream cut after its priming
		// event and had to resume). The proof signs it too.
		var body []byte
		if r.Body != nil && r.Body != http.NoBody {
			body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, maxForwardBody))
			if err != nil {
				writeError(w, http.StatusRequestEntityTooLarge, "body_too_large", "the request body is over the limit a replica forwards")
				return
			}
		}
		if !n.forward(w, r, body, target, owner) {
			// Nothing listens at the address this replica knew. The owner
			// may have been started again elsewhere (a new port or pod
			// address, the same id) since the directory was last read:
			// read it again, and try once more if the address moved.
			rep, ok, err := n.lookupLive(r.Context(), owner, true)
			if err == nil && ok && rep.Addr != addr {
				if moved, perr := url.Parse(rep.Addr); perr == nil && n.forward(w, r, body, moved, owner) {
					return
				}
			}
			n.log.Info("cluster: a session's owner refused the connection; answering 404 so the client starts a new session", "owner", owner)
			sessionGone(w, "session owner "+owner+" is gone")
		}
	})
}

// forward passes r, with body, to the owner at target. It returns false,
// having written nothing, when the connection was refused (nothing listens
// there); every other outcome it answers itself.
func (n *Node) forward(w http.ResponseWriter, r *http.Request, body []byte, target *url.URL, owner string) bool {
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
	}
	t := &forwardTarget{url: target, owner: owner, body: body}
	n.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), targetKey{}, t)))
	return !t.refused
}

// maxForwardBody bounds a forwarded request's body, which is held in
// memory: above the gateway's own limit, so the owner answers an oversized
// body itself.
const maxForwardBody = 8 << 20

type targetKey struct{}

type forwardTarget struct {
	url     *url.URL
	owner   string
	body    []byte // the request's, read whole (nil: none)
	refused bool   // set by the proxy's ErrorHandler: nothing listens at url
}

// newProxy is the reverse proxy to owners: streaming (FlushInterval -1),
// dialing bounded by DialTimeout, the request's path and query kept, the
// hop headers set (a proof for this one request, to the owner), everything
// else (Authorization included) passed as it came.
func (n *Node) newProxy() http.Handler {
	tr := &http.Transport{
		Proxy:                 nil, // replicas talk directly
		DialContext:           (&net.Dialer{Timeout: n.opts.DialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   n.opts.DialTimeout,
		ExpectContinueTimeout: time.Second,
	}
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			t := pr.In.Context().Value(targetKey{}).(*forwardTarget)
			pr.SetURL(t.url)
			pr.SetXForwarded()
			n.signHop(pr.Out.Header, t.owner, pr.Out.Method, pr.Out.URL.RequestURI(), "", t.body)
		},
		Transport:     tr,
		FlushInterval: -1,
		ErrorLog:      slog.NewLogLogger(n.log.Handler(), slog.LevelDebug),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			t := r.Context().Value(targetKey{}).(*forwardTarget)
			switch {
			case r.Context().Err() != nil:
				return // the client went away
			case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EPIPE):
				// Nothing listens at the owner's address: its process,
				// and the session with it, are gone, unless it now runs
				// elsewhere (the handler decides, and answers). A broken
				// pipe is the same news on a kept-alive connection the
				// old process closed: the request was never delivered.
				t.refused = true
			default:
				n.log.Warn("cluster: forwarding to a session's owner failed", "owner", t.owner, "err", err)
				writeError(w, http.StatusBadGateway, "owner_unreachable", "mcphost replica "+t.owner+", which holds this session, did not answer; retry, or start a new session")
			}
		},
	}
}

// sessionGone answers 404 as go-sdk does for a session it does not know
// (the 2025-11-25 spec: the client must start a new session).
func sessionGone(w http.ResponseWriter, why string) {
	http.Error(w, "session not found ("+why+")", http.StatusNotFound)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": msg}})
}
