package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/mcphost/mcphost/cache"
	"github.com/mcphost/mcphost/cluster"
	"github.com/mcphost/mcphost/host/boot"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/appgate"
	"github.com/mcphost/mcphost/host/internal/events"
	"github.com/mcphost/mcphost/host/internal/generation"
	"github.com/mcphost/mcphost/host/internal/identity"
	"github.com/mcphost/mcphost/host/internal/pipeline"
	"github.com/mcphost/mcphost/host/internal/questions"
	"github.com/mcphost/mcphost/host/internal/upstream"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/oauth"
	"github.com/mcphost/mcphost/plugins"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configure a [Host]. The zero value is usable: no logging, no
// restarts, every enabled server.
type Options struct {
	// Logger receives the host's logs; nil discards them.
	Logger *slog.Logger
	// Version is reported to servers as clientInfo.version.
	Version string
	// Restart reconnects servers that fail or exit, with capped exponential
	// backoff. The daemon turns it on; one-shot CLI commands leave it off.
	Restart bool
	// BackoffMin and BackoffMax bound the restart delay (defaults 500ms,
	// and each server's restart_backoff_max; a BackoffMax set here caps
	// that too).
	BackoffMin, BackoffMax time.Duration
	// Servers limits the host to these configured servers (nil: all).
	Servers []string
	// OnStatus, when set, is called after every change of a server's state.
	// It must not block.
	OnStatus func(ServerStatus)
	// Store holds sessions and transcripts; nil for one-shot commands
	// (the session methods then return ErrNoStore). The caller closes it
	// after the host.
	Store *store.Store
	// OwnerToken, when set, adds a principal "owner" with this token
	// while the config declares no principal (the daemon's generated
	// credential); a config, or a reload, that declares principals uses
	// only those.
	OwnerToken string
	// PluginCacheDir holds the on-disk compilation cache of the config's
	// plugins (see boot.PluginCacheDir); "" keeps compiled code in memory.
	PluginCacheDir string
	// ApprovalTimeout bounds how long a call paused by an `ask` policy
	// waits for the user's answer (default defaultApprovalTimeout); no
	// answer is a deny.
	ApprovalTimeout time.Duration
	// CredentialKey derives the WebShell credentials (see
	// Host.WebShellSignIn); the daemon keeps one in its data_dir so they
	// survive a restart. Empty: a random key for this host's life.
	CredentialKey []byte
	// MaxSubscribers bounds the event streams open at once in total, and
	// MaxSubscribersPerPrincipal those of one principal (defaults
	// defaultMaxSubscribers and DefaultMaxSubscribersPerPrincipal).
	MaxSubscribers, MaxSubscribersPerPrincipal int
	// AppCompaction bounds how long and how much MCP App HTML the store
	// keeps (apps.md §7); the zero value means 7 days and 16 MiB per session.
	AppCompaction AppCompaction
	// Replica is the daemon's replica id (package cluster), named in
	// /readyz and in the refusal of calls while draining; "" for a host
	// that is no daemon.
	Replica string
	// Cluster is the daemon's cluster node (its replica id, directory and
	// hop signature); with a shared store, the servers with placement =
	// "singleton" run on one replica and are relayed to by the others
	// (upstream/singleton.go). nil: a single node.
	Cluster *cluster.Node
	// ShutdownGrace is how long Serve lets running calls finish once its
	// context ends (default DefaultShutdownGrace).
	ShutdownGrace time.Duration

	// OAuthBaseURL is the daemon's origin as browsers reach it, for OAuth
	// redirects (default http://LISTEN_HOST:PORT; a reverse proxy's URL).
	OAuthBaseURL string
	// OnPeerReload, when set, is called (on a goroutine of its own) when
	// another replica sharing the store reloaded its config through the
	// API (ReloadOptions.Announce): the daemon reloads its own config file.
	OnPeerReload func(ctx context.Context)
}

