package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/apps"
	"github.com/mcphost/mcphost/cache"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/transport"
	"github.com/mcphost/mcphost/negotiate"
	"github.com/mcphost/mcphost/oauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Conn supervises one configured server: it connects, fetches the
// catalog, watches the session, and reconnects with backoff when restarts
// are on. All mutable state is behind mu; sessions and catalogs are replaced
// whole, never modified.
type Conn struct {
	Cfg    config.Server
	deps   *Deps
	logger *slog.Logger
	lists  *listCache // the host cache, as seen by this server
	box    *Box       // the sandbox of a stdio server (nil for a remote one)

	// stop ends this server's supervisor alone (a reload retiring it);
	// set by Host.startConn before the supervisor starts.
	stop context.CancelFunc
	// retired is set when a reload retires this connection: its state
	// changes are no longer published (a successor may have its name).
	retired atomic.Bool

	settleOnce sync.Once
	settled    chan struct{} // closed once the first attempt has ended
	done       chan struct{} // closed when the supervisor has returned

	// stderrLimit, logLimit and strayLimit bound how much of the server's
	// stderr, notifications/message and stray answers (answers.go) reach
	// the log, across its sessions.
	stderrLimit, logLimit, strayLimit *transport.LogLimiter

	// stderr is the stderr of the current (or last) session's process, and
	// recent the server's last log messages, for its card (ServerLogs).
	stderr atomic.Pointer[transport.StderrLog]
	// quietStderr: the server keeps failing the same way, so the next
	// session's stderr is logged at debug level (supervise.go).
	quietStderr atomic.Bool
	recent      logRing
	// restart asks the supervisor for a new session now (RestartServer).
	restart chan struct{}

	mu      sync.Mutex
	status  ServerStatus
	session *mcp.ClientSession
	cat     *Catalog
	refresh chan struct{} // list_changed signals for the current session

	// ownIDs counts the calls the Conn made itself (owncall.go);
	// sdkCalls sends every call through go-sdk instead (tests).
	ownIDs   atomic.Int64
	sdkCalls atomic.Bool
	// sharedCaps are the capabilities the shared session's client
	// declared (under mu), which own calls on a 2026-07-28 session send.
	sharedCaps *mcp.ClientCapabilities

	// logLevel is the level the gateway asked the server for ("" none).
	logLevel mcp.LoggingLevel // under mu

	// inflight are the running tool calls, to which a legacy session's
	// elicitation/create is attributed (inflight.go).
	inflight Calls

	// roots are the block's roots as the last reload left them (a reload
	// that changes only roots keeps the connection), and client the
	// go-sdk client of the current session, whose roots setRoots changes.
	rootsMu sync.Mutex
	roots   []string
	client  *mcp.Client

	progressSeq atomic.Uint64
	progress    sync.Map // progress token (string) → *progressWatch (progress.go)

	// listChanged counts the server's list_changed notifications per list,
	// across its sessions (see ListChanges).
	listChanged struct{ tools, prompts, resources atomic.Uint64 }

	// subs are the resources callers are subscribed to, with each
	// owner's count of subscriptions (Host.SubscribeResource; a singleton
	// relay's replica is an owner too); a new session subscribes them
	// again.
	subsMu sync.Mutex
	subs   map[string]map[string]int // URI → owner → count

	// clients are the per-client upstream sessions (perclient.go).
	clients clientPool

	// httpc is the HTTP client of a remote server, one for its whole life:
	// reconnects reuse its connections, and the supervisor closes its idle
	// ones when it returns.
	httpOnce sync.Once
	httpc    *http.Client

	// authChanged is signalled when the server's OAuth credential changed
	// (oauth.go): a server waiting in an auth state connects again, a
	// session that lost its credential ends.
	authChanged chan struct{}
	// authLost receives a call's authorization failure (oauth.go): the
	// session ends and waits in needs_auth or auth_error for a sign-in.
	authLost chan error

	// place is where a singleton server runs (singleton.go); nil for
	// every other server. sessionRole (under mu) is the role the current
	// session was made for; relayc the HTTP client of relay sessions.
	place       *placement
	sessionRole role
	relayOnce   sync.Once
	relayc      *http.Client

	// Per-principal sessions (oauth.go): a parent holds kids; a child has
	// its parent and the principal whose credential it sends.
	parent    *Conn
	principal string
	kids      kids
}

