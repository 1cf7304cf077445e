package upstream

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host/internal/transport"

	"github.com/mcphost/mcphost/apps"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/negotiate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Per-client upstream sessions (`session_mode = "per_client"`).
//
// A 2025-11-25 server asks its client for input with requests of its own
// (elicitation/create, sampling/createMessage) on the session the call came
// on, and nothing in such a request says which call it belongs to. On the
// one session a server shares among all its callers, the host cannot tell
// whose call it is. A server block with session_mode = "per_client" gives
// every MCP client of the gateway on a 2025-11-25 session upstream sessions
// of its own (a process of its own for a stdio server) for its tool calls:
// a request the server makes there can only be for that client, and goes to
// it, on the stream of its running call. The shared session still serves
// the catalog, listings, resources and every other door.
//
// The sessions are capped per server (max_client_sessions), and so are
// those of one principal's clients (max_client_sessions_per_principal,
// default a quarter of the cap), so that one principal cannot hold them
// all. A client that needs a new session past a cap gets the least
// recently used idle one's place (its principal's own, past its share);
// when every one it could take has a call running, its call waits for one
// to go idle or end, at most clientSessionWait, and then fails with an
// error that names the setting. It never takes the shared session instead:
// there, what the server asks would not reach the client (research/
// redteam.md F10). A client's sessions end with its gateway session
// (Host.ReleaseClient), and all of them end with their server's shared
// session (a failure, a reload that replaces the server, shutdown).

// ClientRelay is a gateway client that can be asked what a server asks
// during the client's calls, given with each of its calls
// (SessionCall.Relay). Elicit and CreateMessage are nil when the client did
// not declare the capability; the upstream session then does not advertise
// it either.
type ClientRelay struct {
	// Key names the client connection; the gateway uses its MCP session.
	Key string
	// Elicitation and Sampling are the client's declared capabilities.
	Elicitation *mcp.ElicitationCapabilities
	Sampling    *mcp.SamplingCapabilities
	// Elicit and CreateMessage ask the client. They get the context of
	// the client's running call (so that go-sdk sends the request on that
	// call's stream), cancelled also when the server gives up.
	Elicit        func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error)
	CreateMessage func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
}

// errNoClientRelay is the answer to a request a per-client session gets
// when none of its client's calls is running (a server asking out of turn).
var errNoClientRelay = errors.New("mcphost: no call of this client is running, so there is nobody to ask")

// clientSessionWait bounds how long a call waits for a per-client session
// when every one it could take is busy (a variable for tests).
var clientSessionWait = 30 * time.Second

// clientPool holds one server's per-client upstream sessions.
type clientPool struct {
	mu     sync.Mutex
	m      map[string]*clientUpstream
	tick   uint64
	closed bool
	// freed is closed (and forgotten) when a session goes idle or away,
	// waking the calls that wait for room; nil while nobody waits.
	freed chan struct{}
	// waits counts the calls that found every session they could take
	// busy (logged once per doubling).
	waits int
}

// clientUpstream is one client's upstream session: opened once, shared by
// the client's concurrent calls.
type clientUpstream struct {
	key       string
	principal string        // whose client it is
	ready     chan struct{} // closed when the open has finished
	err       error         // the open's failure
	cs        *mcp.ClientSession
	cmd       *exec.Cmd

	// calls are the client's running calls on this session, oldest first;
	// a request of the server goes to the newest.
	calls []*clientCall
	used  uint64
	ended bool // the session ended on its own
	// asks cancel the questions being put to the client; they end when
	// the client has no call left running (nobody waits for the answer).
	asks map[*context.CancelFunc]struct{}
}

type clientCall struct {
	ctx   context.Context
	relay *ClientRelay
	call  *Call // the call's record, whose log messages these are
}

// count returns how many per-client sessions are open or opening.
func (p *clientPool) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.m)
}