// Host runs the configured servers. Create it with [New], start it with
// [Host.Start] (or [Host.Run]) and end it with [Host.Close]. Its methods are
// safe for concurrent use.
type Host struct {
	opts Options
	deps *upstream.Deps // what every server connection gets from the host

	gens gens        // the generation in force and its reloads (reload.go)
	pipe pipeParts   // running calls, their limits and metrics (pipeline.go)
	asks askParts    // approvals and elicitations waiting (approvals.go)
	ev   eventParts  // streams, watchers and fan-in across replicas (events.go)
	apps appParts    // per-App limits and compaction (appgate.go)
	wasm pluginParts // the plugins' runtime (boot.NewPluginRuntime)
	auth oauthParts  // the OAuth manager (oauth.go)
	life lifecycle   // start, drain and close (httpserver.go)

	store   *store.Store
	cache   *cache.Cache
	relays  relays        // the singleton servers' relays (relayserver.go)
	search  searchIndexes // the tool search's indexes (search.go)
	embed   embedders     // the tool search's embedder (searchrank.go)
	credKey []byte        // derives WebShell credentials (principal.go)
}

// gens is the generation in force: servers, principals, policies and
// plugins of the config (reload.go).
type gens struct {
	cur      atomic.Pointer[generation.Gen]
	reloadMu sync.Mutex      // one Start or Reload at a time
	rootCtx  context.Context // Start's context: every server connection runs under it
	retiring sync.WaitGroup  // retired generations still draining
}

// pipeParts are the pipeline's shared state.
type pipeParts struct {
	metrics metrics
	calls   calls            // running calls by principal and call id
	limiter pipeline.Limiter // per-principal call limits (pipeline/ratelimit.go)
	owned   sync.Map         // principal+"\x00"+sessionID → struct{}: confirmed session owners
}

// askParts are the questions calls wait on.
type askParts struct {
	approvals *questions.Broker[Approval, bool]                 // pending approvals (approvals.go)
	elicits   *questions.Broker[Elicitation, ElicitationAnswer] // pending elicitations (elicitbroker.go)
	sweep     sync.WaitGroup                                    // the sweep of dead replicas' questions (questionsweep.go)
}

// eventParts are the event streams and who listens to servers.
type eventParts struct {
	bus      *events.Bus
	watchers events.Watchers
	// logWatchers hear the servers' log messages that no call owns.
	logWatchers   events.Listeners[func(string, string, *mcp.LoggingMessageParams)]
	resourceWatch events.Listeners[func(context.Context, string, string)] // resources/updated for the gateway (WatchResourceUpdates)
	fanin         fanIn                                                   // events across replicas (fanin.go)
}

// appParts are the MCP Apps' shared state.
type appParts struct {
	appLimits appgate.Limits    // per-App limits of App requests (appgate/gate.go)
	compactor appgate.Compactor // background App compaction (appgate/compact.go)
}

// pluginParts hold the plugins' runtime, shared by every generation's
// plugins and closed last.
type pluginParts struct {
	pluginRT    *plugins.Runtime
	pluginsOnce sync.Once
}

// oauthParts hold the OAuth manager, nil until a server has an auth block
// (oauth.go).
type oauthParts struct {
	oauthMu sync.Mutex
	oauth   *oauth.Manager
}

// lifecycle is where the host is between New and Close.
type lifecycle struct {
	closing atomic.Bool
	closed  chan struct{} // closed when Close begins
	// started is set by Start; draining once Serve's context ended (new
	// calls are refused, running ones finish: httpserver.go); stopping is
	// closed when the drain is over and Serve stops serving.
	started, draining atomic.Bool
	stopping          chan struct{}
	// listenAddr is the address the daemon's listener is bound to, set by
	// Serve (a listen port of 0 gets its real port only then); nil while
	// the host serves nothing.
	listenAddr atomic.Pointer[string]
	startOnce  sync.Once
	cancel     context.CancelFunc
	closeOnce  sync.Once
	stopOnce   sync.Once // closes stopping
}