// httpClient returns the server's HTTP client (remote servers).
func (c *Conn) httpClient() *http.Client {
	c.httpOnce.Do(func() {
		c.httpc = httpClient(c.Cfg.Headers, c.readMessage)
		if m := c.deps.OAuth.Load(); m != nil && UsesOAuth(&c.Cfg) {
			shim := c.httpc.Transport.(transport.HeaderShim)
			shim.Base = m.Transport(c.Cfg.Name, c.credentialKey(), shim.Base)
			c.httpc.Transport = shim
		}
	})
	return c.httpc
}

// closeIdleHTTP closes the idle connections of the server's HTTP client.
func (c *Conn) closeIdleHTTP() {
	if c.httpc != nil {
		c.httpc.CloseIdleConnections()
	}
	if c.relayc != nil {
		c.relayc.CloseIdleConnections()
	}
}

func NewConn(s config.Server, deps *Deps, hc *cache.Cache) *Conn {
	c := &Conn{
		lists:   &listCache{c: hc, server: s.Name, logger: deps.Logger.With("server", s.Name)},
		Cfg:     s,
		deps:    deps,
		logger:  deps.Logger.With("server", s.Name),
		settled: make(chan struct{}),
		done:    make(chan struct{}),
		restart: make(chan struct{}, 1),

		authChanged: make(chan struct{}, 1),
		authLost:    make(chan error, 1),
	}
	c.roots = s.Roots
	switch s.Transport {
	case config.TransportStdio:
		c.box = NewBox(&s, deps.SandboxDir, deps.DataDir, c.logger)
	case config.TransportWasm:
		c.box = NewWasmBox(&s, deps.WasmCacheDir, c.logger)
	}
	c.stderrLimit = transport.NewStderrLimiter(c.logger)
	c.logLimit = transport.NewLogLimiter(c.logger, "server log messages suppressed", "messages")
	c.strayLimit = transport.NewLogLimiter(c.logger, "stray answers suppressed", "answers")
	c.status = ServerStatus{
		Name:      s.Name,
		Transport: s.Transport,
		State:     StateStopped,
		Since:     time.Now(),
		Launcher:  launcherOf(&s),
	}
	if singleton(&s, deps) {
		c.place = newPlacement(s.Name, deps.Replica)
		c.status.Placement = config.PlacementSingleton
	}
	if !s.Enabled {
		c.status.State = StateDisabled
		c.Settle()
		close(c.done)
	}
	return c
}

func (c *Conn) Settle() { c.settleOnce.Do(func() { close(c.settled) }) }

// Era returns the server's current era without copying its status (the
// policies read it on every call and for every listed tool).
func (c *Conn) Era() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status.Era
}

// Snapshot returns the current status with catalog counts filled in.
func (c *Conn) Snapshot() ServerStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.status
	if c.cat != nil {
		st.Tools = len(c.cat.Tools)
		st.Prompts = len(c.cat.Prompts)
		st.Resources = len(c.cat.Resources)
		st.ResourceTemplates = len(c.cat.Templates)
		st.RejectedTools = c.cat.Rejected
		st.UncheckedTools = c.cat.Unchecked
	}
	st.ClientSessions = c.clients.count()
	if c.box != nil {
		st.Sandbox = c.box.Status()
	}
	return st
}

// Protocol is the era and protocol version of the server's session, as
// Snapshot has them, without building the rest of the status (a call needs
// only these).
func (c *Conn) Protocol() (era, version string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status.Era, c.status.ProtocolVersion
}

// SetState moves the server to a new state and reports it.
func (c *Conn) SetState(state State, mutate func(*ServerStatus)) {
	c.mu.Lock()
	c.status.State = state
	c.status.Since = time.Now()
	if mutate != nil {
		mutate(&c.status)
	}
	c.mu.Unlock()
	if c.deps.OnStatus != nil && !c.retired.Load() {
		c.deps.OnStatus(c.Snapshot())
	}
}

