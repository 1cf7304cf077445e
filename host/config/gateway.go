package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// Bounds of the gateway's legacy session timeout.
const (
	DefaultGatewaySessionTimeout = 30 * time.Minute
	MinGatewaySessionTimeout     = 10 * time.Second
	MaxGatewaySessionTimeout     = 7 * 24 * time.Hour
)

// Bounds of the gateway's open legacy sessions. Each one holds memory and
// goroutines until it is deleted or idle for session_timeout, so a client
// that opens them in a loop must hit a limit (research/redteam.md F6).
const (
	DefaultGatewayMaxSessionsPerPrincipal = 64
	DefaultGatewayMaxSessions             = 4096
	MaxGatewayMaxSessions                 = 1 << 20
)

// Gateway is the `gateway` block: mcphost as an MCP server.
type Gateway struct {
	// Enabled is `enabled`; default true. The daemon serves /mcp only to
	// callers with a token (a principal's or the owner's), so the default
	// opens nothing to an anonymous client.
	Enabled bool
	// Servers is `servers`: the servers /mcp fronts, in config order; nil
	// means every server.
	Servers []string
	// SessionTimeout is `session_timeout`: an idle legacy MCP session ends
	// after it.
	SessionTimeout time.Duration
	// MaxSessionsPerPrincipal is `max_sessions_per_principal`: how many
	// legacy MCP sessions one principal may have open at once; default
	// DefaultGatewayMaxSessionsPerPrincipal.
	MaxSessionsPerPrincipal int
	// MaxSessions is `max_sessions`: how many legacy MCP sessions the
	// daemon (each replica) holds open at once; default
	// DefaultGatewayMaxSessions.
	MaxSessions int
	// Endpoints are the `endpoint "NAME"` blocks, in file order.
	Endpoints []GatewayEndpoint
	// Discovery is `discovery`: how /mcp answers tools/list (DiscoveryList,
	// the default, DiscoverySearch or DiscoveryAuto).
	Discovery string
	// DiscoveryThreshold is `discovery_threshold`: in DiscoveryAuto, the
	// size in bytes of a caller's listed tool definitions past which it
	// gets the meta-tools; default DefaultDiscoveryThreshold.
	DiscoveryThreshold int
	// Pin is `pin`: the SERVER__TOOL names listed beside the meta-tools in
	// search mode, in the order given.
	Pin []string
}

// The values of `discovery`.
const (
	DiscoveryList   = "list"   // every tool of the caller's view is listed
	DiscoverySearch = "search" // the meta-tools and the pinned tools are listed
	DiscoveryAuto   = "auto"   // search when the view's definitions are large
)

// DefaultDiscoveryThreshold is the default `discovery_threshold`: about
// 12k tokens of tool definitions, a tenth of a 128k context window.
const DefaultDiscoveryThreshold = 48 << 10

// MaxDiscoveryThreshold bounds `discovery_threshold`.
const MaxDiscoveryThreshold = 1 << 30

// GatewayEndpoint is a named aggregate endpoint, /mcp/endpoints/NAME.
type GatewayEndpoint struct {
	Name      string
	Servers   []string
	NameRange hcl.Range
	// Discovery and Pin are the endpoint's own `discovery` and `pin`;
	// empty (nil) means the gateway block's.
	Discovery string
	Pin       []string
}

// DiscoveryOf returns the discovery mode and pins of the endpoint named
// name ("" for /mcp and the per-server endpoints, which follow the
// gateway block).
func (g Gateway) DiscoveryOf(name string) (mode string, pin []string) {
	mode, pin = g.Discovery, g.Pin
	if mode == "" {
		mode = DiscoveryList
	}
	for _, e := range g.Endpoints {
		if e.Name != name || name == "" {
			continue
		}
		if e.Discovery != "" {
			mode = e.Discovery
		}
		if e.Pin != nil {
			pin = e.Pin
		}
	}
	return mode, pin
}

// Serves reports whether the gateway fronts server.
func (g Gateway) Serves(server string) bool {
	if g.Servers == nil {
		return true
	}
	for _, s := range g.Servers {
		if s == server {
			return true
		}
	}
	return false
}

