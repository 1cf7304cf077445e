package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/cluster"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Path prefixes of the endpoints.
const (
	PathAggregate   = "/mcp"
	pathServers     = "/mcp/servers/"
	pathEndpoints   = "/mcp/endpoints/"
	modernVersion   = "2026-07-28"
	callerExtraKey  = "mcphost.caller"
	maxBodyBytes    = 4 << 20
	tokenInfoExpiry = 24 * time.Hour
)

// Options configure a Gateway.
type Options struct {
	Logger  *slog.Logger // nil discards
	Version string       // mcphost's version, in serverInfo
	// Cluster is the daemon's replica (nil: a single node, as is a node
	// without a directory). When it is clustered, legacy sessions get ids
	// that name this replica and requests for another replica's session
	// are forwarded to it (cluster.Node.Handler); 2026-07-28 requests
	// never are.
	Cluster *cluster.Node
	// SealKey, when set, seals the requestState the gateway hands its
	// clients instead of host.GatewaySealKey: every replica must use the
	// same one (derived from the cluster's shared secret), so that a
	// client's next round opens on whichever replica it lands.
	SealKey []byte
}

// Gateway serves the host's servers over MCP. It mirrors the host's
// catalogs into its endpoints on every change, until Close.
type Gateway struct {
	h    *host.Host
	opts Options
	log  *slog.Logger

	mu        sync.Mutex
	endpoints map[string]*endpoint // by path
	closed    bool
	closedCh  chan struct{} // closed by Close

	front http.Handler // serve behind the cluster's front, for authenticated requests

	sessions clientSessions
	// held is what callers hold open: requests in flight and legacy
	// sessions, capped per principal and ended when a reload revokes
	// their credential (held.go).
	held held
	// handlers are the handlers in flight of each legacy session, ended
	// when it ends (leave.go).
	handlers handlers
	// relays are the legacy client sessions whose end closes their
	// per-client upstream sessions (relay.go).
	relays sync.Map // relay key → struct{}
	seal   sealer   // the requestState of input_required answers
	// marks are, per client session, how far its Apps' model contexts
	// have been handed on (appcontext.go).
	marks contextMarks
	// events keeps the recent SSE events of every endpoint's legacy
	// sessions for resumption (go-sdk bounds it, 10 MiB by default).
	events *mcp.MemoryEventStore

	stopWatch, stopUpdates func()
	done                   chan struct{}

	// Client streams (stream.go): how long a write may stall, and what
	// was dropped or ended for it.
	stall            time.Duration
	dropped, stalled atomic.Uint64
	noDeadline       sync.Once // logged that deadlines are not supported
}

// New returns a gateway for h and starts mirroring its catalogs.
func New(h *host.Host, opts Options) *Gateway {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	g := &Gateway{h: h, opts: opts, log: opts.Logger.With("component", "gateway"),
		endpoints: map[string]*endpoint{}, done: make(chan struct{}), closedCh: make(chan struct{}), events: mcp.NewMemoryEventStore(nil),
		stall: writeStall}
	g.sessions.h = h
	g.held.timeout = func() time.Duration { return sessionTimeout(h.GatewayConfig()) }
	g.held.expire = func(ss *mcp.ServerSession) {
		g.log.Debug("gateway: a session ended: idle for session_timeout", "session_id", clip(ss.ID(), 100))
		go func() { _ = g.closeSession(ss) }() // Close waits for its handlers
	}
	g.front = g.opts.Cluster.Handler(http.HandlerFunc(g.serve), stateless)
	key := h.GatewaySealKey()
	if len(opts.SealKey) > 0 {
		key = opts.SealKey
	}
	seal, err := newSealer(key)
	if err != nil {
		panic(err) // a SHA-256 sum is always a valid AES-256 key
	}
	g.seal = seal
	changes, stop := h.WatchChanges()
	stopLogs := h.WatchLogs(g.logMessage)
	g.stopWatch = func() { stop(); stopLogs() }
	g.stopUpdates = h.WatchResourceUpdates(g.resourceUpdated)
	g.sync()
	go g.closeWhenStopping()
	go func() {
		// Until Close: stopping the watch does not close changes, so the
		// loop must also hear closedCh (it left a goroutine behind per
		// closed gateway before).
		defer close(g.done)
		for {
			select {
			case <-changes:
				if !g.sync() {
					return
				}
			case <-g.closedCh:
				return
			}
		}
	}()
	return g
}