// Current returns the live session and its catalog, or an error saying why
// there is none.
func (c *Conn) Current() (*mcp.ClientSession, *Catalog, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.status.State == StateReady && c.session != nil {
		return c.session, c.cat, nil
	}
	err := &NotReadyError{Server: c.Cfg.Name, State: c.status.State, LastError: c.status.LastError}
	return nil, nil, err
}

// Run is the supervisor loop. It returns when ctx ends, or after the first
// failure when restarts are off.
func (c *Conn) Run(ctx context.Context) {
	defer close(c.done)
	defer c.clients.closeAll(true)
	defer c.logLimit.Flush()
	defer c.strayLimit.Flush()
	defer c.stderrLimit.Flush()
	defer c.closeIdleHTTP()
	defer c.Settle()
	if c.PerPrincipal() {
		c.runParent(ctx)
		return
	}
	if c.place != nil {
		// The lock is released only after the loop below has stopped
		// the server, so that two replicas never run it at once.
		pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		placed := make(chan struct{})
		go func() { defer close(placed); c.runPlacement(pctx) }()
		defer func() { cancel(); <-placed }()
	}
	sv := &supervision{c: c, failures: failureLog{logger: c.logger}}
	defer sv.failures.flush()
	for {
		n := sv.once(ctx)
		if n == nextBackoff {
			if !c.deps.Restart {
				return
			}
			n = sv.backoff(ctx)
		}
		if n == nextStop {
			c.SetState(StateStopped, nil)
			return
		}
	}
}

// connect starts the transport, runs the legacy initialize handshake pinned to
// LegacyProtocolVersion and fetches the catalog, all within the server's
// discovery_timeout.
func (c *Conn) connect(ctx context.Context) (*mcp.ClientSession, *exec.Cmd, *transport.StderrLog, error) {
	dctx, cancel := context.WithTimeout(ctx, c.Cfg.DiscoveryTimeout)
	defer cancel()

	refresh := make(chan struct{}, 1)
	// Elicitation (form and url) is answered for the call in flight
	// (inflight.go: serverRequests, which answers elicitation/create
	// before go-sdk would, so no ElicitationHandler); roots only when the block declares some; sampling is
	// never advertised, and a request for it gets SamplingRefusal. A
	// non-nil value replaces go-sdk's default of advertising roots. Every
	// server learns that this client renders MCP Apps.
	caps := &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{
		Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{},
	}}
	roots := c.CurrentRoots()
	if len(roots) > 0 {
		caps.RootsV2 = &mcp.RootCapabilities{ListChanged: true}
	}
	apps.Advertise(caps)
	client := mcp.NewClient(&mcp.Implementation{Name: "mcphost", Version: c.deps.Version}, &mcp.ClientOptions{
		Capabilities: caps,
		// A modern server's input_required answer (SEP-2322) comes back as
		// it is (NeedsInput): the gateway relays it to its client, and
		// every other door answers its rounds in the pipeline (rounds.go).
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			c.listChangedHeard("tools/list", refresh)
		},
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
			c.listChangedHeard("prompts/list", refresh)
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			c.listChangedHeard("resources/list", refresh)
		},
		ResourceUpdatedHandler: func(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			c.resourceUpdatedHeard(ctx, req.Params)
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			c.deliverProgress(req.Params)
		},
		// Log messages are routed as they are read (serverlog.go).
	})

	client.AddReceivingMiddleware(c.serverRequests)
	client.AddRoots(ConfigRoots(roots)...)
	c.mu.Lock()
	c.sharedCaps = caps
	c.mu.Unlock()
	c.rootsMu.Lock()
	c.client = client
	c.rootsMu.Unlock()
	return c.connectNegotiated(ctx, dctx, client, refresh)
}

// sessionTransport fills in how spec reaches the server: for a stdio
// server the command (each one started is put in *last, for how it ended)
// with its stderr in a new log, which it returns; for a remote one the URL
// and the server's HTTP client (nil log).
func (c *Conn) sessionTransport(spec *negotiate.Spec, last **exec.Cmd) *transport.StderrLog {
	if c.Cfg.Transport == config.TransportWasm {
		stderr := transport.NewStderrLog(c.logger, c.stderrLimit)
		stderr.Quiet = c.quietStderr.Load()
		spec.Transport = negotiate.TransportInProcess
		spec.NewTransport = func(ctx context.Context) (mcp.Transport, error) { return c.box.WasmTransport(ctx, stderr) }
		return stderr
	}
	if c.Cfg.Transport != config.TransportStdio {
		spec.URL = c.Cfg.URL
		spec.HTTPClient = c.httpClient()
		return nil
	}
	stderr := transport.NewStderrLog(c.logger, c.stderrLimit)
	stderr.Quiet = c.quietStderr.Load()
	stderr.OnLine = c.box.StderrLine
	spec.NewCommand = func() *exec.Cmd {
		*last = c.box.Command(transport.NewCommand(&c.Cfg, stderr))
		return *last
	}
	return stderr
}

