package cluster

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
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

// The headers of a hop between replicas. A client's are removed before
// anything reads the request.
const (
	// HeaderHop names the replica that forwarded the request.
	HeaderHop = "Mcphost-Hop"
	// HeaderHopAuth proves it: hex HMAC-SHA256 of HeaderHop's value under
	// a key derived from the shared secret.
	HeaderHopAuth = "Mcphost-Hop-Auth"
	// headerSession is the legacy Streamable HTTP session header.
	headerSession = "Mcp-Session-Id"
)

func hopProof(key []byte, id string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("mcphost hop v1\x00" + id))
	return hex.EncodeToString(m.Sum(nil))
}

// Handler returns next behind the node's front: the hop headers of the
// request are checked and removed; then, for a request that stateless does
// not claim (a 2025-11-25 one) and that carries a Mcp-Session-Id, a
// session of this replica goes to next and one of another replica is
// forwarded to it (GET streams, POST streams and DELETE alike). A
// malformed session id, an owner that is unknown or gone, and a hop that
// reached a replica that is not the owner are answered 404, as for a
// session that ended (the client then starts a new one). A hop header
// that does not verify is 403. A single node returns next as it is.
func (n *Node) Handler(next http.Handler, stateless func(*http.Request) bool) http.Handler {
	if !n.Clustered() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		from, proof := r.Header.Get(HeaderHop), r.Header.Get(HeaderHopAuth)
		hop := from != "" || proof != ""
		if hop {
			if !ValidID(from) || !hmac.Equal([]byte(proof), []byte(hopProof(n.hopKey, from))) {
				n.log.Warn("cluster: refused a request with a hop header that does not verify (a client's, or a replica with another secret)", "remote", r.RemoteAddr)
				writeError(w, http.StatusForbidden, "forged_hop", "the "+HeaderHop+" header is for mcphost replicas only")
				return
			}
			r.Header.Del(HeaderHop)
			r.Header.Del(HeaderHopAuth)
			r = r.WithContext(context.WithValue(r.Context(), hopFromKey{}, from))
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
			n.log.Warn("cluster: a forwarded request is for another replica's session; not forwarding it again", "from", from, "owner", owner)
			sessionGone(w, "session owner is not this replica")
			return
		}
		// The owner's row is used however late its last heartbeat: a
		// replica that could not write its heartbeat (the database was
		// down for a few seconds) still serves its sessions, and taking
		// it for gone would end them. A refused connection says it is
		// gone (below); one that answers and no longer has the session
		// says so itself.
		rep, ok, err := n.lookupRow(r.Context(), owner, false)
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
		// event and had to resume).
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
			rep, ok, err := n.lookupRow(r.Context(), owner, true)
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
	t := &forwardTarget{url: target, owner: owner}
	n.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), targetKey{}, t)))
	return !t.refused
}

type hopFromKey struct{}

// FromReplica returns the replica that sent r, when r came through a
// node's [Node.Handler] with hop headers that verified: a request another
// replica made (a forwarded one, or one of its own such as a singleton
// server's relay). A client's request has none.
func FromReplica(r *http.Request) (id string, ok bool) {
	id, ok = r.Context().Value(hopFromKey{}).(string)
	return id, ok
}

// SignHop sets on h the hop headers that prove to the other replicas'
// [Node.Handler] that a request comes from this one. A node without a
// secret sets nothing.
func (n *Node) SignHop(h http.Header) {
	if n.hopProof == "" {
		return
	}
	h.Set(HeaderHop, n.opts.ID)
	h.Set(HeaderHopAuth, n.hopProof)
}

// maxForwardBody bounds a forwarded request's body, which is held in
// memory: above the gateway's own limit, so the owner answers an oversized
// body itself.
const maxForwardBody = 8 << 20

type targetKey struct{}

type forwardTarget struct {
	url     *url.URL
	owner   string
	refused bool // set by the proxy's ErrorHandler: nothing listens at url
}

// newProxy is the reverse proxy to owners: streaming (FlushInterval -1),
// dialing bounded by DialTimeout, the request's path and query kept, the
// hop headers set, everything else (Authorization included) passed as it
// came.
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
			pr.Out.Header.Set(HeaderHop, n.opts.ID)
			pr.Out.Header.Set(HeaderHopAuth, n.hopProof)
		},
		Transport:     tr,
		FlushInterval: -1,
		ErrorLog:      slog.NewLogLogger(n.log.Handler(), slog.LevelDebug),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			t := r.Context().Value(targetKey{}).(*forwardTarget)
			switch {
			case r.Context().Err() != nil:
				return // the client went away
			case errors.Is(err, syscall.ECONNREFUSED):
				// Nothing listens at the owner's address: its process,
				// and the session with it, are gone, unless it now runs
				// elsewhere (the handler decides, and answers).
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