// Close stops mirroring and ends every legacy MCP session.
func (g *Gateway) Close() {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return
	}
	g.closed = true
	close(g.closedCh)
	eps := g.endpoints
	g.endpoints = map[string]*endpoint{}
	g.mu.Unlock()
	g.stopWatch()
	g.stopUpdates()
	for _, e := range eps {
		e.close()
	}
	<-g.done // the mirroring goroutine has returned
}

// logMessage passes a server's log message that no call owns to every
// endpoint serving it.
func (g *Gateway) logMessage(server, principal string, p *mcp.LoggingMessageParams) {
	for _, e := range g.serving(server) {
		e.logMessage(server, principal, p)
	}
}

// serving returns the endpoints that front server now.
func (g *Gateway) serving(server string) []*endpoint {
	g.mu.Lock()
	defer g.mu.Unlock()
	var eps []*endpoint
	for _, e := range g.endpoints {
		if e.serves(server) {
			eps = append(eps, e)
		}
	}
	return eps
}

// sync brings the endpoints in line with the host's config and catalogs:
// it adds and removes endpoints and diffs each one's mirrored catalog. It
// reports false once the gateway is closed.
func (g *Gateway) sync() bool {
	cfg := g.h.GatewayConfig()
	want := map[string]host.GatewayEndpoint{}
	if cfg.Enabled {
		want[PathAggregate] = host.GatewayEndpoint{Prefix: true}
		for _, st := range g.h.Servers() {
			if cfg.Serves(st.Name) {
				want[pathServers+st.Name] = host.GatewayEndpoint{Servers: []string{st.Name}}
			}
		}
		for _, ep := range cfg.Endpoints {
			want[pathEndpoints+ep.Name] = host.GatewayEndpoint{Servers: ep.Servers, Prefix: true}
		}
	}
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return false
	}
	var gone []*endpoint
	for path, e := range g.endpoints {
		if sel, ok := want[path]; !ok || !slices.Equal(sel.Servers, e.sel.Servers) {
			delete(g.endpoints, path)
			gone = append(gone, e)
		}
	}
	for path, sel := range want {
		if _, ok := g.endpoints[path]; !ok {
			g.endpoints[path] = newEndpoint(g, path, sel)
		}
	}
	eps := make([]*endpoint, 0, len(g.endpoints))
	for _, e := range g.endpoints {
		eps = append(eps, e)
	}
	g.mu.Unlock()
	// Before mirroring: a revoked caller's streams end before they can
	// hear of what the reload changed.
	g.revoke()
	for _, e := range gone {
		e.close()
	}
	for _, e := range eps {
		e.mirror()
	}
	return true
}

// resourceUpdated passes a server's resources/updated on to every
// endpoint that serves the server, under the endpoint's URI; go-sdk sends
// it to the sessions subscribed to that URI. It does not wait for them:
// the server's session delivers the notification.
func (g *Gateway) resourceUpdated(ctx context.Context, server, uri string) {
	eps := g.serving(server)
	if len(eps) == 0 {
		return
	}
	ctx = context.WithoutCancel(ctx)
	go func() {
		for _, e := range eps {
			_ = e.server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: e.codec.uri(server, uri)})
		}
	}()
}

// Mount returns a handler that sends /mcp and the paths under it to g and
// everything else to rest (the JSON API and the WebShell).
func Mount(g *Gateway, rest http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == PathAggregate || strings.HasPrefix(r.URL.Path, PathAggregate+"/") {
			g.ServeHTTP(w, r)
			return
		}
		rest.ServeHTTP(w, r)
	})
}

// ServeHTTP serves /mcp and the paths under it. The caller is
// authenticated first, from the request's headers alone: a request whose
// bearer token does not verify is answered 401 here, whichever replica
// holds the session it names, before its body is read and before the
// cluster's front could forward it (with the client's Authorization
// header) to another replica. Only then may the front forward it; the
// owner authenticates it again. An endpoint whose one server the caller
// may not see is one that does not exist, so neither an anonymous caller
// nor a principal can tell a hidden server from a missing one
// (research/redteam.md F16).
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if refuseDraining(g.h, w, r) {
		return
	}
	token, caller, ok := g.authenticate(r)
	if !ok {
		unauthorized(w, r)
		return
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	if g.endpointFor(r.Context(), path, caller) == nil {
		g.notFound(w, path)
		return
	}
	mode, err := discoveryOverride(r)
	if err != nil {
		g.log.Debug("gateway: a request's ?discovery= is refused", "principal", caller.Name, "endpoint", path)
		refuseDiscovery(w, err)
		return
	}
	ctx := context.WithValue(r.Context(), callerKey{}, caller)
	ctx = context.WithValue(ctx, holderKey{}, newHolder(token, caller))
	if mode != "" {
		ctx = context.WithValue(ctx, discoveryKey{}, mode)
	}
	g.front.ServeHTTP(w, r.WithContext(ctx))
}

