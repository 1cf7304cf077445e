package config

import "github.com/hashicorp/hcl/v2"

// The structs in this file are the gohcl schema of the file format. Every
// attribute is an [hcl.Expression], so the loader evaluates each one itself:
// a failed env() call then gives one diagnostic instead of a second
// "Unsuitable value type" one, and a missing attribute decodes as a null
// expression. The range fields are filled only when the attribute is present;
// a zero [hcl.Range] means "not set".

// fileSchema is the top level of a configuration file.
type fileSchema struct {
	// listen: host:port of the HTTP API. Default "127.0.0.1:7777".
	Listen      hcl.Expression `hcl:"listen,optional"`
	ListenRange hcl.Range      `hcl:"listen,attr_value_range"`

	// public_urls: the URLs the WebShell and the API are reached at through
	// a load balancer or a reverse proxy ("https://mcphost.example.com"),
	// besides the loopback names of listen.
	PublicURLs      hcl.Expression `hcl:"public_urls,optional"`
	PublicURLsRange hcl.Range      `hcl:"public_urls,attr_value_range"`

	// apps_sandbox_url: the origin, another host name of the same daemon
	// (or balancer), that MCP Apps' sandbox is served at for a WebShell
	// opened at a public URL that is not a loopback name.
	AppsSandboxURL      hcl.Expression `hcl:"apps_sandbox_url,optional"`
	AppsSandboxURLRange hcl.Range      `hcl:"apps_sandbox_url,attr_value_range"`

	// data_dir: where the database lives. "~/" expands to the home directory,
	// a relative path is relative to the configuration file's directory.
	DataDir      hcl.Expression `hcl:"data_dir,optional"`
	DataDirRange hcl.Range      `hcl:"data_dir,attr_value_range"`

	// log_level: "debug" | "info" | "warn" | "error". Default "info".
	LogLevel      hcl.Expression `hcl:"log_level,optional"`
	LogLevelRange hcl.Range      `hcl:"log_level,attr_value_range"`

	// watch_config: the daemon reloads this file when it changes, as on
	// SIGHUP (default false).
	WatchConfig hcl.Expression `hcl:"watch_config,optional"`

	// elicitation_timeout: how long a server's question waits for the
	// user's answer before the server gets "cancel" (default "2m").
	ElicitationTimeout      hcl.Expression `hcl:"elicitation_timeout,optional"`
	ElicitationTimeoutRange hcl.Range      `hcl:"elicitation_timeout,attr_value_range"`
	// approval_timeout: how long a call paused by an `ask` rule waits for
	// a person's answer.
	ApprovalTimeout      hcl.Expression `hcl:"approval_timeout,optional"`
	ApprovalTimeoutRange hcl.Range      `hcl:"approval_timeout,attr_value_range"`

	// app_compact_after: App display records of calls older than this lose
	// their HTML (default "168h"; "off" never).
	AppCompactAfter      hcl.Expression `hcl:"app_compact_after,optional"`
	AppCompactAfterRange hcl.Range      `hcl:"app_compact_after,attr_value_range"`

	// app_compact_session_bytes: bound on one session's App HTML; its
	// oldest records are compacted above it (default 16 MiB; 0: no bound).
	AppCompactSessionBytes      hcl.Expression `hcl:"app_compact_session_bytes,optional"`
	AppCompactSessionBytesRange hcl.Range      `hcl:"app_compact_session_bytes,attr_value_range"`

	// admins: principal or group names that see everything: every server
	// with its process details, every principal's figures, /metrics.
	Admins      hcl.Expression `hcl:"admins,optional"`
	AdminsRange hcl.Range      `hcl:"admins,attr_value_range"`

	// rate_limit: the call limits of every principal block without its own
	// (and of the owner, who has none otherwise).
	RateLimit []*rateLimitBlock `hcl:"rate_limit,block"`

	Servers    []*serverBlock    `hcl:"server,block"`
	Principals []*principalBlock `hcl:"principal,block"`

	// gateway: mcphost as an MCP server for clients and agents (/mcp).
	Gateway []*gatewayBlock `hcl:"gateway,block"`

	Policies []*policiesBlock `hcl:"policies,block"`
	Policy   []*policyBlock   `hcl:"policy,block"`
	Plugins  []*pluginBlock   `hcl:"plugin,block"`

	// store: settings of the database in data_dir; at most one.
	Store []*storeBlock `hcl:"store,block"`

	Telemetry []*telemetryBlock `hcl:"telemetry,block"`

	// search_embeddings: an embedding model for the tool search; at most
	// one.
	SearchEmbeddings []*searchEmbeddingsBlock `hcl:"search_embeddings,block"`

	// sandbox: what every stdio server gets of the machine (defaults that
	// a server's own sandbox block overrides); at most one.
	Sandbox []*sandboxBlock `hcl:"sandbox,block"`
}

