package config

import (
	"log/slog"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/mcphost/mcphost/policies"
)

// Transport names accepted by the `transport` attribute of a server block.
const (
	TransportStdio          = "stdio"           // implied by `command`
	TransportStreamableHTTP = "streamable_http" // default for `url`
	TransportSSE            = "sse"             // the deprecated 2024-11-05 HTTP+SSE transport
	TransportWasm           = "wasm"            // implied by `wasm`: a WebAssembly module mcphost runs in-process
)

// Version negotiation modes accepted by `version_negotiation`.
const (
	NegotiationLegacy = "legacy" // default: initialize at 2025-11-25, no probe
	NegotiationAuto   = "auto"   // probe with server/discover (the negotiated-client issue)
)

// Probe settings of `version_negotiation = "auto"`.
const (
	StdioProbeSibling        = "sibling"  // default: probe a disposable copy first
	StdioProbeInPlace        = "in_place" // probe the session process itself
	HTTPProbeTimeoutFallback = "fallback" // default: a silent probe falls back to legacy
	HTTPProbeTimeoutError    = "error"    // a silent probe fails the connection
)

// Values of the per-server `apps` setting (which MCP Apps render).
const (
	AppsAuto       = "auto"       // default: advertised, or served with the exact App MIME type
	AppsAdvertised = "advertised" // only servers that advertise the extension
	AppsOff        = "off"        // never
)

// Values of the per-server `session_mode` setting.
const (
	SessionShared    = "shared"     // default: one upstream session for every caller
	SessionPerClient = "per_client" // an upstream session per legacy gateway client
)

// Values of the per-server `log_messages` setting: who hears a server's
// log messages (notifications/message) through the gateway.
const (
	LogMessagesOwn = "own" // default: a client hears the messages of its own calls only
	LogMessagesAll = "all" // also: a message no call owns goes to every client with a call running
)

// Values of the per-server `placement` setting: where the server runs when
// several replicas share a PostgreSQL store (one daemon: always here).
const (
	PlacementReplica   = "replica"   // default: every replica runs it
	PlacementSingleton = "singleton" // one replica runs it, the others forward to it
)

// Bounds of the App resource settings.
const (
	DefaultAppResourceMaxBytes = 1 << 20
	MaxAppResourceMaxBytes     = 16 << 20 // the hard cap: the official PDF App is 4.3 MB
	MinAppResourceTimeout      = 100 * time.Millisecond
	MaxAppResourceTimeout      = 120 * time.Second
	DefaultAppResourceTimeout  = 10 * time.Second // or call_timeout when shorter
)

// Values of `store { sync }`: when a commit of the database reaches stable
// storage.
const (
	StoreSyncFull   = "full"   // default: every commit is fsynced; acknowledged entries survive a power loss
	StoreSyncNormal = "normal" // fsync at checkpoints only; acknowledged entries survive kill -9, not a power loss
)

// Defaults of the App compaction attributes.
const (
	DefaultAppCompactAfter        = 7 * 24 * time.Hour
	DefaultAppCompactSessionBytes = 16 << 20
	MinAppCompactAfter            = time.Minute
	// Bounds of approval_timeout; DefaultApprovalTimeout when unset.
	DefaultApprovalTimeout = 2 * time.Minute
	MinApprovalTimeout     = time.Second
	MaxApprovalTimeout     = 24 * time.Hour
	// Bounds of elicitation_timeout; DefaultElicitationTimeout when unset.
	DefaultElicitationTimeout = 2 * time.Minute
	MinElicitationTimeout     = time.Second
	MaxElicitationTimeout     = time.Hour
)

// Defaults and bounds for server timing attributes.
const (
	DefaultDiscoveryTimeout = 30 * time.Second
	MinDiscoveryTimeout     = 100 * time.Millisecond
	MaxDiscoveryTimeout     = 300 * time.Second
	DefaultCallTimeout      = 10 * time.Minute
	// Restarts of a failing server: waits grow to restart_backoff_max.
	DefaultRestartBackoffMax = 5 * time.Minute
	MinRestartBackoffMax     = time.Second
	MaxRestartBackoffMax     = time.Hour
	MaxMaxRestarts           = 1000000
	// Per-client upstream sessions (session_mode = "per_client").
	DefaultMaxClientSessions = 16
	MaxMaxClientSessions     = 1024
	// ClientSessionShare divides max_client_sessions into the default
	// max_client_sessions_per_principal (at least 1).
	ClientSessionShare = 4
	DefaultListen      = "127.0.0.1:7777"
)