// connectNegotiated connects a server through the negotiate package, the
// one connect path: with version_negotiation = "legacy" an initialize
// pinned at LegacyProtocolVersion; with "auto" the era cache, the probe,
// its classification, and a session pinned to the verdict; all within the
// discovery window.
func (c *Conn) connectNegotiated(ctx, dctx context.Context, client *mcp.Client, refresh chan struct{}) (*mcp.ClientSession, *exec.Cmd, *transport.StderrLog, error) {
	var (
		stderr *transport.StderrLog
		last   *exec.Cmd // the session process, for how it ended when the connect fails
	)
	mode := negotiate.ModeLegacy
	if c.Cfg.VersionNegotiation == config.NegotiationAuto && c.Cfg.Transport != config.TransportWasm {
		mode = negotiate.ModeAuto
	}
	spec := negotiate.Spec{
		Name:             c.Cfg.Name,
		Mode:             mode,
		Transport:        c.Cfg.Transport,
		DiscoveryTimeout: c.Cfg.DiscoveryTimeout,
		StdioProbe:       c.Cfg.StdioProbe,
		HTTPProbeTimeout: c.Cfg.HTTPProbeTimeout,
		Client:           func() *mcp.Client { return client },
		CacheKey:         eraCacheKey(&c.Cfg),
		Logger:           c.logger,
		WrapTransport:    c.wrapTransport,
	}
	if c.deps.Store != nil {
		spec.Cache = storeEraCache{c.deps.Store}
	}
	r := role{holder: true}
	if c.place != nil {
		var err error
		if r, err = c.awaitRole(dctx); err != nil {
			return nil, nil, nil, err
		}
	}
	if r.holder {
		stderr = c.sessionTransport(&spec, &last)
		if stderr != nil {
			c.stderr.Store(stderr)
		}
	} else {
		mode = negotiate.ModeLegacy
		if err := c.relaySpec(dctx, &spec, r.on); err != nil {
			return nil, nil, nil, err
		}
	}
	c.mu.Lock()
	c.sessionRole = r
	c.mu.Unlock()
	res, err := negotiate.Connect(dctx, spec)
	if err != nil {
		what := "negotiating the protocol version"
		if mode == negotiate.ModeLegacy {
			what = "initialize"
		}
		err = transport.ContextErr(dctx, ctx, err, what, c.Cfg.DiscoveryTimeout)
		err = hintLauncher(dctx, ctx, err, &c.Cfg)
		err = hintNotJSON(err, c.Cfg.Transport)
		if mode == negotiate.ModeLegacy {
			err = describeExit(err, last) // a probe sibling's exit would say nothing of the session
		}
		return nil, nil, nil, transport.WithStderr(fmt.Errorf("connect: %w", err), stderr)
	}
	return c.ready(ctx, dctx, res.Session, res.Cmd, stderr, refresh, res.Verdict)
}

