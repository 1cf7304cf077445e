package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// serverNameRE is the rule for server names. Tools are addressed as
// SERVER.TOOL, so a name cannot contain a dot.
var serverNameRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_-]{0,63}$`)

// MinTokenLength is the shortest principal token accepted.
const MinTokenLength = 16

// decodeServers checks every `server` block, with the top-level sandbox,
// and that their names are unique.
func (l *loader) decodeServers(cfg *Config, blocks []*serverBlock) {
	names := map[string]hcl.Range{}
	for _, b := range blocks {
		s := l.decodeServer(b, cfg.Sandbox)
		if first, dup := names[s.Name]; dup {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Duplicate server name",
				Detail: fmt.Sprintf("A server named %q is already defined at %s. Server names must be unique; rename or remove one of the blocks.",
					s.Name, fileLine(first)),
				Subject: b.NameRange.Ptr(),
			})
		} else {
			names[s.Name] = b.NameRange
		}
		cfg.Servers = append(cfg.Servers, s)
	}
}

// decodeServer validates one server block and fills in defaults: one
// decoder per group of attributes, in the order they depend on each other
// (the transport first: other attributes apply to one kind of server; the
// sandbox last: it grants the roots and takes top's settings).
func (l *loader) decodeServer(b *serverBlock, top Sandbox) Server {
	s := Server{
		Name:                b.Name,
		NameRange:           b.NameRange,
		DeclRange:           b.DeclRange,
		VersionNegotiation:  NegotiationLegacy,
		StdioProbe:          StdioProbeSibling,
		HTTPProbeTimeout:    HTTPProbeTimeoutFallback,
		Apps:                AppsAuto,
		AppResourceMaxBytes: DefaultAppResourceMaxBytes,
		DiscoveryTimeout:    DefaultDiscoveryTimeout,
		CallTimeout:         DefaultCallTimeout,
		RestartBackoffMax:   DefaultRestartBackoffMax,
		SessionMode:         SessionShared,
		MaxClientSessions:   DefaultMaxClientSessions,
		LogMessages:         LogMessagesOwn,
		Placement:           PlacementReplica,
		Enabled:             true,
	}
	l.checkServerName(b)
	headers := l.decodeTransport(b, &s)
	l.decodeAuth(b, &s, headers)
	var rootRanges []hcl.Range
	s.Roots, rootRanges = l.decodeRoots(b)
	s.SearchHint = l.decodeSearchHint(b)
	l.decodeNegotiation(b, &s)
	l.decodeProbes(b, &s)
	appTimeoutSet := l.decodeApps(b, &s)
	l.decodeTimeouts(b, &s)
	l.decodeRestarts(b, &s)
	l.decodeSessionMode(b, &s)
	l.decodeLogMessages(b, &s)
	l.decodeAppSwitches(b, &s)
	l.decodePlacement(b, &s)
	if enabled, st := l.evalBool(b.Enabled, "enabled"); st == valid {
		s.Enabled = enabled
	}
	if !appTimeoutSet {
		s.AppResourceTimeout = min(max(min(s.CallTimeout, DefaultAppResourceTimeout), MinAppResourceTimeout), MaxAppResourceTimeout)
	}
	l.decodeServerEnvironment(b, &s, top, rootRanges)
	return s
}

// checkServerName reports a server name that cannot address tools.
func (l *loader) checkServerName(b *serverBlock) {
	if !serverNameRE.MatchString(b.Name) {
		detail := fmt.Sprintf("The server name %q is not valid. A name starts with a letter and has at most 64 letters, digits, underscores or hyphens, because tools are addressed as SERVER.TOOL.", b.Name)
		if strings.Contains(b.Name, ".") {
			detail = fmt.Sprintf("The server name %q contains a dot. Tools are addressed as SERVER.TOOL, so a dot in the name would be ambiguous; use %q instead.", b.Name, strings.ReplaceAll(b.Name, ".", "_"))
		}
		l.add(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid server name", Detail: detail, Subject: b.NameRange.Ptr()})
	}
}

// serverTransport is what decodeTransport read of a block's transport
// attributes, for the decoders of a stdio, a remote and a wasm server.
type serverTransport struct {
	command, rawURL, wasm, transport, cwd                                  string
	commandSt, urlSt, wasmSt, transportSt, argsSt, envSt, cwdSt, headersSt valState
}

// decodeTransport reads how the server is reached (command, wasm, or url
// with its transport and headers; args and env of a command or a module,
// cwd of a command) and returns the headers for the auth block's checks.
func (l *loader) decodeTransport(b *serverBlock, s *Server) map[string]string {
	var t serverTransport
	var args []string
	var env, headers map[string]string
	t.command, t.commandSt = l.evalString(b.Command, "command")
	t.rawURL, t.urlSt = l.evalString(b.URL, "url")
	t.wasm, t.wasmSt = l.evalString(b.Wasm, "wasm")
	args, t.argsSt = l.evalStringList(b.Args, "args")
	env, t.envSt = l.evalStringMap(b.Env, "env")
	t.cwd, t.cwdSt = l.evalString(b.Cwd, "cwd")
	t.transport, t.transportSt = l.evalString(b.Transport, "transport")
	headers, t.headersSt = l.evalStringMap(b.Headers, "headers")
	l.checkTransportName(b, &t)

	switch l.transportKind(b, &t) {
	case "command":
		l.decodeStdio(b, s, &t)
	case "url":
		l.decodeRemote(b, s, &t)
	case "wasm":
		l.decodeWasm(b, s, &t)
	}
	s.Args, s.Env, s.Headers = args, env, headers
	if t.cwdSt == valid {
		s.Cwd = l.resolvePath(t.cwd, "cwd", b.CwdRange)
	}
	return headers
}

// transportKind returns the one of command, url and wasm the block sets,
// or "" after reporting none or more than one.
func (l *loader) transportKind(b *serverBlock, t *serverTransport) string {
	type kind struct {
		name string
		attr hcl.Range
	}
	var set []kind
	for _, k := range []struct {
		kind
		st valState
	}{{kind{"command", b.CommandAttr}, t.commandSt}, {kind{"url", b.URLAttr}, t.urlSt}, {kind{"wasm", b.WasmAttr}, t.wasmSt}} {
		if k.st != absent {
			set = append(set, k.kind)
		}
	}
	switch len(set) {
	case 0:
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Missing transport",
			Detail:   fmt.Sprintf("Server %q has no command, url or wasm. Set command = \"...\" to run a local program over stdio, url = \"https://...\" to connect to a remote server, or wasm = \"server.wasm\" to run a WebAssembly server inside mcphost.", b.Name),
			Subject:  b.DeclRange.Ptr(),
		})
		return ""
	case 1:
		return set[0].name
	}
	slices.SortFunc(set, func(a, b kind) int { return a.attr.Start.Byte - b.attr.Start.Byte })
	for _, k := range set[1:] {
		detail := fmt.Sprintf("Server %q sets both %s and %s. A server either runs a local command over stdio (command), runs a WebAssembly module inside mcphost (wasm) or connects to a url (url); remove one of them.", b.Name, set[0].name, k.name)
		if len(set) == 2 && set[0].name != "wasm" && k.name != "wasm" {
			detail = fmt.Sprintf("Server %q sets both command and url. A server either runs a local command over stdio or connects to a url; remove one of them.", b.Name)
		}
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Conflicting transports",
			Detail:   detail,
			Subject:  k.attr.Ptr(),
		})
	}
	return ""
}

// checkTransportName reports a transport that is not one mcphost speaks.
func (l *loader) checkTransportName(b *serverBlock, t *serverTransport) {
	if t.transportSt != valid {
		return
	}
	switch t.transport {
	case TransportStdio, TransportStreamableHTTP, TransportSSE:
	default:
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid transport",
			Detail:   fmt.Sprintf("The transport %s is not known. For a url, use %q (the default) or %q for servers that still speak the 2024-11-05 HTTP+SSE transport; a server with command always uses %q.", quoted(b.Transport, t.transport), TransportStreamableHTTP, TransportSSE, TransportStdio),
			Subject:  b.TransportRange.Ptr(),
		})
		t.transportSt = invalid
	}
}

// decodeStdio is decodeTransport for a server run with command.
func (l *loader) decodeStdio(b *serverBlock, s *Server, t *serverTransport) {
	s.Transport = TransportStdio
	if t.commandSt == valid {
		if strings.TrimSpace(t.command) == "" {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Empty command",
				Detail:   fmt.Sprintf("The command of server %q is empty. Give the program to run, such as \"npx\" or executable().", b.Name),
				Subject:  b.CommandRange.Ptr(),
			})
		} else {
			s.Command, s.CommandRange = t.command, b.CommandRange
		}
	}
	if t.transportSt == valid && t.transport != TransportStdio {
		l.add(remoteOnly("transport", b.Name, b.TransportAttr))
	}
	if t.headersSt != absent {
		l.add(remoteOnly("headers", b.Name, b.HeadersAttr))
	}
}

// decodeRemote is decodeTransport for a server reached at a url.
func (l *loader) decodeRemote(b *serverBlock, s *Server, t *serverTransport) {
	s.Transport = TransportStreamableHTTP
	if t.transportSt == valid {
		if t.transport == TransportStdio {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid transport",
				Detail:   fmt.Sprintf("Server %q has a url, so its transport cannot be %q: stdio is implied by command. Use %q (the default) or %q.", b.Name, TransportStdio, TransportStreamableHTTP, TransportSSE),
				Subject:  b.TransportRange.Ptr(),
			})
		} else {
			s.Transport = t.transport
		}
	}
	if t.urlSt == valid {
		if err := checkURL(t.rawURL); err != nil {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid URL",
				Detail:   fmt.Sprintf("The url of server %q%s is not valid%s. Write an absolute http or https URL, such as \"https://mcp.example.com/mcp\".", b.Name, readFrom(b.URL), because(b.URL, err)),
				Subject:  b.URLRange.Ptr(),
			})
		} else {
			s.URL = t.rawURL
		}
	}
	if t.argsSt != absent {
		l.add(stdioOnly("args", b.Name, b.ArgsAttr))
	}
	if t.envSt != absent {
		l.add(stdioOnly("env", b.Name, b.EnvAttr))
	}
	if t.cwdSt != absent {
		l.add(stdioOnly("cwd", b.Name, b.CwdAttr))
		t.cwdSt = invalid
	}
}

// decodeWasm is decodeTransport for a WebAssembly server mcphost runs
// in-process: args and env are the module's, and it has no working
// directory, transport or headers.
func (l *loader) decodeWasm(b *serverBlock, s *Server, t *serverTransport) {
	s.Transport = TransportWasm
	if t.wasmSt == valid {
		s.Wasm = l.decodeWasmPath(b, t.wasm)
	}
	if t.transportSt != absent {
		l.add(wasmNot("transport", b.Name, "the transport is implied: mcphost speaks MCP with the module over its stdin and stdout", b.TransportAttr))
	}
	if t.headersSt != absent {
		l.add(wasmNot("headers", b.Name, "headers are sent only to a server reached at a url", b.HeadersAttr))
	}
	if t.cwdSt != absent {
		l.add(wasmNot("cwd", b.Name, "a module has no working directory on the machine: it sees only the directories its sandbox block grants (read and write)", b.CwdAttr))
		t.cwdSt = invalid
	}
}

// decodeNegotiation reads how the protocol version is agreed.
func (l *loader) decodeNegotiation(b *serverBlock, s *Server) {
	vn, st := l.evalString(b.VersionNegotiation, "version_negotiation")
	if st != valid {
		return
	}
	switch vn {
	case NegotiationLegacy, NegotiationAuto:
		s.VersionNegotiation = vn
	default:
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid version negotiation",
			Detail:   fmt.Sprintf("The version_negotiation %s is not known. Use %q (the default: initialize at the current protocol version) or %q (probe the server for the versions it supports).", quoted(b.VersionNegotiation, vn), NegotiationLegacy, NegotiationAuto),
			Subject:  b.VersionNegotiationRange.Ptr(),
		})
	}
	if vn == NegotiationAuto && s.Transport == TransportSSE {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Version negotiation not available",
			Detail:   fmt.Sprintf("Server %q uses transport = %q, and the 2024-11-05 HTTP+SSE transport is always legacy, so version_negotiation = %q cannot apply. Remove version_negotiation, or use transport = %q if the server supports it.", b.Name, TransportSSE, NegotiationAuto, TransportStreamableHTTP),
			Subject:  b.VersionNegotiationRange.Ptr(),
		})
	}
}

// decodeProbes reads how a server is probed for its versions.
func (l *loader) decodeProbes(b *serverBlock, s *Server) {
	if v, st := l.evalString(b.StdioProbe, "stdio_probe"); st == valid {
		switch {
		case v != StdioProbeSibling && v != StdioProbeInPlace:
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid stdio probe",
				Detail: fmt.Sprintf("The stdio_probe %s is not known. Use %q (the default: probe a disposable copy of the server, then start the real one) or %q (probe the server process itself, for servers that cannot run twice).",
					quoted(b.StdioProbe, v), StdioProbeSibling, StdioProbeInPlace),
				Subject: b.StdioProbeRange.Ptr(),
			})
		case s.Transport == TransportWasm:
			l.add(wasmNot("stdio_probe", b.Name, "stdio_probe only applies to servers run with command", b.StdioProbeAttr))
		case s.Transport != TransportStdio && s.Transport != "":
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Argument only for stdio servers",
				Detail:   fmt.Sprintf("Server %q connects to a url, and stdio_probe only applies to servers run with command. Remove stdio_probe.", b.Name),
				Subject:  b.StdioProbeRange.Ptr(),
			})
		default:
			s.StdioProbe = v
		}
	}
	if v, st := l.evalString(b.HTTPProbeTimeout, "http_probe_timeout"); st == valid {
		switch {
		case v != HTTPProbeTimeoutFallback && v != HTTPProbeTimeoutError:
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid HTTP probe timeout",
				Detail: fmt.Sprintf("The http_probe_timeout %s is not known. Use %q (the default: when the probe gets no answer, try the legacy handshake) or %q (fail the connection).",
					quoted(b.HTTPProbeTimeout, v), HTTPProbeTimeoutFallback, HTTPProbeTimeoutError),
				Subject: b.HTTPProbeTimeoutRange.Ptr(),
			})
		case s.Transport != TransportStreamableHTTP:
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Argument only for Streamable HTTP servers",
				Detail:   fmt.Sprintf("Server %q does not use the Streamable HTTP transport, and only that transport is probed over HTTP. Remove http_probe_timeout.", b.Name),
				Subject:  b.HTTPProbeTimeoutRange.Ptr(),
			})
		default:
			s.HTTPProbeTimeout = v
		}
	}

}

// decodeApps reads whether and how the server's MCP Apps render; it says
// whether app_resource_timeout was set (else it follows call_timeout).
func (l *loader) decodeApps(b *serverBlock, s *Server) (appTimeoutSet bool) {
	if v, st := l.evalString(b.Apps, "apps"); st == valid {
		switch v {
		case AppsAuto, AppsAdvertised, AppsOff:
			s.Apps = v
		default:
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid apps setting",
				Detail: fmt.Sprintf("The apps setting %s is not known. Use %q (the default: render Apps of servers that advertise the extension or serve the exact App MIME type), %q (only servers that advertise the extension) or %q (never render Apps).",
					quoted(b.Apps, v), AppsAuto, AppsAdvertised, AppsOff),
				Subject: b.AppsRange.Ptr(),
			})
		}
	}
	if n, st := l.evalAppResourceMaxBytes(b.AppResourceMaxBytes, b.AppResourceMaxBytesRange); st == valid {
		s.AppResourceMaxBytes = n
	}
	if d, st := l.evalDuration(b.AppResourceTimeout, "app_resource_timeout", b.AppResourceTimeoutRange); st == valid {
		used := min(max(d, MinAppResourceTimeout), MaxAppResourceTimeout)
		if used != d {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagWarning,
				Summary:  "App resource timeout clamped",
				Detail:   fmt.Sprintf("The app_resource_timeout %s is outside 100ms to 2m, so %s is used.", shown(b.AppResourceTimeout, durationText(d)), durationText(used)),
				Subject:  b.AppResourceTimeoutRange.Ptr(),
			})
		}
		s.AppResourceTimeout = used
		appTimeoutSet = true
	}

	return appTimeoutSet
}

// decodeTimeouts reads how long discovery and one call may take.
func (l *loader) decodeTimeouts(b *serverBlock, s *Server) {
	if d, st := l.evalDuration(b.DiscoveryTimeout, "discovery_timeout", b.DiscoveryTimeoutRange); st == valid {
		used := min(max(d, MinDiscoveryTimeout), MaxDiscoveryTimeout)
		if used != d {
			bound := "below the minimum"
			if used == MaxDiscoveryTimeout {
				bound = "above the maximum"
			}
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagWarning,
				Summary:  "Discovery timeout clamped",
				Detail: fmt.Sprintf("The discovery_timeout %s is %s of %s, so %s is used. Set a value from %s to %s.",
					shown(b.DiscoveryTimeout, durationText(d)), bound, durationText(used), durationText(used),
					durationText(MinDiscoveryTimeout), durationText(MaxDiscoveryTimeout)),
				Subject: b.DiscoveryTimeoutRange.Ptr(),
			})
		}
		s.DiscoveryTimeout = used
	}

	if d, st := l.evalDuration(b.CallTimeout, "call_timeout", b.CallTimeoutRange); st == valid {
		if d <= 0 {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid call timeout",
				Detail:   fmt.Sprintf("The call_timeout %s is not greater than zero. Give the longest time one tool call may take, such as \"60s\", or remove call_timeout to use the default of %s.", shown(b.CallTimeout, durationText(d)), durationText(DefaultCallTimeout)),
				Subject:  b.CallTimeoutRange.Ptr(),
			})
		} else {
			s.CallTimeout = d
		}
	}

}

// decodeRestarts reads how a failing server is restarted.
func (l *loader) decodeRestarts(b *serverBlock, s *Server) {
	good := true
	if n, set := l.boundedInt(b.MaxRestarts, "max_restarts", b.MaxRestartsRange, 0, MaxMaxRestarts, &good,
		"Invalid max_restarts", fmt.Sprintf("max_restarts is how many failed restarts in a row the server gets before it stays failed: a whole number from 0 (keep trying) to %d.", MaxMaxRestarts)); set {
		s.MaxRestarts = n
	}
	if d, st := l.evalDuration(b.RestartBackoffMax, "restart_backoff_max", b.RestartBackoffMaxRange); st == valid {
		if d < MinRestartBackoffMax || d > MaxRestartBackoffMax {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid restart_backoff_max",
				Detail: fmt.Sprintf("The restart_backoff_max %s is outside %s to %s: it is the longest wait between restarts of a failing server.",
					shown(b.RestartBackoffMax, durationText(d)), durationText(MinRestartBackoffMax), durationText(MaxRestartBackoffMax)),
				Subject: b.RestartBackoffMaxRange.Ptr(),
			})
		} else {
			s.RestartBackoffMax = d
		}
	}

}

// decodeSessionMode reads whether gateway clients get upstream sessions of
// their own.
func (l *loader) decodeSessionMode(b *serverBlock, s *Server) {
	good := true
	if v, st := l.evalString(b.SessionMode, "session_mode"); st == valid {
		switch v {
		case SessionShared, SessionPerClient:
			s.SessionMode = v
		default:
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid session_mode",
				Detail: fmt.Sprintf("The session_mode %s is not known. Use %q (the default: one upstream session for every caller) or %q (each MCP client of the gateway on a 2025-11-25 session gets upstream sessions of its own, so that the server's elicitation and sampling requests reach that client).",
					quoted(b.SessionMode, v), SessionShared, SessionPerClient),
				Subject: b.SessionModeRange.Ptr(),
			})
		}
	}
	if n, set := l.boundedInt(b.MaxClientSessions, "max_client_sessions", b.MaxClientSessionsRange, 1, MaxMaxClientSessions, &good,
		"Invalid max_client_sessions", fmt.Sprintf("max_client_sessions is how many per-client upstream sessions the server may have at once: a whole number from 1 to %d.", MaxMaxClientSessions)); set {
		if s.SessionMode != SessionPerClient {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Argument only with session_mode = \"per_client\"",
				Detail:   fmt.Sprintf("Server %q shares one upstream session among its callers, so there are no per-client sessions to cap. Set session_mode = %q or remove max_client_sessions.", b.Name, SessionPerClient),
				Subject:  b.MaxClientSessionsRange.Ptr(),
			})
		} else {
			s.MaxClientSessions = n
		}
	}
	s.MaxClientSessionsPerPrincipal = DefaultClientSessionsPerPrincipal(s.MaxClientSessions)
	if n, set := l.boundedInt(b.MaxClientSessionsPerPrincipal, "max_client_sessions_per_principal", b.MaxClientSessionsPerPrincipalRange, 1, MaxMaxClientSessions, &good,
		"Invalid max_client_sessions_per_principal", fmt.Sprintf("max_client_sessions_per_principal is how many per-client upstream sessions the clients of one principal may hold at once: a whole number from 1 to max_client_sessions (%d).", s.MaxClientSessions)); set {
		switch {
		case s.SessionMode != SessionPerClient:
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Argument only with session_mode = \"per_client\"",
				Detail:   fmt.Sprintf("Server %q shares one upstream session among its callers, so there are no per-client sessions to share out. Set session_mode = %q or remove max_client_sessions_per_principal.", b.Name, SessionPerClient),
				Subject:  b.MaxClientSessionsPerPrincipalRange.Ptr(),
			})
		case n > s.MaxClientSessions:
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid max_client_sessions_per_principal",
				Detail:   fmt.Sprintf("max_client_sessions_per_principal is %d, more than the server's max_client_sessions (%d), so one principal could still hold every session. Lower it, or raise max_client_sessions.", n, s.MaxClientSessions),
				Subject:  b.MaxClientSessionsPerPrincipalRange.Ptr(),
			})
		default:
			s.MaxClientSessionsPerPrincipal = n
		}
	}
}

// decodeLogMessages reads who hears a log message of the server that no
// call owns.
func (l *loader) decodeLogMessages(b *serverBlock, s *Server) {
	v, st := l.evalString(b.LogMessages, "log_messages")
	if st != valid {
		return
	}
	switch v {
	case LogMessagesOwn, LogMessagesAll:
		s.LogMessages = v
	default:
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid log_messages",
			Detail: fmt.Sprintf("The log_messages %s is not known. Use %q (the default: a gateway client hears the server's log messages of its own calls only) or %q (a message that no one call can be said to own also goes to every client with a call running on the server, whoever's).",
				quoted(b.LogMessages, v), LogMessagesOwn, LogMessagesAll),
			Subject: b.LogMessagesRange.Ptr(),
		})
	}
}

// decodeAppSwitches reads what the server's Apps may ask for.
func (l *loader) decodeAppSwitches(b *serverBlock, s *Server) {
	// What the server's Apps may ask for: each switch false unless set.
	for _, sw := range []struct {
		expr hcl.Expression
		name string
		to   *bool
	}{
		{b.AppToolCalls, "app_tool_calls", &s.AppToolCalls},
		{b.AppOpenLinks, "app_open_links", &s.AppOpenLinks},
		{b.AppMessages, "app_messages", &s.AppMessages},
		{b.AppDisplayModes, "app_display_modes", &s.AppDisplayModes},
		{b.AppTools, "app_tools", &s.AppTools},
		{b.AppResources, "app_resources", &s.AppResources},
		{b.AppDownloads, "app_downloads", &s.AppDownloads},
		{b.AppModelContext, "app_model_context", &s.AppModelContext},
		{b.AppCSPUnsafeEval, "app_csp_unsafe_eval", &s.AppCSPUnsafeEval},
	} {
		if v, st := l.evalBool(sw.expr, sw.name); st == valid {
			*sw.to = v
		}
	}

}

// decodePlacement reads where a cluster runs the server.
func (l *loader) decodePlacement(b *serverBlock, s *Server) {
	if v, st := l.evalString(b.Placement, "placement"); st == valid {
		switch {
		case v != PlacementReplica && v != PlacementSingleton:
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid placement",
				Detail: fmt.Sprintf("The placement %s is not known. Use %q (the default: every replica of a cluster runs the server) or %q (one replica runs it and the others forward its calls, lists and reads to that one: for a server that keeps state, such as a stdio process).",
					quoted(b.Placement, v), PlacementReplica, PlacementSingleton),
				Subject: b.PlacementRange.Ptr(),
			})
		case v == PlacementSingleton && s.SessionMode == SessionPerClient:
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "placement = \"singleton\" with session_mode = \"per_client\"",
				Detail:   fmt.Sprintf("Server %q asks for upstream sessions per gateway client, which live on the replica of that client; a singleton has one session on one replica. Use one of the two.", b.Name),
				Subject:  b.PlacementRange.Ptr(),
			})
		case v == PlacementSingleton && s.Auth != nil && s.Auth.Tokens == TokensPrincipal:
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "placement = \"singleton\" with tokens per principal",
				Detail:   fmt.Sprintf("Server %q signs each principal in with a session of its own, on whichever replica the principal uses; a singleton has one session on one replica. Set tokens = %q in its auth block, or leave placement out.", b.Name, TokensShared),
				Subject:  b.PlacementRange.Ptr(),
			})
		default:
			s.Placement = v
		}
	}

}

func stdioOnly(attr, server string, rng hcl.Range) *hcl.Diagnostic {
	runs := "servers that run a local command (command = ...)"
	if attr == "args" || attr == "env" {
		runs = "servers that run a local command (command = ...) or a WebAssembly module (wasm = ...)"
	}
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Argument only for stdio servers",
		Detail:   fmt.Sprintf("The argument %q belongs to %s. Server %q connects to a url, so remove %s.", attr, runs, server, attr),
		Subject:  rng.Ptr(),
	}
}

func remoteOnly(attr, server string, rng hcl.Range) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Argument only for remote servers",
		Detail:   fmt.Sprintf("The argument %q belongs to servers that connect to a url (url = ...). Server %q runs a local command over stdio, so remove %s.", attr, server, attr),
		Subject:  rng.Ptr(),
	}
}

// evalAppResourceMaxBytes reads `app_resource_max_bytes`: a whole number of
// bytes or a size string such as "16MiB", at most MaxAppResourceMaxBytes.
// More is an error (the value is refused, not cut down: an operator who
// wrote 64MiB expects Apps of that size to render); less than 1 is clamped
// to 1 with a warning, as before.
func (l *loader) evalAppResourceMaxBytes(expr hcl.Expression, rng hcl.Range) (int, valState) {
	const name = "app_resource_max_bytes"
	n, text, st := l.evalBytes(expr, name, rng, `"16MiB"`)
	if st != valid {
		return 0, st
	}
	switch {
	case n > MaxAppResourceMaxBytes:
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "App resource size too large",
			Detail: fmt.Sprintf("The %s %s is more than 16MiB (%d bytes), the most an App's HTML may be. Give at most \"16MiB\"; the default is \"1MiB\".",
				name, shown(expr, text), MaxAppResourceMaxBytes),
			Subject: rng.Ptr(),
		})
		return 0, invalid
	case n < 1:
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  "App resource size clamped",
			Detail:   fmt.Sprintf("The %s %s is below 1 byte, so 1 is used (and no App fits). The default is \"1MiB\", the most \"16MiB\".", name, shown(expr, text)),
			Subject:  rng.Ptr(),
		})
		return 1, valid
	}
	return int(n), valid
}