// holderKey carries the holder of an authenticated request (held.go) from
// ServeHTTP to serve.
type holderKey struct{}

// serve serves an authenticated request that is this replica's.
func (g *Gateway) serve(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	caller, _ := r.Context().Value(callerKey{}).(host.Caller)
	who, _ := r.Context().Value(holderKey{}).(holder)
	e := g.endpointFor(r.Context(), path, caller)
	if e == nil { // removed by a reload since ServeHTTP looked
		g.notFound(w, path)
		return
	}
	var sl *slot
	if opensSession(r) {
		if sl = g.admitSession(w, who); sl == nil {
			return
		}
		defer g.held.unclaimed(sl)
	}
	// go-sdk refuses a body over maxBodyBytes too, but only a reader made
	// on the connection's own ResponseWriter can tell net/http to close
	// the connection after the refusal rather than read the rest.
	r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
	sid := r.Header.Get("Mcp-Session-Id")
	if sid != "" && r.Method == http.MethodPost && !stateless(r) {
		// The session's idle time stops while it has a request (idle.go).
		defer g.held.busy(sid, caller.Name)()
	}
	if sl == nil {
		if fc := e.takeCall(r, caller); fc != nil {
			g.serveCall(w, r, e, fc, caller, who)
			return
		}
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if sl != nil {
		// go-sdk connects the session with this context: the middleware
		// finds the slot there when initialize succeeds (held.go).
		ctx = context.WithValue(ctx, slotKey{}, sl)
	}
	// go-sdk writes to the stream, never to the connection (stream.go).
	s := g.newStream(w, cancel, "principal", caller.Name, "endpoint", e.path, "session_id", clip(sid, 100))
	if sl != nil {
		// The new session's id goes out with the initialize answer, once
		// the session is kept, never before (stream.go).
		s.hold()
	}
	q := g.held.hold(who, s.stop, sl)
	defer g.held.drop(q)
	if !g.h.StillValid(caller) {
		// A reload revoked the token since it was checked, and its sweep
		// may have run before the request was held.
		unauthorized(w, r)
		return
	}
	defer s.finish()
	g.leaving(r, caller.Name)
	e.handler.ServeHTTP(s, r.WithContext(ctx))
	if r.Method == http.MethodDelete && sid != "" && !stateless(r) && s.statusCode() == http.StatusNoContent {
		// go-sdk closed the session: its slot is free now, not when the
		// session's watcher hears of it.
		g.held.deleted(caller.Name, sid)
	}
}

// endpointFor returns the endpoint at path as c may see it: nil when there
// is none, or when it serves one server c may not see (by its `list`
// rules, decided for c with no client: the request has not named one yet).
func (g *Gateway) endpointFor(ctx context.Context, path string, c host.Caller) *endpoint {
	g.mu.Lock()
	e := g.endpoints[path]
	g.mu.Unlock()
	if e == nil || e.sel.Prefix {
		return e
	}
	if !slices.Contains(e.visibleServers(ctx, c), e.sel.Servers[0]) {
		return nil
	}
	return e
}

// WriteMetrics writes the gateway's metrics in the Prometheus text format,
// for the daemon's /metrics after the host's:
//
//	mcphost_gateway_notifications_dropped_total  counter: notifications dropped because a client's stream was full (it did not read)
//	mcphost_gateway_streams_stalled_total        counter: client streams ended because a write to them made no progress in time
func (g *Gateway) WriteMetrics(w io.Writer) error {
	_, err := fmt.Fprintf(w, `# HELP mcphost_gateway_notifications_dropped_total Notifications dropped because a gateway client's stream was full (the client did not read it).
# TYPE mcphost_gateway_notifications_dropped_total counter
mcphost_gateway_notifications_dropped_total %d
# HELP mcphost_gateway_streams_stalled_total Gateway client streams ended because a write to them made no progress within %s.
# TYPE mcphost_gateway_streams_stalled_total counter
mcphost_gateway_streams_stalled_total %d
`, g.dropped.Load(), g.stall, g.stalled.Load())
	return err
}

// notFound answers a path that is no endpoint, naming the ones there are.
func (g *Gateway) notFound(w http.ResponseWriter, path string) {
	msg := "no MCP endpoint at " + path
	if !g.h.GatewayConfig().Enabled {
		msg = "the gateway is off (gateway { enabled = false } in the config)"
	}
	writeJSONError(w, http.StatusNotFound, "not_found", msg)
}

type callerKey struct{}

// authenticate returns a request's bearer token and the caller it
// stands for.
func (g *Gateway) authenticate(r *http.Request) (string, host.Caller, bool) {
	fields := strings.Fields(r.Header.Get("Authorization"))
	if len(fields) != 2 || !strings.EqualFold(fields[0], "bearer") {
		return "", host.Caller{}, false
	}
	c, ok := g.h.GatewayAuthenticate(fields[1])
	return fields[1], c, ok
}

// unauthorized answers 401 with the challenge RFC 6750 asks for.
func unauthorized(w http.ResponseWriter, r *http.Request) {
	challenge := `Bearer realm="mcphost"`
	msg := "this MCP endpoint needs a bearer token: a principal's token from the config, or the daemon's owner token (see `mcphost gateway config`)"
	if r.Header.Get("Authorization") != "" {
		challenge += `, error="invalid_token", error_description="the token is not valid here"`
		msg = "the bearer token is not valid for this MCP endpoint (a principal's token or the owner token is; a WebShell credential is not)"
	}
	w.Header().Set("WWW-Authenticate", challenge)
	writeJSONError(w, http.StatusUnauthorized, "unauthorized", msg)
}

func writeJSONError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

// tokenVerifier hands go-sdk the caller the gateway authenticated, so that
// each request carries it (RequestExtra.TokenInfo) and a legacy session is
// bound to its principal (go-sdk refuses another user's session id), with
// the context of the HTTP request that carried it (leave.go).
func tokenVerifier(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
	c, ok := ctx.Value(callerKey{}).(host.Caller)
	if !ok {
		return nil, auth.ErrInvalidToken
	}
	extra := map[string]any{callerExtraKey: c, requestExtraKey: ctx}
	if mode, ok := ctx.Value(discoveryKey{}).(string); ok {
		extra[discoveryExtraKey] = mode // the URL's ?discovery=
	}
	return &auth.TokenInfo{UserID: c.Name, Expiration: time.Now().Add(tokenInfoExpiry), Extra: extra}, nil
}

// callerOf returns the authenticated caller of a request: the one its
// bearer token stands for over HTTP, or the one ServeStdio serves.
func callerOf(ctx context.Context, req mcp.Request) (host.Caller, bool) {
	if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
		c, ok := extra.TokenInfo.Extra[callerExtraKey].(host.Caller)
		return c, ok
	}
	c, ok := ctx.Value(stdioCallerKey{}).(host.Caller)
	return c, ok
}