// endpointNameRE is the rule for endpoint names: a URL path segment.
var endpointNameRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_-]{0,63}$`)

// decodeGateway decodes the `gateway` block (at most one) once the servers
// are known, so that every server it names is checked.
func (l *loader) decodeGateway(cfg *Config, blocks []*gatewayBlock) {
	cfg.Gateway = Gateway{Enabled: true, SessionTimeout: DefaultGatewaySessionTimeout,
		MaxSessionsPerPrincipal: DefaultGatewayMaxSessionsPerPrincipal, MaxSessions: DefaultGatewayMaxSessions,
		Discovery: DiscoveryList, DiscoveryThreshold: DefaultDiscoveryThreshold}
	if len(blocks) == 0 {
		return
	}
	for _, b := range blocks[1:] {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Duplicate gateway block",
			Detail:   fmt.Sprintf("The configuration already has a gateway block at %s. Merge the two into one.", fileLine(blocks[0].DeclRange)),
			Subject:  b.DeclRange.Ptr(),
		})
	}
	b := blocks[0]
	if v, st := l.evalBool(b.Enabled, "enabled"); st == valid {
		cfg.Gateway.Enabled = v
	}
	if names, st := l.evalStringList(b.Servers, "servers"); st == valid {
		cfg.Gateway.Servers = l.checkServerNames(cfg, names, b.ServersRange, "gateway")
	}
	if d, st := l.evalDuration(b.SessionTimeout, "session_timeout", b.SessionTimeoutRange); st == valid {
		if d < MinGatewaySessionTimeout || d > MaxGatewaySessionTimeout {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid session_timeout",
				Detail: fmt.Sprintf("session_timeout must be from %s to %s; an idle legacy MCP session ends after it.",
					durationText(MinGatewaySessionTimeout), durationText(MaxGatewaySessionTimeout)),
				Subject: b.SessionTimeoutRange.Ptr(),
			})
		} else {
			cfg.Gateway.SessionTimeout = d
		}
	}
	good := true // boundedInt reports a bad value as a diagnostic; nothing here depends on good
	if n, set := l.boundedInt(b.MaxSessionsPerPrincipal, "max_sessions_per_principal", b.MaxSessionsPerPrincipalRange, 1, MaxGatewayMaxSessions, &good,
		"Invalid max_sessions_per_principal", fmt.Sprintf("max_sessions_per_principal is how many 2025-11-25 MCP sessions one principal may have open at once: a whole number from 1 to %d.", MaxGatewayMaxSessions)); set {
		cfg.Gateway.MaxSessionsPerPrincipal = n
	}
	if n, set := l.boundedInt(b.MaxSessions, "max_sessions", b.MaxSessionsRange, 1, MaxGatewayMaxSessions, &good,
		"Invalid max_sessions", fmt.Sprintf("max_sessions is how many 2025-11-25 MCP sessions the daemon holds open at once, for every principal together: a whole number from 1 to %d.", MaxGatewayMaxSessions)); set {
		cfg.Gateway.MaxSessions = n
	}
	if mode, ok := l.evalDiscovery(b.Discovery, b.DiscoveryRange); ok {
		cfg.Gateway.Discovery = mode
	}
	if n, st := l.evalSize(b.DiscoveryThreshold, "discovery_threshold", b.DiscoveryThresholdRange, MaxDiscoveryThreshold, `"48KiB"`); st == valid {
		cfg.Gateway.DiscoveryThreshold = n
	}
	cfg.Gateway.Pin = l.evalPin(cfg, b.Pin, b.PinRange)
	l.decodeEndpoints(cfg, b)
}

// checkServerNames reports each name that is not a configured server and
// returns the list without repeats, in the order given.
func (l *loader) checkServerNames(cfg *Config, names []string, rng hcl.Range, where string) []string {
	known := map[string]bool{}
	var all []string
	for _, s := range cfg.Servers {
		known[s.Name] = true
		all = append(all, s.Name)
	}
	out := make([]string, 0, len(names))
	seen := map[string]bool{}
	for _, n := range names {
		if !known[n] {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Unknown server",
				Detail:   fmt.Sprintf("The %s names the server %q, which the configuration does not declare (servers: %s).", where, n, listOrNone(all)),
				Subject:  rng.Ptr(),
			})
			continue
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// decodeEndpoints reads the gateway's endpoint blocks: a name each, unique,
// and the servers it fronts.
func (l *loader) decodeEndpoints(cfg *Config, b *gatewayBlock) {
	seen := map[string]hcl.Range{}
	for _, e := range b.Endpoints {
		if !endpointNameRE.MatchString(e.Name) {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid endpoint name",
				Detail:   fmt.Sprintf("The endpoint name %q is not valid. A name starts with a letter and has at most 64 letters, digits, underscores or hyphens, because it is served at /mcp/endpoints/NAME.", e.Name),
				Subject:  e.NameRange.Ptr(),
			})
			continue
		}
		if first, dup := seen[e.Name]; dup {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Duplicate endpoint name",
				Detail:   fmt.Sprintf("An endpoint named %q is already defined at %s. Rename or remove one of the blocks.", e.Name, fileLine(first)),
				Subject:  e.NameRange.Ptr(),
			})
			continue
		}
		seen[e.Name] = e.NameRange
		names, st := l.evalStringList(e.Servers, "servers")
		if st == absent {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Missing servers",
				Detail:   fmt.Sprintf("The endpoint %q needs servers = [...]: the servers it fronts.", e.Name),
				Subject:  e.DeclRange.Ptr(),
			})
			continue
		}
		if st != valid {
			continue
		}
		ep := GatewayEndpoint{
			Name: e.Name, Servers: l.checkServerNames(cfg, names, e.ServersRange, fmt.Sprintf("endpoint %q", e.Name)), NameRange: e.NameRange,
		}
		ep.Discovery, _ = l.evalDiscovery(e.Discovery, e.DiscoveryRange)
		ep.Pin = l.evalPin(cfg, e.Pin, e.PinRange)
		cfg.Gateway.Endpoints = append(cfg.Gateway.Endpoints, ep)
	}
}

// evalDiscovery reads a `discovery` attribute: "list", "search" or "auto".
func (l *loader) evalDiscovery(expr hcl.Expression, rng hcl.Range) (string, bool) {
	v, st := l.evalString(expr, "discovery")
	if st != valid {
		return "", false
	}
	switch v {
	case DiscoveryList, DiscoverySearch, DiscoveryAuto:
		return v, true
	}
	l.add(&hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Invalid discovery",
		Detail: fmt.Sprintf("discovery is %s; it must be \"list\" (every tool is listed, the default), \"search\" (the search_tools, describe_tools and call_tool meta-tools and the pinned tools are listed) or \"auto\" (search when a caller's tool definitions exceed discovery_threshold).",
			quoted(expr, v)),
		Subject: rng.Ptr(),
	})
	return "", false
}

// evalPin reads a `pin` attribute: SERVER__TOOL names of configured
// servers, without repeats. nil when absent or invalid.
func (l *loader) evalPin(cfg *Config, expr hcl.Expression, rng hcl.Range) []string {
	names, st := l.evalStringList(expr, "pin")
	if st != valid {
		return nil
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		if !pinsServer(cfg, n) {
			var servers []string
			for _, s := range cfg.Servers {
				servers = append(servers, s.Name)
			}
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid pin",
				Detail: fmt.Sprintf("pin names %s, which is not SERVER__TOOL of a configured server (servers: %s). Give the names the gateway serves the tools by, such as \"github__create_issue\".",
					clipQuote(n), listOrNone(servers)),
				Subject: rng.Ptr(),
			})
			continue
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// pinsServer reports whether name is SERVER__TOOL of a configured server.
func pinsServer(cfg *Config, name string) bool {
	for _, s := range cfg.Servers {
		if tool, ok := strings.CutPrefix(name, s.Name+"__"); ok && tool != "" {
			return true
		}
	}
	return false
}
