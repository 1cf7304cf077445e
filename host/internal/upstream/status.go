package upstream

import (
	"time"

	"github.com/mcphost/mcphost/apps"
	"github.com/mcphost/mcphost/negotiate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// State is the lifecycle state of one configured server.
type State string

// The states of a server. A server goes connecting → ready, or connecting →
// failed; a ready server whose process exits or whose connection drops goes
// back to failed and, when restarts are on, to connecting after a backoff.
const (
	StateConnecting State = "connecting"
	StateReady      State = "ready"
	StateFailed     State = "failed"
	StateStopped    State = "stopped"
	StateDisabled   State = "disabled" // `enabled = false` in the config

	// The states of a server with an auth block (oauth.go). Neither is a
	// failure: the supervisor does not reconnect or back off, and no era
	// is recorded; it connects again once the credential changes.
	//
	// StateNeedsAuth: the server asked for a sign-in nobody has made yet
	// (or the credential was refused, signed out or dropped, or a call
	// needs more scope). LastError says why.
	StateNeedsAuth State = "needs_auth"
	// StateAuthError: signing in cannot work as configured: inconsistent
	// metadata (a resource or issuer mismatch), a client the authorization
	// server refuses, a stored credential that does not open, a server that
	// keeps refusing after step-ups. LastError says which.
	StateAuthError State = "auth_error"
)

// Era names the MCP protocol era a session speaks.
const (
	EraLegacy = negotiate.EraLegacy // initialize handshake, protocol ≤ 2025-11-25
	EraModern = negotiate.EraModern // stateless 2026-07-28 with server/discover
)

// LegacyProtocolVersion is the version every legacy connect pins
// (ClientSessionOptions.ProtocolVersion), so go-sdk never probes on its own.
const LegacyProtocolVersion = negotiate.LegacyVersion

// ServerStatus is a snapshot of one server's state. It is a value: reading
// it needs no lock and it never changes after it is returned.
type ServerStatus struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	State     State  `json:"status"`

	// Era, ProtocolVersion and Evidence describe the current (or last)
	// session: which protocol era was chosen and why.
	Era             string `json:"era,omitempty"`
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	Evidence        string `json:"evidence,omitempty"`

	ServerInfo   *mcp.Implementation     `json:"serverInfo,omitempty"`
	Capabilities *mcp.ServerCapabilities `json:"capabilities,omitempty"`
	Instructions string                  `json:"instructions,omitempty"`

	Tools             int `json:"tools"`
	Prompts           int `json:"prompts"`
	Resources         int `json:"resources"`
	ResourceTemplates int `json:"resourceTemplates"`
	// RejectedTools are the tools of the last tools/list that the catalog
	// left out (not listed, not callable): names outside the MCP spec's
	// tool-name rule, and repeats of a name. Tools counts only the others.
	RejectedTools []RejectedTool `json:"rejectedTools,omitempty"`
	// UncheckedTools are tools whose input schema does not compile (a
	// remote $ref, an unsupported draft, a malformed schema): mcphost
	// cannot check their arguments, so the server alone does. Reason is the
	// compiler's complaint. They are listed and callable.
	UncheckedTools []RejectedTool `json:"uncheckedTools,omitempty"`
	// NameCollisions are tools the gateway's /mcp does not serve because
	// their SERVER__TOOL name is also another tool's (neither is served).
	NameCollisions []NameCollision `json:"nameCollisions,omitempty"`
	// ClientSessions counts the per-client upstream sessions open now
	// (session_mode = "per_client").
	ClientSessions int `json:"clientSessions,omitempty"`

	// LastError is the most recent failure (connect, list or exit), with the
	// tail of the server's stderr when it has one.
	LastError string `json:"lastError,omitempty"`
	// Sandbox says how a stdio server is contained (nil for a remote one).
	Sandbox *SandboxStatus `json:"sandbox,omitempty"`
	// PID is the process id of a running stdio server (0 otherwise).
	PID int `json:"pid,omitempty"`
	// Placement is "singleton" for a server that one replica of a
	// cluster runs for all (placement = "singleton"), and RunsOn that
	// replica's id once known (this one's, or the one this replica relays
	// to); both empty otherwise.
	Placement string `json:"placement,omitempty"`
	RunsOn    string `json:"runsOn,omitempty"`
	// Restarts counts reconnects after the first attempt.
	Restarts int `json:"restarts"`
	// Since is when the server entered State.
	Since time.Time `json:"since"`
	// NextAttempt is when a failed server will be tried again (zero if never).
	NextAttempt time.Time `json:"nextAttempt,omitzero"`
	// Launcher names the package runner a stdio server is started with
	// (npx, uvx, …): its first start downloads the package, so a long
	// "connecting" is expected then.
	Launcher string `json:"launcher,omitempty"`
}