type stdioCallerKey struct{}

// ServeStdio serves the endpoint at path (PathAggregate, or
// /mcp/servers/NAME, /mcp/endpoints/NAME) on t, to caller, until the client
// goes away or ctx ends: the in-process form of the stdio bridge, for
// when no daemon runs.
func (g *Gateway) ServeStdio(ctx context.Context, path string, caller host.Caller, t mcp.Transport) error {
	caller.Origin = host.OriginGateway
	e := g.endpointFor(ctx, strings.TrimSuffix(path, "/"), caller)
	if e == nil {
		return fmt.Errorf("no MCP endpoint at %s", path)
	}
	return e.server.Run(context.WithValue(ctx, stdioCallerKey{}, caller), t)
}

// eraDispatch sends 2026-07-28 (and later) requests to the stateless
// handler and everything else to the stateful one. Dates compare as
// strings.
func eraDispatch(modern, legacy http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if stateless(r) {
			modern.ServeHTTP(w, r)
			return
		}
		legacy.ServeHTTP(w, r)
	})
}

// stateless reports whether a request is 2026-07-28 (or later) traffic,
// which no session holds: any replica serves it.
func stateless(r *http.Request) bool {
	return r.Header.Get("Mcp-Protocol-Version") >= modernVersion
}

// sessionTimeout is the config's, or the default.
func sessionTimeout(cfg config.Gateway) time.Duration {
	if cfg.SessionTimeout > 0 {
		return cfg.SessionTimeout
	}
	return config.DefaultGatewaySessionTimeout
}