// New plans a host for cfg without starting anything. It fails when
// opts.Servers names a server the config does not have.
func New(cfg *config.Config, opts Options) (*Host, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.BackoffMin <= 0 {
		opts.BackoffMin = 500 * time.Millisecond
	}
	if opts.BackoffMax < 0 {
		opts.BackoffMax = 0
	}
	if opts.ApprovalTimeout <= 0 {
		opts.ApprovalTimeout = questions.DefaultApprovalTimeout
	}
	if opts.MaxSubscribers <= 0 {
		opts.MaxSubscribers = defaultMaxSubscribers
	}
	sandboxDir := filepath.Join(cfg.DataDir, "sandboxes")
	if cfg.DataDir == "" {
		dir, err := os.MkdirTemp("", "mcphost-sandboxes-")
		if err != nil {
			return nil, fmt.Errorf("a directory for the servers' sandboxes: %w", err)
		}
		sandboxDir = dir
	}
	if opts.MaxSubscribersPerPrincipal <= 0 {
		opts.MaxSubscribersPerPrincipal = defaultMaxSubscribersPerPrincipal
	}
	h := &Host{store: opts.Store, cache: cache.New(cache.Options{}), credKey: identity.NewKey(opts.CredentialKey),
		life: lifecycle{closed: make(chan struct{}), stopping: make(chan struct{})}}
	h.ev.bus = &events.Bus{Logger: opts.Logger, Max: opts.MaxSubscribers, MaxPerPrincipal: opts.MaxSubscribersPerPrincipal}
	h.ev.fanin.queue, h.ev.fanin.listening = make(chan store.Poke, pokeQueue), make(chan struct{})
	h.asks.approvals = &questions.Broker[Approval, bool]{Kind: pokeApproval, DoneKind: pokeApprovalDone,
		Max: questions.MaxPendingApprovals, Full: ErrTooManyApprovals, Shared: approvalRows{sharedQuestions{h}}}
	h.asks.elicits = &questions.Broker[Elicitation, ElicitationAnswer]{Kind: pokeElicitation, DoneKind: pokeElicitationDone,
		Max: questions.MaxPendingElicitations, Full: errTooManyElicitations, Shared: sharedQuestions{h}}
	h.deps = h.connDeps(cfg, opts, sandboxDir)
	h.apps.compactor.Store, h.apps.compactor.Logger, h.apps.compactor.Settings = opts.Store, opts.Logger, opts.AppCompaction
	h.opts = opts
	if err := h.setupOAuth(cfg); err != nil {
		h.dropSandboxDir()
		return nil, err
	}
	g, _, err := h.newGeneration(context.Background(), cfg, nil)
	if err != nil {
		if h.wasm.pluginRT != nil {
			h.wasm.pluginRT.Close(context.Background())
		}
		h.dropSandboxDir()
		return nil, err
	}
	h.gens.cur.Store(g)
	return h, nil
}

// dropSandboxDir removes the sandboxes' directory when New made it in the
// temporary directory (no data_dir) and fails after: no Close will.
func (h *Host) dropSandboxDir() {
	if h.deps.DataDir == "" {
		_ = os.RemoveAll(h.deps.SandboxDir)
	}
}

// connDeps is what every server connection of the host gets: the
// settings of opts, and the callbacks through which it reports to the
// host's streams, watchers and elicitations.
func (h *Host) connDeps(cfg *config.Config, opts Options, sandboxDir string) *upstream.Deps {
	userOnStatus := opts.OnStatus
	return &upstream.Deps{
		Logger: opts.Logger, Version: opts.Version, Restart: opts.Restart,
		BackoffMin: opts.BackoffMin, BackoffMax: opts.BackoffMax,
		Store: opts.Store, Replica: opts.Replica, Cluster: opts.Cluster,
		DataDir: cfg.DataDir, SandboxDir: sandboxDir, WasmCacheDir: boot.WasmCacheDir(opts.PluginCacheDir, cfg.DataDir, sandboxDir),
		OAuth: &upstream.OAuthRef{},
		OnStatus: func(st ServerStatus) {
			h.publish(Event{Type: eventServer, Data: st})
			if userOnStatus != nil {
				userOnStatus(st)
			}
		},
		OnPrincipalStatus: func(principal string, st ServerStatus) {
			h.publish(Event{Type: eventServer, Principal: principal, Data: st})
		},
		OnResourceUpdated: func(ctx context.Context, server, uri string) {
			for _, fn := range h.ev.resourceWatch.Each() {
				fn(ctx, server, uri)
			}
		},
		LogMessage: func(server, principal string, p *mcp.LoggingMessageParams) {
			for _, fn := range h.ev.logWatchers.Each() {
				fn(server, principal, p)
			}
		},
		Elicit: func(ctx context.Context, call *upstream.Call, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return h.answerElicitation(ctx, call, 0, p)
		},
	}
}