// DefaultClientSessionsPerPrincipal is the default
// max_client_sessions_per_principal of a server with max_client_sessions =
// sessions: a quarter of them (ClientSessionShare), at least one.
func DefaultClientSessionsPerPrincipal(sessions int) int {
	return max(sessions/ClientSessionShare, 1)
}

// Config is a loaded, validated configuration. Every field holds its
// effective value: defaults are filled in and durations are parsed.
type Config struct {
	// Filename is the name the file was loaded under (as given to Load).
	Filename string

	Listen string // `listen`: host:port of the HTTP API; default DefaultListen
	// PublicURLs is `public_urls`: the scheme://host[:port] origins the
	// WebShell and the API are reached at through a load balancer or a
	// reverse proxy, checked and normalised (no path, no trailing slash).
	PublicURLs []string
	// AppsSandboxURL is `apps_sandbox_url`: the origin that serves the MCP
	// App sandbox to a WebShell opened at one of PublicURLs that is not a
	// loopback name (checked and normalised as PublicURLs are); "" for none.
	AppsSandboxURL string
	DataDir        string     // `data_dir`: after ~ expansion, joined to Options.BaseDir when relative; default the XDG state dir
	LogLevel       slog.Level // `log_level`: "debug" | "info" | "warn" | "error"; default info

	// WatchConfig is `watch_config`: the daemon reloads its config file
	// when the file changes (as on SIGHUP); default false.
	WatchConfig bool

	// ApprovalTimeout is `approval_timeout`: how long a call paused by an
	// `ask` rule waits for an answer before it is denied; 0 leaves the
	// host's default, DefaultApprovalTimeout.
	ApprovalTimeout time.Duration
	// ElicitationTimeout is `elicitation_timeout`: how long a server's
	// question (elicitation) waits for the user; 0 (unset) means the
	// host's default, DefaultElicitationTimeout. Clamped to
	// [MinElicitationTimeout, MaxElicitationTimeout].
	ElicitationTimeout time.Duration

	// AppCompactAfter is `app_compact_after`: App records of calls older
	// than this are compacted; default DefaultAppCompactAfter, -1 never.
	AppCompactAfter time.Duration
	// AppCompactSessionBytes is `app_compact_session_bytes`: a session's
	// oldest App records are compacted while its App HTML is above it;
	// default DefaultAppCompactSessionBytes, -1 no bound.
	AppCompactSessionBytes int64

	// Store is the `store` block.
	Store StoreConfig

	Servers    []Server    // `server "NAME"` blocks, in file order
	Principals []Principal // `principal "NAME"` blocks, in file order

	// Gateway is the `gateway` block (defaults when there is none).
	Gateway Gateway

	// Telemetry is the `telemetry` block (traces off without one).
	Telemetry Telemetry

	// SearchEmbeddings is the `search_embeddings` block: the tool search's
	// embedding tier (off, the zero value, without one).
	SearchEmbeddings SearchEmbeddings

	// Sandbox is the top-level `sandbox` block: what every stdio server
	// gets of the machine. Each stdio server's Sandbox holds the result.
	Sandbox Sandbox

	// Admins is `admins`: principal and group names whose members are
	// admins. The daemon's generated owner is always an admin.
	Admins []string
	// OwnerRateLimit is the top-level `rate_limit` block, which also bounds
	// the owner; without one the owner has no limits.
	OwnerRateLimit RateLimit

	// PolicyDefault is the `policies { default }` effect: PolicyAllow
	// (default) or PolicyDeny.
	PolicyDefault string
	Policies      []Policy // `policy "NAME"` blocks, in file order
	// PolicySet is the compiled policies (nil when the load had errors; a
	// set without rules allows everything but what the default denies).
	PolicySet *policies.Set
	Plugins   []Plugin // `plugin "NAME"` blocks, in file order

	// Files maps each parsed file name to its source, for rendering
	// diagnostics with snippets (hcl.NewDiagnosticTextWriter).
	Files map[string]*hcl.File

	// Unset are the env() calls of variables that are not set, in file
	// order, when the load had Options.UnsetEnvUnknown (otherwise each is
	// an error). The attributes that read them are missing from this
	// Config: it must not serve while Unset is not empty.
	Unset []UnsetEnv
}