// RejectedTool is one tool a server listed that the catalog left out.
type RejectedTool struct {
	// Name is the name the server gave, escaped for display
	// (termsafe.Line): it may hold control, bidi or invalid UTF-8 bytes.
	Name string `json:"name"`
	// Reason says which part of the rule the name breaks.
	Reason string `json:"reason"`
}

// Tool is one tool of one server, addressed as Server.Name.
type Tool struct {
	Server string    `json:"server"`
	Tool   *mcp.Tool `json:"tool"`
	// App is the tool's MCP App link when it has one (a ui:// resource and
	// whether the model and Apps may call it); nil otherwise.
	App *apps.Link `json:"app,omitempty"`
}

// QualifiedName returns SERVER.TOOL, the name the CLI and the API use.
func (t Tool) QualifiedName() string { return t.Server + "." + t.Tool.Name }

// ToolView is the flat description of a tool that `mcphost tools -json` and
// GET /api/v1/tools print.
type ToolView struct {
	Server       string               `json:"server"`
	Name         string               `json:"name"`
	Qualified    string               `json:"qualifiedName"`
	Title        string               `json:"title,omitempty"`
	Description  string               `json:"description,omitempty"`
	InputSchema  any                  `json:"inputSchema,omitempty"`
	OutputSchema any                  `json:"outputSchema,omitempty"`
	Annotations  *mcp.ToolAnnotations `json:"annotations,omitempty"`
	Meta         mcp.Meta             `json:"_meta,omitempty"`
	// Visibility is who may call the tool: "model" and/or "app" (apps.md §3).
	Visibility []string `json:"visibility"`
	// AppResourceURI is the ui:// resource of the tool's MCP App, if any.
	AppResourceURI string `json:"appResourceUri,omitempty"`
}

// View returns the tool's flat description.
func (t Tool) View() ToolView {
	v := ToolView{
		Server: t.Server, Name: t.Tool.Name, Qualified: t.QualifiedName(),
		Title: t.Tool.Title, Description: t.Tool.Description,
		InputSchema: t.Tool.InputSchema, OutputSchema: t.Tool.OutputSchema,
		Annotations: t.Tool.Annotations, Meta: t.Tool.Meta,
		Visibility: []string{"model", "app"},
	}
	// _meta.ui.visibility counts whether or not the tool links an App: the
	// App gate reads it the same way (apps.ToolVisibility).
	model, app := apps.ToolVisibility(t.Tool)
	if t.App != nil {
		v.AppResourceURI = t.App.ResourceURI
		model, app = t.App.ModelVisible, t.App.AppVisible
	}
	v.Visibility = v.Visibility[:0]
	if model {
		v.Visibility = append(v.Visibility, "model")
	}
	if app {
		v.Visibility = append(v.Visibility, "app")
	}
	return v
}

// NameCollision is a tool the aggregate endpoint does not serve because
// its gateway name is also another tool's.
type NameCollision struct {
	Name       string `json:"name"`       // the gateway name both would have
	Tool       string `json:"tool"`       // this server's tool
	WithServer string `json:"withServer"` // the other tool's server
	WithTool   string `json:"withTool"`
}