// PluginLoadError is a plugin of the config that failed to load: a corrupt
// or unreadable module, a missing export, a failing warm-up call.
type PluginLoadError struct {
	Diagnostics hcl.Diagnostics
}

func (e *PluginLoadError) Error() string {
	var b strings.Builder
	b.WriteString("host: plugins failed to load:")
	for _, d := range e.Diagnostics {
		b.WriteString("\n  ")
		b.WriteString(d.Error())
	}
	return b.String()
}

// Start connects every enabled server in the background, each on its own,
// and returns at once. Servers stop when ctx ends or at [Host.Close].
func (h *Host) Start(ctx context.Context) {
	h.life.startOnce.Do(func() {
		h.gens.reloadMu.Lock()
		defer h.gens.reloadMu.Unlock()
		h.gens.rootCtx, h.life.cancel = context.WithCancel(ctx)
		for _, c := range h.gen().Conns {
			h.startConn(c)
		}
		h.startAppCompaction(h.gens.rootCtx)
		h.startQuestionSweep(h.gens.rootCtx)
		h.startFanIn(h.gens.rootCtx)
		h.life.started.Store(true)
	})
}

// startConn starts an enabled server's supervisor under the host's root
// context, with its own cancel so that a reload can stop it alone.
func (h *Host) startConn(c *upstream.Conn) {
	if !c.Cfg.Enabled {
		return
	}
	c.Start(h.gens.rootCtx)
}