// SearchEmbeddings is the `search_embeddings` block: an OpenAI-compatible
// embeddings endpoint (POST URL with {"model", "input"}) whose vectors the
// tool search fuses with its lexical ranking by reciprocal rank. Off when
// URL is "".
type SearchEmbeddings struct {
	URL   string // `url`: the endpoint, such as "http://127.0.0.1:11434/v1/embeddings"
	Model string // `model`: the model the endpoint runs
	Token string // `token`: sent as a bearer token when set
}

// Telemetry is the `telemetry` block: OpenTelemetry traces, off (an empty
// OTLPEndpoint) by default.
type Telemetry struct {
	// OTLPEndpoint is `otlp_endpoint`: an http or https base URL of an
	// OTLP/HTTP collector, such as "http://127.0.0.1:4318"; traces are
	// posted to its /v1/traces (or to the URL's own path when it has one).
	OTLPEndpoint string
	// ServiceName is `service_name` (default "mcphost").
	ServiceName string
	// Pprof is `pprof`: the daemon serves Go's runtime profiles at
	// /debug/pprof/ to admins (default false). A reload applies it.
	Pprof bool
}

// StoreConfig is the `store` block: settings of the database in data_dir,
// read when the daemon opens it (a reload does not change them).
type StoreConfig struct {
	// Sync is `sync`: StoreSyncFull (default) or StoreSyncNormal. On
	// PostgreSQL it sets synchronous_commit (on or off).
	Sync string
	// Postgres is `postgres`: the DSN of a PostgreSQL database (a URL or
	// key=value string, as pgx reads it) that holds the store instead of
	// data_dir's SQLite file; "" for SQLite. It may hold a password: log it
	// only through store.RedactDSN.
	Postgres string
}