// serverBlock is one `server "NAME"` block.
type serverBlock struct {
	Name      string    `hcl:"name,label"`
	NameRange hcl.Range `hcl:"name,label_range"`
	DeclRange hcl.Range `hcl:",def_range"`

	// stdio: command runs a local program, args are its arguments, env is
	// its environment on top of the variables it inherits from the
	// daemon's (see sandbox), cwd is its working directory.
	Command      hcl.Expression `hcl:"command,optional"`
	CommandRange hcl.Range      `hcl:"command,attr_value_range"`
	CommandAttr  hcl.Range      `hcl:"command,attr_range"`
	Args         hcl.Expression `hcl:"args,optional"`
	ArgsAttr     hcl.Range      `hcl:"args,attr_range"`
	Env          hcl.Expression `hcl:"env,optional"`
	EnvAttr      hcl.Range      `hcl:"env,attr_range"`
	Cwd          hcl.Expression `hcl:"cwd,optional"`
	CwdRange     hcl.Range      `hcl:"cwd,attr_value_range"`
	CwdAttr      hcl.Range      `hcl:"cwd,attr_range"`
	// sandbox: what this stdio (or wasm) server gets of the machine, over
	// what the top-level sandbox block gives every one (at most one block).
	Sandbox []*sandboxBlock `hcl:"sandbox,block"`

	// wasm: a WebAssembly MCP server that mcphost runs in-process: the
	// .wasm file, relative to the configuration file. args and env are
	// the module's argv (after its name) and environment.
	Wasm      hcl.Expression `hcl:"wasm,optional"`
	WasmRange hcl.Range      `hcl:"wasm,attr_value_range"`
	WasmAttr  hcl.Range      `hcl:"wasm,attr_range"`

	// remote: url is the endpoint, transport picks Streamable HTTP (default)
	// or the old HTTP+SSE transport, headers go with every request.
	URL            hcl.Expression `hcl:"url,optional"`
	URLRange       hcl.Range      `hcl:"url,attr_value_range"`
	URLAttr        hcl.Range      `hcl:"url,attr_range"`
	Transport      hcl.Expression `hcl:"transport,optional"`
	TransportRange hcl.Range      `hcl:"transport,attr_value_range"`
	TransportAttr  hcl.Range      `hcl:"transport,attr_range"`
	Headers        hcl.Expression `hcl:"headers,optional"`
	HeadersAttr    hcl.Range      `hcl:"headers,attr_range"`
	// auth: OAuth for a remote server (at most one block).
	Auth []*authBlock `hcl:"auth,block"`

	// roots: file URIs the server may work in (answered to roots/list);
	// none by default.
	Roots      hcl.Expression `hcl:"roots,optional"`
	RootsRange hcl.Range      `hcl:"roots,attr_value_range"`

	// search_hint: keywords the gateway's tool search indexes with the
	// server's tools (never shown).
	SearchHint      hcl.Expression `hcl:"search_hint,optional"`
	SearchHintRange hcl.Range      `hcl:"search_hint,attr_value_range"`

	// version_negotiation: "legacy" (default) | "auto".
	VersionNegotiation      hcl.Expression `hcl:"version_negotiation,optional"`
	VersionNegotiationRange hcl.Range      `hcl:"version_negotiation,attr_value_range"`

	// stdio_probe: "sibling" (default) | "in_place"; stdio servers only.
	StdioProbe      hcl.Expression `hcl:"stdio_probe,optional"`
	StdioProbeRange hcl.Range      `hcl:"stdio_probe,attr_value_range"`
	StdioProbeAttr  hcl.Range      `hcl:"stdio_probe,attr_range"`

	// http_probe_timeout: "fallback" (default) | "error"; Streamable HTTP only.
	HTTPProbeTimeout      hcl.Expression `hcl:"http_probe_timeout,optional"`
	HTTPProbeTimeoutRange hcl.Range      `hcl:"http_probe_timeout,attr_value_range"`

	// apps: "auto" (default) | "advertised" | "off" — which MCP Apps render.
	Apps      hcl.Expression `hcl:"apps,optional"`
	AppsRange hcl.Range      `hcl:"apps,attr_value_range"`

	// app_resource_max_bytes: cap on an App's HTML: a number of bytes or a
	// size such as "16MiB"; at most 16 MiB (more is an error).
	AppResourceMaxBytes      hcl.Expression `hcl:"app_resource_max_bytes,optional"`
	AppResourceMaxBytesRange hcl.Range      `hcl:"app_resource_max_bytes,attr_value_range"`

	// app_resource_timeout: deadline of the App resource read, clamped to [100ms, 120s].
	AppResourceTimeout      hcl.Expression `hcl:"app_resource_timeout,optional"`
	AppResourceTimeoutRange hcl.Range      `hcl:"app_resource_timeout,attr_value_range"`

	// app_tool_calls, app_open_links, app_messages: what this server's Apps
	// may ask the WebShell for (App-initiated tools/call, ui/open-link,
	// ui/message). Each is false (denied) by default.
	AppToolCalls hcl.Expression `hcl:"app_tool_calls,optional"`
	AppOpenLinks hcl.Expression `hcl:"app_open_links,optional"`
	AppMessages  hcl.Expression `hcl:"app_messages,optional"`
	// app_display_modes, app_tools: whether this server's Apps may leave
	// the inline frame (ui/request-display-mode: fullscreen,
	// picture-in-picture) and offer tools of their own that the user can
	// call from the WebShell. Each is false (denied) by default.
	AppDisplayModes hcl.Expression `hcl:"app_display_modes,optional"`
	AppTools        hcl.Expression `hcl:"app_tools,optional"`
	// app_resources: whether this server's Apps may read its resources
	// (resources/read, this server's only). False by default.
	AppResources hcl.Expression `hcl:"app_resources,optional"`
	// app_downloads: whether this server's Apps may offer files for the
	// user to save (ui/download-file, after the user confirms). False by
	// default.
	AppDownloads hcl.Expression `hcl:"app_downloads,optional"`
	// app_model_context: whether this server's Apps may give context for
	// the model (ui/update-model-context), kept with their entry. False by
	// default.
	AppModelContext hcl.Expression `hcl:"app_model_context,optional"`
	// app_csp_unsafe_eval: whether this server's Apps may evaluate strings
	// as code ('unsafe-eval' in their frame's script-src). False by
	// default.
	AppCSPUnsafeEval hcl.Expression `hcl:"app_csp_unsafe_eval,optional"`

	// discovery_timeout: budget for version discovery, clamped to [100ms, 300s].
	DiscoveryTimeout      hcl.Expression `hcl:"discovery_timeout,optional"`
	DiscoveryTimeoutRange hcl.Range      `hcl:"discovery_timeout,attr_value_range"`

	// call_timeout: bound on one tools/call. Default 10m.
	CallTimeout      hcl.Expression `hcl:"call_timeout,optional"`
	CallTimeoutRange hcl.Range      `hcl:"call_timeout,attr_value_range"`

	// max_restarts: after this many restarts in a row that fail, the server
	// stays failed (0, the default: keep trying).
	MaxRestarts      hcl.Expression `hcl:"max_restarts,optional"`
	MaxRestartsRange hcl.Range      `hcl:"max_restarts,attr_value_range"`
	// restart_backoff_max: the longest wait between restarts (default 5m).
	RestartBackoffMax      hcl.Expression `hcl:"restart_backoff_max,optional"`
	RestartBackoffMaxRange hcl.Range      `hcl:"restart_backoff_max,attr_value_range"`

	// session_mode: "shared" (default) | "per_client": upstream sessions
	// of their own for the gateway's legacy clients.
	SessionMode      hcl.Expression `hcl:"session_mode,optional"`
	SessionModeRange hcl.Range      `hcl:"session_mode,attr_value_range"`
	// max_client_sessions: the cap on per-client upstream sessions.
	MaxClientSessions      hcl.Expression `hcl:"max_client_sessions,optional"`
	MaxClientSessionsRange hcl.Range      `hcl:"max_client_sessions,attr_value_range"`
	// max_client_sessions_per_principal: how many of them one principal's
	// clients may hold (default a quarter of max_client_sessions, at least 1).
	MaxClientSessionsPerPrincipal      hcl.Expression `hcl:"max_client_sessions_per_principal,optional"`
	MaxClientSessionsPerPrincipalRange hcl.Range      `hcl:"max_client_sessions_per_principal,attr_value_range"`
	// log_messages: "own" (default) | "all": whether a log message that no
	// call owns reaches every gateway client with a call running.
	LogMessages      hcl.Expression `hcl:"log_messages,optional"`
	LogMessagesRange hcl.Range      `hcl:"log_messages,attr_value_range"`

	// placement: "replica" (default) | "singleton": with several replicas,
	// run the server on one of them and forward to it from the others.
	Placement      hcl.Expression `hcl:"placement,optional"`
	PlacementRange hcl.Range      `hcl:"placement,attr_value_range"`

	// enabled: false keeps the block but does not start the server.
	Enabled hcl.Expression `hcl:"enabled,optional"`
}

