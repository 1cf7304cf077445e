package config

import (
	"log/slog"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// Transport names accepted by the `transport` attribute of a server block.
const (
	TransportStdio          = "stdio"           // implied by `command`
	TransportStreamableHTTP = "streamable_http" // default for `url`
	TransportSSE            = "sse"             // the deprecated 2024-11-05 HTTP+SSE transport
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

// Bounds of the App resource settings.
const (
	DefaultAppResourceMaxBytes = 1 << 20
	MaxAppResourceMaxBytes     = 4 << 20
	MinAppResourceTimeout      = 100 * time.Millisecond
	MaxAppResourceTimeout      = 120 * time.Second
	DefaultAppResourceTimeout  = 10 * time.Second // or call_timeout when shorter
)

// Defaults and bounds for server timing attributes.
const (
	DefaultDiscoveryTimeout = 30 * time.Second
	MinDiscoveryTimeout     = 100 * time.Millisecond
	MaxDiscoveryTimeout     = 300 * time.Second
	DefaultCallTimeout      = 10 * time.Minute
	DefaultListen           = "127.0.0.1:7777"
)

// Config is a loaded, validated configuration. Every field holds its
// effective value: defaults are filled in and durations are parsed.
type Config struct {
	// Filename is the name the file was loaded under (as given to Load).
	Filename string

	Listen   string     // `listen`: host:port of the HTTP API; default DefaultListen
	DataDir  string     // `data_dir`: after ~ expansion, joined to Options.BaseDir when relative; default the XDG state dir
	LogLevel slog.Level // `log_level`: "debug" | "info" | "warn" | "error"; default info

	Servers    []Server    // `server "NAME"` blocks, in file order
	Principals []Principal // `principal "NAME"` blocks, in file order

	// Files maps each parsed file name to its source, for rendering
	// diagnostics with snippets (hcl.NewDiagnosticTextWriter).
	Files map[string]*hcl.File
}

// Server is one `server "NAME"` block.
type Server struct {
	Name string

	// Transport is TransportStdio when `command` is set, otherwise the
	// `transport` attribute (default TransportStreamableHTTP).
	Transport string

	// stdio
	Command string            // `command`: program name (looked up in PATH) or path
	Args    []string          // `args`
	Env     map[string]string // `env`: added to the daemon's environment
	Cwd     string            // `cwd`: working directory; a relative one is joined to Options.BaseDir (the config file's directory)

	// remote
	URL     string            // `url`: http or https endpoint
	Headers map[string]string // `headers`: sent with every HTTP request

	VersionNegotiation  string        // NegotiationLegacy (default) | NegotiationAuto
	StdioProbe          string        // StdioProbeSibling (default) | StdioProbeInPlace
	HTTPProbeTimeout    string        // HTTPProbeTimeoutFallback (default) | HTTPProbeTimeoutError
	DiscoveryTimeout    time.Duration // clamped to [MinDiscoveryTimeout, MaxDiscoveryTimeout]
	CallTimeout         time.Duration // per tools/call; default DefaultCallTimeout
	Apps                string        // AppsAuto (default) | AppsAdvertised | AppsOff
	AppResourceMaxBytes int           // default 1 MiB, clamped to [1, 4 MiB]
	AppResourceTimeout  time.Duration // default min(call_timeout, 10s), clamped to [100ms, 120s]
	Enabled             bool          // `enabled`: default true

	NameRange hcl.Range // the label
	DeclRange hcl.Range // the block header
}

// Principal is one `principal "NAME"` block: a bearer token and its groups.
type Principal struct {
	Name      string
	Token     string
	Groups    []string
	NameRange hcl.Range
	DeclRange hcl.Range
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