// Server is one `server "NAME"` block.
type Server struct {
	Name string

	// Transport is TransportStdio when `command` is set, TransportWasm
	// when `wasm` is, otherwise the `transport` attribute (default
	// TransportStreamableHTTP).
	Transport string

	// stdio
	Command      string            // `command`: program name (looked up in PATH) or path
	CommandRange hcl.Range         // the `command` value; empty when it is not set
	Args         []string          // `args`
	Env          map[string]string // `env`: added to the variables it inherits (InheritedEnv); never a reserved name
	Cwd          string            // `cwd`: working directory; a relative one is joined to Options.BaseDir (the config file's directory)
	// Sandbox is what a stdio (or wasm) server gets of the machine: the
	// top-level `sandbox` block with the server's own block merged over
	// it (zero for a remote server).
	Sandbox Sandbox

	// wasm: Args and Env above are the module's argv (after its name)
	// and environment.
	Wasm string // `wasm`: the .wasm file, absolute with symlinks resolved (relative to the config file as written)

	// remote
	URL     string            // `url`: http or https endpoint
	Headers map[string]string // `headers`: sent with every HTTP request
	// Auth is the `auth` block: OAuth for a remote server; nil without one.
	Auth *Auth

	// Roots is `roots`: file URIs answered to the server's roots/list
	// (absolute file:// URIs, checked at load); none by default, and then
	// roots are not advertised.
	Roots []string

	// SearchHint is `search_hint`: keywords the gateway's tool search
	// indexes with the server's tools; never shown to a client.
	SearchHint []string

	VersionNegotiation  string        // NegotiationLegacy (default) | NegotiationAuto
	StdioProbe          string        // StdioProbeSibling (default) | StdioProbeInPlace
	HTTPProbeTimeout    string        // HTTPProbeTimeoutFallback (default) | HTTPProbeTimeoutError
	DiscoveryTimeout    time.Duration // clamped to [MinDiscoveryTimeout, MaxDiscoveryTimeout]
	CallTimeout         time.Duration // per tools/call; default DefaultCallTimeout
	Apps                string        // AppsAuto (default) | AppsAdvertised | AppsOff
	AppResourceMaxBytes int           // default 1 MiB, at most MaxAppResourceMaxBytes (16 MiB); below 1 is clamped to 1
	AppResourceTimeout  time.Duration // default min(call_timeout, 10s), clamped to [100ms, 120s]
	Enabled             bool          // `enabled`: default true
	// MaxRestarts is `max_restarts`: after this many failed restarts in a
	// row the server stays failed; 0 (default) keeps trying.
	MaxRestarts int
	// RestartBackoffMax is `restart_backoff_max`: the longest wait between
	// restarts; default DefaultRestartBackoffMax.
	RestartBackoffMax time.Duration
	// SessionMode is `session_mode`: SessionShared (default: one upstream
	// session for every caller) or SessionPerClient (each legacy gateway
	// client gets upstream sessions of its own, so that what the server
	// asks during its calls reaches it).
	SessionMode string
	// MaxClientSessions is `max_client_sessions`: the cap on per-client
	// upstream sessions of this server; default DefaultMaxClientSessions.
	MaxClientSessions int
	// MaxClientSessionsPerPrincipal is `max_client_sessions_per_principal`:
	// how many of them one principal's clients may hold at once; default
	// [DefaultClientSessionsPerPrincipal] of MaxClientSessions.
	MaxClientSessionsPerPrincipal int
	// LogMessages is `log_messages`: LogMessagesOwn (default) or
	// LogMessagesAll, what becomes of a log message no call owns.
	LogMessages string
	// Placement is `placement`: PlacementReplica (default: every replica
	// of a cluster runs the server) or PlacementSingleton (only the
	// replica that holds the server's lock runs it; the others reach it
	// through that replica). A daemon with no cluster runs it either way.
	Placement string

	// What this server's Apps may ask the WebShell for; each false (denied)
	// by default. The host's App gate (host.appGate) reads them.
	AppToolCalls bool // `app_tool_calls`: App-initiated tools/call of this server's own tools
	AppOpenLinks bool // `app_open_links`: ui/open-link, http/https only, after the user confirms
	AppMessages  bool // `app_messages`: ui/message, recorded as an App message entry
	// `app_display_modes`: ui/request-display-mode may switch to fullscreen
	// or picture-in-picture (inline is always allowed).
	AppDisplayModes bool
	// `app_tools`: the WebShell lists the tools an App registers and lets
	// the user call them.
	AppTools bool
	// `app_resources`: resources/read from an App, of this server's
	// resources only.
	AppResources bool
	// `app_downloads`: ui/download-file, saved after the user confirms.
	AppDownloads bool
	// `app_model_context`: ui/update-model-context, kept with the App's
	// entry (replaced on each update, at most 64 KiB).
	AppModelContext bool
	// `app_csp_unsafe_eval`: the frame of this server's Apps gets
	// 'unsafe-eval' in its script-src (eval, new Function), which some
	// Apps need (three.js scenes, code playgrounds). False by default; only
	// this switch grants it, never an App's own metadata, and the WebShell
	// marks such a frame.
	AppCSPUnsafeEval bool

	NameRange hcl.Range // the label
	DeclRange hcl.Range // the block header
}

// Principal is one `principal "NAME"` block: a bearer token and its groups.
type Principal struct {
	Name   string
	Token  string
	Groups []string
	// APIOnly is `webshell = false`: the token cannot sign in to the
	// WebShell, so the principal's calls are always of origin "api".
	APIOnly bool
	// RateLimit is the principal's `rate_limit` block, else the top-level
	// one, else DefaultRateLimit.
	RateLimit RateLimit
	NameRange hcl.Range
	DeclRange hcl.Range
}

// RateLimit bounds one principal's requests to servers: tool calls and
// every other operation (reads, prompts, completions, subscriptions). A
// zero field is no bound.
type RateLimit struct {
	CallsPerSecond  float64 // sustained calls per second
	Burst           int     // calls allowed at once above the rate
	ConcurrentCalls int     // calls running at once
}