// ready fetches the catalog of a connected session and makes the server
// ready with it. On failure it closes the session and ends the process.
func (c *Conn) ready(ctx, dctx context.Context, cs *mcp.ClientSession, cmd *exec.Cmd, stderr *transport.StderrLog, refresh chan struct{}, verdict negotiate.Verdict) (*mcp.ClientSession, *exec.Cmd, *transport.StderrLog, error) {
	ir := cs.InitializeResult()
	// Cached lists survive a reconnect only when the server is the same
	// (serverInfo, era, version and capabilities).
	if c.lists.c.Connected(c.lists.server, cache.ServerIdentity{Info: ir.ServerInfo, Era: verdict.Era, Version: ir.ProtocolVersion, Capabilities: ir.Capabilities}) {
		c.logger.Info("server identity changed; cached lists dropped")
	}
	cat, err := FetchCatalog(dctx, cs, c.lists)
	if err != nil {
		err = transport.ContextErr(dctx, ctx, err, "listing tools, prompts and resources", c.Cfg.DiscoveryTimeout)
		_ = cs.Close()
		transport.KillGroup(cmd)
		return nil, nil, nil, transport.WithStderr(err, stderr)
	}

	c.resubscribe(dctx, cs)
	c.mu.Lock()
	c.session, c.cat, c.refresh = cs, cat, refresh
	level := c.logLevel
	c.mu.Unlock()
	if level != "" {
		if err := cs.SetLoggingLevel(dctx, &mcp.SetLoggingLevelParams{Level: level}); err != nil {
			c.logger.Warn("setting the log level again after reconnecting", "level", level, "err", err)
		}
	}
	c.SetState(StateReady, func(s *ServerStatus) {
		s.Era = verdict.Era
		s.ProtocolVersion = ir.ProtocolVersion
		s.Evidence = verdict.Evidence
		s.ServerInfo = ir.ServerInfo
		s.Capabilities = ir.Capabilities
		s.Instructions = ir.Instructions
		s.LastError = ""
		s.RunsOn = ""
		if cmd != nil && cmd.Process != nil {
			s.PID = cmd.Process.Pid
		}
		if c.place != nil {
			r := c.sessionRole // setState holds mu
			if r.holder {
				s.RunsOn = r.on
			} else {
				relayStatus(s, ir, r.on)
			}
		}
	})
	st := c.Snapshot()
	c.logger.Info("server ready", "era", st.Era, "protocol_version", st.ProtocolVersion,
		"tools", st.Tools, "prompts", st.Prompts, "resources", st.Resources)
	return cs, cmd, stderr, nil
}

// hintNotJSON explains a JSON syntax error from a stdio server: the usual
// cause is a server that prints logs or banners on stdout, which carries only
// JSON-RPC messages.
func hintNotJSON(err error, transport string) error {
	var se *json.SyntaxError
	if transport == config.TransportStdio && (errors.As(err, &se) || strings.Contains(err.Error(), "invalid character")) {
		return fmt.Errorf("%w: the server wrote something that is not JSON-RPC on stdout (stdout must carry only MCP messages; logs belong on stderr)", err)
	}
	return err
}

// describeExit adds how the process ended to err when it has ended.
func describeExit(err error, cmd *exec.Cmd) error {
	if d := transport.ExitDescription(cmd); d != "" {
		return fmt.Errorf("%w (server process: %s)", err, d)
	}
	return err
}

// Serve keeps a ready session until ctx ends or the session ends on its own,
// refetching the catalog on list_changed. It always closes the session and
// reaps the process; the returned error says why the session ended.
func (c *Conn) Serve(ctx context.Context, cs *mcp.ClientSession, cmd *exec.Cmd, stderr *transport.StderrLog) error {
	ended := make(chan error, 1)
	go func() { ended <- cs.Wait() }()
	c.mu.Lock()
	refresh := c.refresh
	c.mu.Unlock()

	var cause error
	for cause == nil {
		select {
		case <-ctx.Done():
			cause = ctx.Err()
		case err := <-ended:
			if err == nil {
				err = errors.New("connection closed")
			}
			cause = fmt.Errorf("session ended: %w", err)
		case <-c.restart:
			cause = errRestartAsked
		case <-c.placeChanged():
			c.mu.Lock()
			was := c.sessionRole
			c.mu.Unlock()
			if now := c.place.get(); now != was {
				c.logger.Info("singleton server moves", "ran_here", was.holder, "on", was.on, "runs_here", now.holder, "now_on", now.on)
				cause = errPlacementMoved
			}
		case err := <-c.authLost:
			cause = err
		case <-c.authChanged:
			if c.signedOut(ctx) {
				cause = &oauth.AuthRequiredError{Server: c.Cfg.Name, Reason: "signed out"}
			}
		case <-refresh:
			rctx, cancel := context.WithTimeout(ctx, c.Cfg.DiscoveryTimeout)
			cat, err := FetchCatalog(rctx, cs, c.lists)
			cancel()
			if err != nil {
				c.logger.Warn("refreshing the catalog after list_changed failed", "err", err)
				continue
			}
			c.mu.Lock()
			c.cat = cat
			c.mu.Unlock()
			c.logger.Info("catalog refreshed", "tools", len(cat.Tools), "prompts", len(cat.Prompts), "resources", len(cat.Resources))
			if c.deps.OnStatus != nil {
				c.deps.OnStatus(c.Snapshot())
			}
		}
	}
	c.mu.Lock()
	c.session = nil
	c.status.PID = 0
	c.mu.Unlock()
	c.clients.closeAll(false)
	_ = cs.Close()
	transport.KillGroup(cmd)
	if ctx.Err() != nil {
		return cause
	}
	return transport.WithStderr(describeExit(cause, cmd), stderr)
}