// ClientSession returns the upstream session of relay's client for one
// call (inflight, a call of its principal, which it marks as made on a
// per-client session), opening it on the client's
// first call; release ends the call's use of it. It waits while every
// session the call could take is busy (joinClientUpstream), and fails
// when that lasts, when ctx ends, or when the session cannot be opened.
func (c *Conn) ClientSession(ctx context.Context, relay *ClientRelay, inflight *Call) (cs *mcp.ClientSession, release func(), err error) {
	p := &c.clients
	call := &clientCall{ctx: ctx, relay: relay, call: inflight}
	u, fresh, err := c.joinClientUpstream(ctx, relay.Key, inflight.Principal, call)
	if err != nil {
		return nil, nil, err
	}
	release = func() { p.leave(u, call) }
	if fresh {
		c.openClientSession(ctx, u)
	}
	select {
	case <-u.ready:
	case <-ctx.Done():
		release()
		return nil, nil, ctx.Err()
	}
	if u.err != nil {
		release()
		p.mu.Lock()
		if p.m[relay.Key] == u {
			delete(p.m, relay.Key) // the next call tries again
			p.freeLocked()
		}
		p.mu.Unlock()
		return nil, nil, u.err
	}
	if u.cs != nil {
		inflight.perClient.Store(true) // messages on the shared session are no longer its
	}
	return u.cs, release, nil
}