// Off reports whether the limit bounds nothing.
func (r RateLimit) Off() bool { return r.CallsPerSecond == 0 && r.ConcurrentCalls == 0 }

// DefaultRateLimit bounds a principal block without a `rate_limit` of its
// own or at the top level: generous for a person or an agent, a stop for a
// runaway loop.
var DefaultRateLimit = RateLimit{CallsPerSecond: 20, Burst: 40, ConcurrentCalls: 16}

// Policy effects and phases accepted by `policy` and `policies` blocks.
const (
	PolicyAllow = "allow"
	PolicyDeny  = "deny"
	PolicyAsk   = "ask"
)

// Policy is one `policy "NAME"` block, a CEL rule. The loader checks the
// phase and effect and compiles When (see policies.Compile); compile errors
// are diagnostics inside the `when` string.
type Policy struct {
	Name    string
	Phase   string // list | call | result | app
	Effect  string // allow | deny | ask
	When    string // the CEL expression
	Message string // shown when the rule denies or asks; may be ""
	// Ops are the operations the rule governs (policies.Ops); empty means
	// the phase's default: tool listing for list, tool calls for call.
	Ops []string
	// Approvers are `approvers`: the principal and group names whose
	// members may answer an ask rule (matched as Admins are); empty means
	// the caller answers.
	Approvers []string

	NameRange hcl.Range
	OpsRange  hcl.Range // the `ops` value; empty when it is not set
	DeclRange hcl.Range
	WhenRange hcl.Range // the `when` value, quotes included
	// ApproversRange is the `approvers` value; empty when it is not set.
	ApproversRange hcl.Range

	// whenPos maps a byte offset in When to its position in the file.
	whenPos func(offset int) hcl.Pos
	// whenFrom names the env() and file() calls When was read from
	// (sourcesPhrase), "" when it is written in the file.
	whenFrom string
}

// WhenPos returns the position in the configuration file of the byte at
// offset in When; the start of the `when` value when the mapping is unknown.
func (p *Policy) WhenPos(offset int) hcl.Pos {
	if p.whenPos == nil || offset < 0 {
		return p.WhenRange.Start
	}
	return p.whenPos(offset)
}

// Plugin stages and error modes accepted by `plugin` blocks.
const (
	PluginStageResult  = "result"
	PluginStageDisplay = "display"
	PluginOnErrorFail  = "fail"
	PluginOnErrorSkip  = "skip"
)

// Defaults and bounds of plugin attributes.
const (
	DefaultPluginTimeout     = 250 * time.Millisecond
	MaxPluginTimeout         = 60 * time.Second
	DefaultPluginMemoryLimit = 64 << 20
	MinPluginMemoryLimit     = 1 << 20
	MaxPluginMemoryLimit     = 4 << 30
	DefaultPluginPoolSize    = 4
	MaxPluginPoolSize        = 64
)

// Plugin is one `plugin "NAME"` block. The loader checks the attributes;
// compiling the module and checking its exports is the host's job
// (boot.CheckPlugins), which reports problems at PathRange.
type Plugin struct {
	Name        string
	Path        string            // absolute, or relative to the process when the config was parsed from memory
	Stages      []string          // PluginStageResult, PluginStageDisplay; no duplicates
	Servers     []string          // glob patterns on server names; default ["*"]
	Tools       []string          // glob patterns on tool names; default ["*"]
	Config      map[string]string // strings as written, other values JSON-encoded
	Timeout     time.Duration     // per call; default 250ms, (0, 60s]
	MemoryLimit uint64            // bytes; default 64 MiB, [1 MiB, 4 GiB]
	PoolSize    int               // default 4, [1, 64]
	OnError     string            // PluginOnErrorFail (default) | PluginOnErrorSkip

	NameRange   hcl.Range
	DeclRange   hcl.Range
	PathRange   hcl.Range // the `path` value (or the block header when absent)
	StagesRange hcl.Range
}

// Server returns the server block with the given name, or nil.
func (c *Config) Server(name string) *Server {
	for i := range c.Servers {
		if c.Servers[i].Name == name {
			return &c.Servers[i]
		}
	}
	return nil
}