// principalBlock is one `principal "NAME"` block.
type principalBlock struct {
	Name      string    `hcl:"name,label"`
	NameRange hcl.Range `hcl:"name,label_range"`
	DeclRange hcl.Range `hcl:",def_range"`

	// token: the bearer token that authenticates this principal. Required.
	Token      hcl.Expression `hcl:"token,optional"`
	TokenRange hcl.Range      `hcl:"token,attr_value_range"`

	// groups: group names policies can refer to.
	Groups hcl.Expression `hcl:"groups,optional"`

	// webshell: false keeps the principal to the API: its token cannot be
	// exchanged for a WebShell credential (origin "user"). Default true.
	WebShell hcl.Expression `hcl:"webshell,optional"`

	// rate_limit: this principal's call limits (instead of the top-level ones).
	RateLimit []*rateLimitBlock `hcl:"rate_limit,block"`
}

// rateLimitBlock is a `rate_limit` block: bounds on one principal's calls.
type rateLimitBlock struct {
	DeclRange hcl.Range `hcl:",def_range"`

	// calls_per_second: the sustained rate of calls (0: no rate bound).
	CallsPerSecond      hcl.Expression `hcl:"calls_per_second,optional"`
	CallsPerSecondRange hcl.Range      `hcl:"calls_per_second,attr_value_range"`
	// burst: how many calls may come at once above the rate (default twice
	// the rate, at least 1).
	Burst      hcl.Expression `hcl:"burst,optional"`
	BurstRange hcl.Range      `hcl:"burst,attr_value_range"`
	// concurrent_calls: calls running at once (0: no bound).
	ConcurrentCalls      hcl.Expression `hcl:"concurrent_calls,optional"`
	ConcurrentCallsRange hcl.Range      `hcl:"concurrent_calls,attr_value_range"`
}