// deliverProgress routes a progress notification to the call that asked for it.
func (c *Conn) deliverProgress(p *mcp.ProgressNotificationParams) {
	if p == nil {
		return
	}
	key, ok := progressKey(p.ProgressToken)
	if !ok {
		return
	}
	if w, ok := c.progress.Load(key); ok {
		w.(*progressWatch).send(Progress{Progress: p.Progress, Total: p.Total, Message: p.Message})
	}
}

// listChangedHeard handles the server's notification that list (its
// method, "tools/list") changed: the cached list is invalidated before the
// catalog is fetched again (the session's refresh is signalled), so that
// the refetch reaches the server.
func (c *Conn) listChangedHeard(list string, refresh chan struct{}) {
	c.lists.c.Invalidate(c.lists.server, list)
	switch list {
	case "tools/list":
		c.listChanged.tools.Add(1)
	case "prompts/list":
		c.listChanged.prompts.Add(1)
	case "resources/list":
		c.listChanged.resources.Add(1)
	}
	select {
	case refresh <- struct{}{}:
	default:
	}
}

// resourceUpdatedHeard handles notifications/resources/updated: the
// resource's cached reads are dropped and its subscribers told.
func (c *Conn) resourceUpdatedHeard(ctx context.Context, p *mcp.ResourceUpdatedNotificationParams) {
	if p == nil {
		return
	}
	c.lists.c.InvalidateURI(c.lists.server, p.URI)
	if c.deps.OnResourceUpdated != nil && !c.retired.Load() && c.parent == nil {
		c.deps.OnResourceUpdated(ctx, c.Cfg.Name, p.URI)
	}
}

// wrapTransport wraps the transport of the server's shared session (stdio,
// SSE, in-process) in the check of answer ids (answers.go), where its
// progress is counted and its log messages routed as they are read; a
// Streamable HTTP server's answers are checked in its HTTP client instead,
// and its transport is returned as it is.
func (c *Conn) wrapTransport(t mcp.Transport) mcp.Transport {
	return c.wrapSession(t, c.sharedLogOwner)
}

// wrapSession is wrapTransport for a session whose log messages belong to
// whom owner names when they are read.
func (c *Conn) wrapSession(t mcp.Transport, owner func() logOwner) mcp.Transport {
	if c.Cfg.Transport == config.TransportStreamableHTTP {
		return t
	}
	return transport.GuardAnswers(t, c.logger, c.strayLimit, func(method string, params json.RawMessage) {
		c.readNotification(method, params, owner)
	})
}

// httpClient returns the HTTP client of a remote server: the default
// transport's timeouts and limits (idle connections: as many to the one
// host as in all) plus the configured headers.
// Every request goes through headerShim (configured headers, and the
// standard MCP headers legacy sessions lack), then answerCheck (the ids of
// the answers to go-sdk's calls).
// It has no overall timeout, because responses may be long-lived event
// streams; contexts bound each request.
func httpClient(headers map[string]string, onMessage func(req *http.Request, data []byte)) *http.Client {
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.ResponseHeaderTimeout = 0
	// Calls from many callers share one server's connections: with the
	// default two idle ones per host, a third caller's connection was
	// closed after each call and the next call dialled again.
	base.MaxIdleConnsPerHost = base.MaxIdleConns
	return &http.Client{Transport: transport.HeaderShim{Base: transport.AnswerCheck{Base: base, OnMessage: onMessage}, Static: headers, Traced: Tracing}}
}