// joinClientUpstream adds call to the upstream session of key's client
// (of principal), making a fresh one (not yet opened) when the client has
// none or its session ended. Past max_client_sessions_per_principal the
// least recently used idle session of principal's clients is closed to
// make room, past max_client_sessions the least recently used idle one of
// anyone's; with none idle the call waits for one, at most
// clientSessionWait. It fails when that wait runs out, when ctx ends, and
// when the server's shared session ended.
func (c *Conn) joinClientUpstream(ctx context.Context, key, principal string, call *clientCall) (u *clientUpstream, fresh bool, err error) {
	p := &c.clients
	var timeout <-chan time.Time
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, false, fmt.Errorf("server %s: its session ended", c.Cfg.Name)
		}
		if p.m == nil {
			p.m = map[string]*clientUpstream{}
		}
		p.tick++
		u, ok := p.m[key]
		if ok && u.ended {
			delete(p.m, key)
			ok = false
		}
		if ok {
			u.calls = append(u.calls, call)
			u.used = p.tick
			p.mu.Unlock()
			return u, false, nil
		}
		evicted, full := p.roomLocked(principal, c.maxClientSessions(), c.maxClientSessionsPerPrincipal())
		if full == "" {
			if evicted != nil {
				delete(p.m, evicted.key)
			}
			u = &clientUpstream{key: key, principal: principal, ready: make(chan struct{}), calls: []*clientCall{call}, used: p.tick}
			p.m[key] = u
			p.mu.Unlock()
			if evicted != nil {
				c.logger.Info("closing the least recently used idle per-client upstream session to make room", "principal", principal,
					"max_client_sessions", c.maxClientSessions(), "max_client_sessions_per_principal", c.maxClientSessionsPerPrincipal())
				evicted.close()
			}
			return u, true, nil
		}
		if p.freed == nil {
			p.freed = make(chan struct{})
		}
		freed := p.freed
		var waits int
		if timeout == nil {
			p.waits++
			waits = p.waits
		}
		p.mu.Unlock()
		if timeout == nil {
			if waits&(waits-1) == 0 {
				c.logger.Warn("a call waits for a per-client upstream session: every one it could take has a call running", "principal", principal,
					"full", full, "max_client_sessions", c.maxClientSessions(), "max_client_sessions_per_principal", c.maxClientSessionsPerPrincipal(), "times", waits)
			}
			t := time.NewTimer(clientSessionWait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-freed:
		case <-timeout:
			return nil, false, c.busyError(principal, full)
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
}

// Why a client finds no room for a session of its own (roomLocked).
const (
	fullShare = "max_client_sessions_per_principal"
	fullCap   = "max_client_sessions"
)

// roomLocked finds room for a new session of principal's: nothing to do
// below both caps, else the least recently used idle session to close
// (principal's own, past its share). With none idle it returns the cap
// that is full (fullShare or fullCap).
func (p *clientPool) roomLocked(principal string, limit, share int) (evict *clientUpstream, full string) {
	mine := 0
	for _, u := range p.m {
		if u.principal == principal {
			mine++
		}
	}
	switch {
	case mine >= share:
		if evict = p.idleLocked(principal); evict == nil {
			return nil, fullShare
		}
	case len(p.m) >= limit:
		if evict = p.idleLocked(""); evict == nil {
			return nil, fullCap
		}
	}
	return evict, ""
}

// busyError is the failure of a call that waited clientSessionWait for a
// per-client session in vain.
func (c *Conn) busyError(principal, full string) error {
	why := fmt.Sprintf("all %d of its per-client upstream sessions (max_client_sessions) have a call running", c.maxClientSessions())
	if full == fullShare {
		why = fmt.Sprintf("the clients of principal %q hold %d per-client upstream sessions (max_client_sessions_per_principal), each with a call running", principal, c.maxClientSessionsPerPrincipal())
	}
	return fmt.Errorf("server %s (session_mode = %q): %s, and none was free within %s; the call did not run (end another call or client, or raise %s)",
		c.Cfg.Name, config.SessionPerClient, why, clientSessionWait, full)
}

// freeLocked wakes the calls that wait for room: a session went idle or
// away.
func (p *clientPool) freeLocked() {
	if p.freed != nil {
		close(p.freed)
		p.freed = nil
	}
}

// leave ends call's use of u. When it was the client's last running call,
// the questions still being put to the client are cancelled: nobody waits
// for their answers.
func (p *clientPool) leave(u *clientUpstream, call *clientCall) {
	p.mu.Lock()
	for i, x := range u.calls {
		if x == call {
			u.calls = append(u.calls[:i], u.calls[i+1:]...)
			break
		}
	}
	p.tick++
	u.used = p.tick
	var asks []*context.CancelFunc
	if len(u.calls) == 0 {
		for a := range u.asks {
			asks = append(asks, a)
		}
		clear(u.asks)
		p.freeLocked()
	}
	p.mu.Unlock()
	for _, cancel := range asks {
		(*cancel)()
	}
}

// maxClientSessions is the server's cap (a block built in code, not
// loaded, may leave it zero: the default then).
func (c *Conn) maxClientSessions() int {
	if c.Cfg.MaxClientSessions > 0 {
		return c.Cfg.MaxClientSessions
	}
	return config.DefaultMaxClientSessions
}

// maxClientSessionsPerPrincipal is the share of one principal's clients
// (a block built in code may leave it zero: the default share then), at
// most the cap.
func (c *Conn) maxClientSessionsPerPrincipal() int {
	share := c.Cfg.MaxClientSessionsPerPrincipal
	if share <= 0 {
		share = config.DefaultClientSessionsPerPrincipal(c.maxClientSessions())
	}
	return min(share, c.maxClientSessions())
}

// idleLocked returns the least recently used session with no running call
// that has finished opening, of principal's clients ("" anyone's), or nil.
func (p *clientPool) idleLocked(principal string) *clientUpstream {
	var lru *clientUpstream
	for _, u := range p.m {
		select {
		case <-u.ready:
		default:
			continue
		}
		if (principal == "" || u.principal == principal) && len(u.calls) == 0 && (lru == nil || u.used < lru.used) {
			lru = u
		}
	}
	return lru
}

// close ends the session and its process.
func (u *clientUpstream) close() {
	<-u.ready
	if u.cs != nil {
		_ = u.cs.Close()
	}
	transport.KillGroup(u.cmd)
}

// logOwner is whose a log message on u's session is: its client's newest
// running call's; with none running, nobody's (not even unowned: it is the
// client's, but there is no call to pass it on with).
func (p *clientPool) logOwner(u *clientUpstream) logOwner {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(u.calls); n > 0 {
		return logOwner{call: u.calls[n-1].call}
	}
	return logOwner{}
}

// bySession returns the open per-client session with the MCP session id
// id (a Streamable HTTP server's), or nil.
func (p *clientPool) bySession(id string) *clientUpstream {
	if id == "" {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, u := range p.m {
		select {
		case <-u.ready:
			if u.cs != nil && u.cs.ID() == id {
				return u
			}
		default:
		}
	}
	return nil
}

// sessions returns the open sessions.
func (p *clientPool) sessions() []*mcp.ClientSession {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*mcp.ClientSession
	for _, u := range p.m {
		select {
		case <-u.ready:
			if u.cs != nil && !u.ended {
				out = append(out, u.cs)
			}
		default:
		}
	}
	return out
}

// release closes the sessions of the client key.
func (p *clientPool) release(key string) {
	p.mu.Lock()
	u := p.m[key]
	delete(p.m, key)
	p.freeLocked()
	p.mu.Unlock()
	if u != nil {
		go u.close()
	}
}

// closeAll closes every session: the shared session ended (drain), and for
// good when the server stops (final).
func (p *clientPool) closeAll(final bool) {
	p.mu.Lock()
	p.closed = p.closed || final
	all := p.m
	p.m = nil
	p.freeLocked()
	p.mu.Unlock()
	for _, u := range all {
		u.close()
	}
}

// openClientSession connects u: the legacy initialize, pinned as the
// shared session's (negotiate's one connect path), advertising what the
// client can answer besides the Apps mcphost renders. It fetches no
// catalog: the shared session keeps that.
func (c *Conn) openClientSession(ctx context.Context, u *clientUpstream) {
	defer close(u.ready)
	client := mcp.NewClient(&mcp.Implementation{Name: "mcphost", Version: c.deps.Version}, c.clientOptions(u))
	dctx, cancel := context.WithTimeout(ctx, c.Cfg.DiscoveryTimeout)
	defer cancel()
	spec := negotiate.Spec{
		Name:             c.Cfg.Name,
		Mode:             negotiate.ModeLegacy,
		Transport:        c.Cfg.Transport,
		DiscoveryTimeout: c.Cfg.DiscoveryTimeout,
		Client:           func() *mcp.Client { return client },
		Logger:           c.logger,
		// What the server logs on this session is its client's.
		WrapTransport: func(t mcp.Transport) mcp.Transport {
			return c.wrapSession(t, func() logOwner { return c.clients.logOwner(u) })
		},
	}
	var last *exec.Cmd
	stderr := c.sessionTransport(&spec, &last)
	res, err := negotiate.Connect(dctx, spec)
	if err != nil {
		err = transport.ContextErr(dctx, ctx, err, "initialize", c.Cfg.DiscoveryTimeout)
		u.err = transport.WithStderr(fmt.Errorf("server %s: opening the client's own upstream session (session_mode = %q): %w", c.Cfg.Name, config.SessionPerClient, describeExit(err, last)), stderr)
		c.logger.Warn("opening a per-client upstream session failed", "err", u.err)
		return
	}
	u.cs, u.cmd = res.Session, res.Cmd
	// The log level the gateway's clients asked for (GatewaySetLogLevel)
	// holds on this session too.
	c.mu.Lock()
	level := c.logLevel
	c.mu.Unlock()
	if level != "" {
		if err := u.cs.SetLoggingLevel(dctx, &mcp.SetLoggingLevelParams{Level: level}); err != nil {
			c.logger.Warn("setting the log level of a per-client upstream session", "level", level, "err", err)
		}
	}
	c.logger.Debug("per-client upstream session open", "sessions", c.clients.count())
	go c.watchClientSession(u)
}

// watchClientSession forgets u when its session ends.
func (c *Conn) watchClientSession(u *clientUpstream) {
	p := &c.clients
	_ = u.cs.Wait()
	transport.KillGroup(u.cmd)
	p.mu.Lock()
	u.ended = true
	if p.m[u.key] == u {
		delete(p.m, u.key)
	}
	p.freeLocked()
	p.mu.Unlock()
}

// clientOptions are the options of u's client: the capabilities of the
// gateway client it is for (the elicitation and sampling it can answer,
// and mcphost's Apps), with handlers that put the server's requests to
// that client.
func (c *Conn) clientOptions(u *clientUpstream) *mcp.ClientOptions {
	p := &c.clients
	first := func() *ClientRelay {
		p.mu.Lock()
		defer p.mu.Unlock()
		return u.calls[0].relay
	}()
	caps := &mcp.ClientCapabilities{}
	apps.Advertise(caps)
	if first.Elicitation != nil && first.Elicit != nil {
		e := *first.Elicitation
		caps.Elicitation = &e
	}
	if first.Sampling != nil && first.CreateMessage != nil {
		s := *first.Sampling
		s.Tools = nil // the tools variant of sampling is not relayed
		caps.Sampling = &s
	}
	opts := &mcp.ClientOptions{
		Capabilities: caps,
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			c.deliverProgress(req.Params)
		},
		// Log messages are routed as they are read (serverlog.go).
	}
	ask := func(hctx context.Context) (*clientCall, context.Context, context.CancelFunc, error) {
		return c.askFor(u, hctx)
	}
	if caps.Elicitation != nil {
		opts.ElicitationHandler = func(hctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			call, ctx, done, err := ask(hctx)
			if err != nil {
				return nil, err
			}
			defer done()
			if call.relay.Elicit == nil {
				return nil, errors.New("mcphost: this client cannot answer elicitation")
			}
			return call.relay.Elicit(ctx, req.Params)
		}
	}
	if caps.Sampling != nil {
		opts.CreateMessageHandler = func(hctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			call, ctx, done, err := ask(hctx)
			if err != nil {
				return nil, err
			}
			defer done()
			if call.relay.CreateMessage == nil {
				return nil, errors.New("mcphost: this client cannot answer sampling")
			}
			return call.relay.CreateMessage(ctx, req.Params)
		}
	}
	return opts
}

// askFor picks the call a server's request goes with: the client's newest
// running one, whose context makes go-sdk send the request on that
// call's stream. The question outlives that call if the client has
// others running (it may be for one of them): it ends when the server
// gives up (hctx), when the client has no call left, or after the
// server's call_timeout.
func (c *Conn) askFor(u *clientUpstream, hctx context.Context) (*clientCall, context.Context, context.CancelFunc, error) {
	p := &c.clients
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(u.calls)
	if n == 0 {
		return nil, nil, nil, errNoClientRelay
	}
	call := u.calls[n-1]
	bound := c.Cfg.CallTimeout
	if bound <= 0 {
		bound = config.DefaultCallTimeout
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(call.ctx), bound)
	stop := context.AfterFunc(hctx, cancel)
	if u.asks == nil {
		u.asks = map[*context.CancelFunc]struct{}{}
	}
	key := &cancel
	u.asks[key] = struct{}{}
	return call, ctx, func() {
		stop()
		cancel()
		p.mu.Lock()
		delete(u.asks, key)
		p.mu.Unlock()
	}, nil
}

// PerClient says whether a call of req goes on a per-client session: a
// gateway client's call (it has a relay) to a server with session_mode =
// "per_client" whose session is a legacy one (a 2026-07-28 server asks for
// input inside the call's own answer, input_required, which needs no
// session of its own).
func (c *Conn) PerClient(relay *ClientRelay, cs *mcp.ClientSession) bool {
	if relay == nil || relay.Key == "" || c.Cfg.SessionMode != config.SessionPerClient {
		return false
	}
	ir := cs.InitializeResult()
	return ir != nil && ir.ProtocolVersion < modernProtocolVersion
}