// storeBlock is the `store` block: settings of the database in data_dir.
type storeBlock struct {
	DeclRange hcl.Range `hcl:",def_range"`

	// sync: "full" (default) | "normal" — whether every commit is fsynced.
	Sync      hcl.Expression `hcl:"sync,optional"`
	SyncRange hcl.Range      `hcl:"sync,attr_value_range"`

	// postgres: a PostgreSQL DSN (usually env("DATABASE_URL")); when set,
	// the store lives there instead of in data_dir's SQLite file.
	Postgres      hcl.Expression `hcl:"postgres,optional"`
	PostgresRange hcl.Range      `hcl:"postgres,attr_value_range"`
}

// searchEmbeddingsBlock is the `search_embeddings` block: an
// OpenAI-compatible embeddings endpoint whose vectors the tool search fuses
// with its lexical ranking.
type searchEmbeddingsBlock struct {
	DeclRange hcl.Range `hcl:",def_range"`

	URL        hcl.Expression `hcl:"url,optional"`
	URLRange   hcl.Range      `hcl:"url,attr_value_range"`
	Model      hcl.Expression `hcl:"model,optional"`
	ModelRange hcl.Range      `hcl:"model,attr_value_range"`
	Token      hcl.Expression `hcl:"token,optional"`
}

// telemetryBlock is the `telemetry` block: where traces go.
type telemetryBlock struct {
	DeclRange hcl.Range `hcl:",def_range"`

	// otlp_endpoint: the OTLP/HTTP collector's base URL (traces go to
	// its /v1/traces).
	OTLPEndpoint      hcl.Expression `hcl:"otlp_endpoint,optional"`
	OTLPEndpointRange hcl.Range      `hcl:"otlp_endpoint,attr_value_range"`
	// service_name: the resource's service.name (default "mcphost").
	ServiceName      hcl.Expression `hcl:"service_name,optional"`
	ServiceNameRange hcl.Range      `hcl:"service_name,attr_value_range"`
	// pprof: serve Go's profiles at /debug/pprof/ to admins.
	Pprof hcl.Expression `hcl:"pprof,optional"`
}