// WaitSettled waits until every started server has finished its first
// connection attempt (it is ready or failed), or ctx ends.
func (h *Host) WaitSettled(ctx context.Context) error {
	for _, c := range h.gen().Conns {
		select {
		case <-c.Settled():
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Run starts the host and serves until ctx ends, then closes it.
func (h *Host) Run(ctx context.Context) error {
	h.Start(ctx)
	<-ctx.Done()
	return h.Close()
}

// Close stops every server: sessions are closed as the MCP spec asks (stdin
// closed, then SIGTERM, then SIGKILL to the whole process group) and child
// processes are reaped. It waits at most shutdownBound.
func (h *Host) Close() error {
	h.life.closeOnce.Do(func() {
		h.life.closing.Store(true)
		close(h.life.closed)
		h.life.startOnce.Do(func() {}) // a host that never started has nothing to stop
		h.pipe.calls.cancelAll()
		if m := h.deps.OAuth.Load(); m != nil {
			m.Close() // sign-ins in progress end
		}
		if h.life.cancel != nil {
			h.life.cancel()
		}
		h.apps.compactor.Wait()
		h.asks.sweep.Wait()
		h.ev.fanin.wg.Wait()
		h.ev.bus.Close()
	})
	// A reload under way finishes first (later ones fail): its generation
	// is the last one, and its retired one is counted in h.gens.retiring.
	h.gens.reloadMu.Lock()
	last := h.gen()
	h.gens.reloadMu.Unlock()
	defer h.closePlugins()
	if h.deps.DataDir == "" { // a temporary directory (New)
		defer os.RemoveAll(h.deps.SandboxDir)
	}
	bound, cancel := context.WithTimeout(context.Background(), shutdownBound)
	defer cancel()
	var stuck []string
	for _, c := range last.Conns {
		if !c.Started() {
			continue // a host closed before it started: this server never ran
		}
		select {
		case <-c.Done():
		case <-bound.Done():
			stuck = append(stuck, c.Cfg.Name)
		}
	}
	retired := make(chan struct{})
	go func() { h.gens.retiring.Wait(); close(retired) }()
	select {
	case <-retired:
	case <-bound.Done():
		stuck = append(stuck, "the servers a reload replaced")
	}
	if len(stuck) > 0 {
		return fmt.Errorf("host: servers still stopping after %s: %s", shutdownBound, strings.Join(stuck, ", "))
	}
	return nil
}

// closePlugins closes the plugin pools once their calls have returned, then
// the runtime that owns the compiled code.
func (h *Host) closePlugins() {
	h.wasm.pluginsOnce.Do(func() {
		if p := h.gen().Plugins; p != nil {
			p.Close()
		}
		if h.wasm.pluginRT != nil {
			h.wasm.pluginRT.Close(context.Background())
		}
	})
}

// shutdownBound caps how long Close waits for servers to stop: go-sdk's
// stdio close takes up to two negotiate.SessionTerminateDuration periods
// before SIGKILL.
const shutdownBound = 10 * time.Second

// Servers returns the status of every configured server in config order.
func (h *Host) Servers() []ServerStatus {
	g := h.gen()
	out := make([]ServerStatus, 0, len(g.Conns))
	for _, c := range g.Conns {
		out = append(out, c.Snapshot())
	}
	annotateCollisions(g, out)
	return out
}

// Server returns one server's status.
func (h *Host) Server(name string) (ServerStatus, error) {
	c, err := h.conn(name)
	if err != nil {
		return ServerStatus{}, err
	}
	return c.Snapshot(), nil
}

func (h *Host) conn(name string) (*upstream.Conn, error) { return h.gen().Conn(name) }

// Tools returns the tools of every ready server, or of the named server
// only, sorted by server (config order) and tool name.
func (h *Host) Tools(server string) ([]Tool, error) { return h.gen().Tools(server, "") }

// Prompts returns the prompts of a ready server.
func (h *Host) Prompts(server string) ([]*mcp.Prompt, error) {
	cat, err := h.catalogOf(server)
	if err != nil {
		return nil, err
	}
	return cat.Prompts, nil
}

// Resources returns the resources and resource templates of a ready server.
func (h *Host) Resources(server string) ([]*mcp.Resource, []*mcp.ResourceTemplate, error) {
	cat, err := h.catalogOf(server)
	if err != nil {
		return nil, nil, err
	}
	return cat.Resources, cat.Templates, nil
}

func (h *Host) catalogOf(server string) (*upstream.Catalog, error) {
	c, err := h.conn(server)
	if err != nil {
		return nil, err
	}
	_, cat, err := c.Current()
	return cat, err
}

// UnknownToolError is returned for a tool the server does not list.
type UnknownToolError struct {
	Server, Tool string
	Known        []string
}

func (e *UnknownToolError) Error() string {
	msg := fmt.Sprintf("server %q has no tool %q", e.Server, e.Tool)
	if len(e.Known) > 0 {
		known := e.Known
		if len(known) > 20 {
			known = append(known[:20:20], "…")
		}
		msg += " (it has: " + strings.Join(known, ", ") + ")"
	}
	return msg
}

// IsNotFound reports whether err names a server or tool that does not exist.
func IsNotFound(err error) bool {
	var us *UnknownServerError
	var ut *UnknownToolError
	return errors.As(err, &us) || errors.As(err, &ut)
}

// RefreshCatalog lists a ready server's tools, prompts and resources again
// and returns its status. Lists whose ttlMs says they are still fresh come
// from the host cache without a request to the server; others are fetched.
func (h *Host) RefreshCatalog(ctx context.Context, server string) (ServerStatus, error) {
	c, err := h.conn(server)
	if err != nil {
		return ServerStatus{}, err
	}
	st, err := c.Refresh(ctx)
	if err != nil {
		return ServerStatus{}, err
	}
	h.publish(Event{Type: eventServer, Data: st})
	return st, nil
}

// CacheStats returns the host cache's counters.
func (h *Host) cacheStats() cache.Stats { return h.cache.Stats() }