// policiesBlock is the `policies` block: settings of the policy set.
type policiesBlock struct {
	DeclRange hcl.Range `hcl:",def_range"`

	// default: "allow" (default) | "deny" — the effect when no rule matches.
	Default      hcl.Expression `hcl:"default,optional"`
	DefaultRange hcl.Range      `hcl:"default,attr_value_range"`
}

// policyBlock is one `policy "NAME"` block: a CEL rule.
type policyBlock struct {
	Name      string    `hcl:"name,label"`
	NameRange hcl.Range `hcl:"name,label_range"`
	DeclRange hcl.Range `hcl:",def_range"`

	// phase: "list" | "call" | "result" | "app". Required.
	Phase      hcl.Expression `hcl:"phase,optional"`
	PhaseRange hcl.Range      `hcl:"phase,attr_value_range"`

	// effect: "allow" | "deny" | "ask" (ask: call phase only). Required.
	Effect      hcl.Expression `hcl:"effect,optional"`
	EffectRange hcl.Range      `hcl:"effect,attr_value_range"`

	// when: a CEL boolean expression. Required.
	When      hcl.Expression `hcl:"when,optional"`
	WhenRange hcl.Range      `hcl:"when,attr_value_range"`

	// message: shown to the user when the rule denies or asks.
	Message hcl.Expression `hcl:"message,optional"`

	// ops: the operations the rule governs (default: "tools/list" for
	// list rules, "tools/call" for call rules).
	Ops      hcl.Expression `hcl:"ops,optional"`
	OpsRange hcl.Range      `hcl:"ops,attr_value_range"`

	// approvers: who may answer an ask rule, principal or group names
	// (default: the caller).
	Approvers      hcl.Expression `hcl:"approvers,optional"`
	ApproversRange hcl.Range      `hcl:"approvers,attr_value_range"`
}

// pluginBlock is one `plugin "NAME"` block: a WebAssembly plugin.
type pluginBlock struct {
	Name      string    `hcl:"name,label"`
	NameRange hcl.Range `hcl:"name,label_range"`
	DeclRange hcl.Range `hcl:",def_range"`

	// path: the .wasm file, relative to the configuration file. Required.
	Path      hcl.Expression `hcl:"path,optional"`
	PathRange hcl.Range      `hcl:"path,attr_value_range"`

	// stages: a non-empty subset of ["result", "display"]. Required.
	Stages      hcl.Expression `hcl:"stages,optional"`
	StagesRange hcl.Range      `hcl:"stages,attr_value_range"`

	// servers, tools: glob patterns; default ["*"].
	Servers      hcl.Expression `hcl:"servers,optional"`
	ServersRange hcl.Range      `hcl:"servers,attr_value_range"`
	Tools        hcl.Expression `hcl:"tools,optional"`
	ToolsRange   hcl.Range      `hcl:"tools,attr_value_range"`

	// config: an object passed to the plugin as its Extism config.
	Config      hcl.Expression `hcl:"config,optional"`
	ConfigRange hcl.Range      `hcl:"config,attr_value_range"`

	// timeout: per call, default 250ms. memory_limit: default "64MiB".
	Timeout          hcl.Expression `hcl:"timeout,optional"`
	TimeoutRange     hcl.Range      `hcl:"timeout,attr_value_range"`
	MemoryLimit      hcl.Expression `hcl:"memory_limit,optional"`
	MemoryLimitRange hcl.Range      `hcl:"memory_limit,attr_value_range"`

	// pool_size: warm instances, default 4.
	PoolSize      hcl.Expression `hcl:"pool_size,optional"`
	PoolSizeRange hcl.Range      `hcl:"pool_size,attr_value_range"`

	// on_error: "fail" (default) | "skip".
	OnError      hcl.Expression `hcl:"on_error,optional"`
	OnErrorRange hcl.Range      `hcl:"on_error,attr_value_range"`
}

// gatewayBlock is the `gateway` block: whether /mcp is served, which servers
// it fronts, and named endpoints over subsets of them.
type gatewayBlock struct {
	DeclRange hcl.Range `hcl:",def_range"`

	// enabled: serve /mcp (default true).
	Enabled      hcl.Expression `hcl:"enabled,optional"`
	EnabledRange hcl.Range      `hcl:"enabled,attr_value_range"`
	// servers: the servers the gateway fronts (default every server).
	Servers      hcl.Expression `hcl:"servers,optional"`
	ServersRange hcl.Range      `hcl:"servers,attr_value_range"`
	// session_timeout: how long an idle legacy (2025-11-25) MCP session
	// lives (default "30m").
	SessionTimeout      hcl.Expression `hcl:"session_timeout,optional"`
	SessionTimeoutRange hcl.Range      `hcl:"session_timeout,attr_value_range"`
	// max_sessions_per_principal, max_sessions: the caps on open legacy
	// sessions (defaults 64 and 4096).
	MaxSessionsPerPrincipal      hcl.Expression `hcl:"max_sessions_per_principal,optional"`
	MaxSessionsPerPrincipalRange hcl.Range      `hcl:"max_sessions_per_principal,attr_value_range"`
	MaxSessions                  hcl.Expression `hcl:"max_sessions,optional"`
	MaxSessionsRange             hcl.Range      `hcl:"max_sessions,attr_value_range"`
	// discovery: "list" (default) | "search" | "auto"; discovery_threshold:
	// the size of a caller's tool definitions past which "auto" searches
	// (default "48KiB"); pin: SERVER__TOOL names listed beside the
	// meta-tools in search mode.
	Discovery               hcl.Expression `hcl:"discovery,optional"`
	DiscoveryRange          hcl.Range      `hcl:"discovery,attr_value_range"`
	DiscoveryThreshold      hcl.Expression `hcl:"discovery_threshold,optional"`
	DiscoveryThresholdRange hcl.Range      `hcl:"discovery_threshold,attr_value_range"`
	Pin                     hcl.Expression `hcl:"pin,optional"`
	PinRange                hcl.Range      `hcl:"pin,attr_value_range"`

	Endpoints []*endpointBlock `hcl:"endpoint,block"`
}

// endpointBlock is one `endpoint "NAME"` block of the gateway: an aggregate
// endpoint at /mcp/endpoints/NAME over a subset of the servers.
type endpointBlock struct {
	Name      string    `hcl:"name,label"`
	NameRange hcl.Range `hcl:"name,label_range"`
	DeclRange hcl.Range `hcl:",def_range"`

	Servers      hcl.Expression `hcl:"servers,optional"`
	ServersRange hcl.Range      `hcl:"servers,attr_value_range"`

	// discovery, pin: as on the gateway block, for this endpoint.
	Discovery      hcl.Expression `hcl:"discovery,optional"`
	DiscoveryRange hcl.Range      `hcl:"discovery,attr_value_range"`
	Pin            hcl.Expression `hcl:"pin,optional"`
	PinRange       hcl.Range      `hcl:"pin,attr_value_range"`
}
