package host

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"

	"github.com/mcphost/mcphost/apps"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/generation"
	"github.com/mcphost/mcphost/host/internal/pipeline"
	"github.com/mcphost/mcphost/host/internal/upstream"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/negotiate"
	"github.com/mcphost/mcphost/policies"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What the host offers the gateway door (package gateway): the tools of an
// endpoint as a caller may see them, under the names the gateway serves
// them by, and the prompt, resource and completion requests it relays. The
// gateway owns the MCP server side; every decision (visibility, policies,
// plugins, the record) stays here.

// MaxGatewayToolName is the longest tool name the gateway serves: several
// model APIs accept no more than 64 characters.
const maxGatewayToolName = 64

// GatewayName is the name the aggregate endpoint (/mcp) serves tool by:
// SERVER__TOOL, or, when that is longer than MaxGatewayToolName, its first
// characters and a hash of the pair, so that the name is a pure function
// of (server, tool) and never shifts when another server joins.
func GatewayName(server, tool string) string {
	n := server + "__" + tool
	if len(n) <= maxGatewayToolName {
		return n
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	suffix := "-" + hex.EncodeToString(sum[:4])
	return n[:maxGatewayToolName-len(suffix)] + suffix
}

// GatewayTool is one tool an endpoint serves.
type GatewayTool struct {
	Name   string    // the name the endpoint serves it by
	Server string    // the upstream server
	Tool   *mcp.Tool // as the server listed it (shared: do not modify)
	// App is the tool's MCP App link when the server's Apps are on.
	App *apps.Link
}

// GatewayEndpoint selects what one gateway endpoint serves: the servers
// (nil: every server the gateway fronts) and whether tool names are
// prefixed (the aggregate endpoints) or kept (/mcp/servers/NAME).
type GatewayEndpoint struct {
	Servers []string
	Prefix  bool
}

// GatewayCatalog is what one endpoint serves, before any caller's
// policies: see [Host.GatewayCatalog] and [Host.GatewayFilter].
type GatewayCatalog struct {
	// Tools are the tools of the ready servers, by server (config order),
	// then name; tools whose names collide are left out.
	Tools []GatewayTool
	// Servers are the endpoint's servers, in config order, ready or not.
	Servers []string
	// Collisions are the tools left out for their names, by server.
	Collisions map[string][]upstream.NameCollision
	// Changes are the list_changed notifications of each server so far.
	Changes map[string]ListChanges
	// Hints are the servers' search_hint keywords, for the tool search.
	Hints map[string][]string
}

// ListChanges counts the list_changed notifications a server has sent, per
// list. Each one makes the host fetch the list again; when what the
// gateway serves is the same afterwards (a server that re-registers a tool
// as it was), the gateway still passes the notification on, as the server
// meant it, by the counts going up.
type ListChanges struct {
	Tools, Prompts, Resources uint64
}

// GatewayConfig returns the gateway block of the current configuration.
func (h *Host) GatewayConfig() config.Gateway { return h.gen().Cfg.Gateway }

// TelemetryConfig is the `telemetry` block of the running config.
func (h *Host) TelemetryConfig() config.Telemetry { return h.gen().Cfg.Telemetry }

// GatewayAuthenticate returns the caller a bearer token of a principal (or
// the owner) stands for on the gateway, with origin OriginGateway. A
// WebShell credential is not accepted: it is for the WebShell only.
func (h *Host) GatewayAuthenticate(token string) (Caller, bool) {
	c, ok := h.Authenticate(token)
	if !ok || c.Origin != OriginAPI {
		return Caller{}, false
	}
	c.Origin = OriginGateway
	return c, true
}

// GatewayAdmit counts one request of c that reaches no server, such as
// opening a gateway session, against c's `rate_limit` (its rate and burst;
// it is over at once, so concurrent_calls does not apply). It returns a
// *RateLimitError when c is calling faster than its limit.
func (h *Host) GatewayAdmit(c Caller) error {
	limit := h.gen().RateLimitOf(c.Name)
	limit.ConcurrentCalls = 0
	done, err := h.pipe.limiter.Admit(c.Name, limit)
	if err != nil {
		return err
	}
	done()
	return nil
}

// endpointServers returns the connections of an endpoint, in config order.
func endpointServers(g *generation.Gen, ep GatewayEndpoint) []*upstream.Conn {
	out := make([]*upstream.Conn, 0, len(g.Conns))
	for _, c := range g.Conns {
		if !g.Cfg.Gateway.Serves(c.Cfg.Name) {
			continue
		}
		if ep.Servers != nil && !slices.Contains(ep.Servers, c.Cfg.Name) {
			continue
		}
		out = append(out, c)
	}
	return out
}

// GatewayCatalog returns what ep serves, before any caller's policies.
func (h *Host) GatewayCatalog(ep GatewayEndpoint) GatewayCatalog {
	g := h.gen()
	tools, collisions := gatewayTools(g, ep)
	cat := GatewayCatalog{Tools: tools, Collisions: collisions, Changes: map[string]ListChanges{}, Hints: map[string][]string{}}
	for _, conn := range endpointServers(g, ep) {
		cat.Servers = append(cat.Servers, conn.Cfg.Name)
		if s := g.Cfg.Server(conn.Cfg.Name); s != nil && len(s.SearchHint) > 0 {
			cat.Hints[conn.Cfg.Name] = s.SearchHint
		}
		t, p, r := conn.ListChanged()
		cat.Changes[conn.Cfg.Name] = ListChanges{Tools: t, Prompts: p, Resources: r}
	}
	return cat
}

// GatewayMayAskInput reports whether a call to server may come back
// input_required: whether the server speaks the 2026-07-28 era now (or is
// not known). The gateway answers a legacy client's call itself only when
// it cannot: such a round needs the client's own request stream.
func (h *Host) GatewayMayAskInput(server string) bool {
	conn, ok := h.gen().ByName[server]
	if !ok {
		return true
	}
	era, _ := conn.Protocol()
	return era != negotiate.EraLegacy
}

// GatewayAppsOn reports whether a server of ep may serve MCP Apps (its
// apps setting is not off): the endpoint then advertises the extension.
func (h *Host) GatewayAppsOn(ep GatewayEndpoint) bool {
	for _, conn := range endpointServers(h.gen(), ep) {
		if conn.Cfg.Apps != config.AppsOff {
			return true
		}
	}
	return false
}

// GatewayFilter returns the tools and servers of cat that c may see: the
// `list` phase of the policies, with c's client. A server with tools is
// visible when c may see one of them; one without (none listed, or not
// ready) when the list rules allow it with an empty tool name.
func (h *Host) GatewayFilter(ctx context.Context, c Caller, cat GatewayCatalog) (tools []GatewayTool, servers []string) {
	g := h.gen()
	if g.Policies == nil {
		return cat.Tools, cat.Servers
	}
	l := g.Lister(c)
	shown := map[string]bool{}
	tools = make([]GatewayTool, 0, len(cat.Tools))
	for _, t := range cat.Tools {
		conn, ok := g.ByName[t.Server]
		if !ok {
			continue // gone in a reload
		}
		if l.Tool(ctx, conn, t.Tool) {
			shown[t.Server] = true
			tools = append(tools, t)
		}
	}
	for _, name := range cat.Servers {
		conn, ok := g.ByName[name]
		if !ok {
			continue
		}
		if shown[name] {
			servers = append(servers, name)
			continue
		}
		if _, sc, err := conn.Current(); err == nil && len(sc.Tools) > 0 {
			continue // it has tools, and c may see none of them
		}
		if g.VisibleWithoutTools(ctx, c, conn) {
			servers = append(servers, name)
		}
	}
	return tools, servers
}

// gatewayTools returns every tool of ep's ready servers under its gateway
// name, leaving out (and returning) the names two tools would share.
func gatewayTools(g *generation.Gen, ep GatewayEndpoint) ([]GatewayTool, map[string][]upstream.NameCollision) {
	var all []GatewayTool
	for _, conn := range endpointServers(g, ep) {
		_, cat, err := conn.Current()
		if err != nil {
			continue
		}
		start := len(all)
		for _, t := range cat.Tools {
			if t == nil {
				continue
			}
			gt := GatewayTool{Name: t.Name, Server: conn.Cfg.Name, Tool: t}
			if ep.Prefix {
				gt.Name = GatewayName(conn.Cfg.Name, t.Name)
			}
			if link, ok := apps.ToolLink(t); ok && conn.Cfg.Apps != config.AppsOff {
				gt.App = &link
			}
			all = append(all, gt)
		}
		part := all[start:]
		sort.SliceStable(part, func(i, j int) bool { return part[i].Name < part[j].Name })
	}
	byName := make(map[string][]int, len(all))
	for i, t := range all {
		byName[t.Name] = append(byName[t.Name], i)
	}
	var collisions map[string][]upstream.NameCollision
	drop := map[int]bool{}
	for name, idx := range byName {
		if len(idx) < 2 {
			continue
		}
		if collisions == nil {
			collisions = map[string][]upstream.NameCollision{}
		}
		for _, i := range idx {
			drop[i] = true
			other := all[idx[0]]
			if i == idx[0] {
				other = all[idx[1]]
			}
			collisions[all[i].Server] = append(collisions[all[i].Server], upstream.NameCollision{
				Name: name, Tool: all[i].Tool.Name, WithServer: other.Server, WithTool: other.Tool.Name})
		}
	}
	if len(drop) == 0 {
		return all, nil
	}
	kept := all[:0:0]
	for i, t := range all {
		if !drop[i] {
			kept = append(kept, t)
		}
	}
	for _, cs := range collisions {
		sort.Slice(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
	}
	return kept, collisions
}

// annotateCollisions fills in the NameCollisions of statuses: the tools the
// aggregate gateway endpoint (/mcp) leaves out for their names.
func annotateCollisions(g *generation.Gen, statuses []ServerStatus) {
	if !g.Cfg.Gateway.Enabled {
		return
	}
	_, collisions := gatewayTools(g, GatewayEndpoint{Prefix: true})
	if collisions == nil {
		return
	}
	for i := range statuses {
		statuses[i].NameCollisions = collisions[statuses[i].Name]
	}
}

// gatewaySession returns c's session of a server c may see, with its
// connection.
func (h *Host) gatewaySession(ctx context.Context, c Caller, server string) (*upstream.Conn, *mcp.ClientSession, *upstream.Catalog, error) {
	t, err := h.gen().VisibleTarget(ctx, c, server)
	if err != nil {
		return nil, nil, nil, err
	}
	return t.Conn, t.Session, t.Catalog, nil
}

// AppResourceError is an App resource the gateway would not hand out: the
// App does not validate, its display plugins failed, or the `app` phase
// refused it.
type AppResourceError struct {
	URI    string
	Reason string
}

func (e *AppResourceError) Error() string {
	return fmt.Sprintf("the MCP App %s is not served: %s", e.URI, e.Reason)
}

// gatewayApp reads and checks the App tool links, the way a call's App is
// resolved for the WebShell, and returns its HTML as a resources/read
// result with the CSP and permissions that survived the display stage.
func (h *Host) gatewayApp(ctx context.Context, c Caller, conn *upstream.Conn, cs *mcp.ClientSession, cat *upstream.Catalog, tool *mcp.Tool) (*mcp.ReadResourceResult, error) {
	link, _ := apps.ToolLink(tool)
	empty := &mcp.CallToolResult{Content: []mcp.Content{}}
	disp := h.resolveApp(ctx, conn, cs, cat, tool, nil, empty)
	if disp == nil {
		return nil, &AppResourceError{URI: link.ResourceURI, Reason: "the server's Apps are off"}
	}
	g := h.acquire()
	defer g.Release()
	pol := pipeline.NewPolicy(g, c.Principal, conn, tool, c.Origin, nil, nil, &pipeline.Trail{})
	if pol.In != nil {
		pol.In.Client = policies.Client(c.Client)
	}
	pol.DisplayStage(ctx, c.Principal, conn, tool, nil, empty, disp)
	h.appendAudit(ctx, c.Name, "", pol.Audit)
	if disp.HTML == "" {
		reason := disp.Warning
		if reason == "" {
			reason = "it has no HTML"
		}
		return nil, &AppResourceError{URI: link.ResourceURI, Reason: reason}
	}
	meta := mcp.Meta{}
	ui := map[string]any{}
	if disp.CSP != nil {
		ui["csp"] = disp.CSP
	}
	if len(disp.Permissions) > 0 {
		ui["permissions"] = disp.Permissions
	}
	if len(ui) > 0 {
		meta["ui"] = ui
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
		URI: link.ResourceURI, MIMEType: apps.MIMEType, Text: disp.HTML, Meta: meta,
	}}}, nil
}

// GatewaySealKey returns the key the gateway seals the requestState it
// hands its clients with: derived from the daemon's credential key, so a
// client's next round still opens after a restart, and never the
// credential key itself.
func (h *Host) GatewaySealKey() []byte {
	m := hmac.New(sha256.New, h.credKey)
	m.Write([]byte("mcphost gateway requestState v1"))
	return m.Sum(nil)
}

// GatewayCall is the gateway's door to the call pipeline: the call of a
// tool by an MCP client, recorded in the session req.SessionID (one per
// client connection, see the gateway). An `ask` rule is put to the client
// through elicit when it can answer (answered true) and the rule lets the
// caller approve (a rule that names other approvers is never answered by
// the client that made the call); otherwise, or when elicit is nil, it
// waits for an answer in the WebShell. onProgress hears
// the call's progress. A server's input_required answer is the outcome's
// Result (NeedsInput), as it came, for the client to answer (req.Input
// carries its retry); it skips the result and App stages, which the last
// round's answer goes through.
//
// The outcome is nil when the call stopped before its policies (the error
// says why: unknown tool, arguments, not ready, rate limit). A refusal is a
// *PolicyError with the outcome.
func (h *Host) GatewayCall(ctx context.Context, req SessionCall, elicit func(context.Context, Approval) (outcome string, answered bool), onProgress func(Progress)) (*CallOutcome, error) {
	req.Origin = OriginGateway
	// A legacy upstream's elicitation on the shared session is answered
	// in the WebShell (a modern one's rounds are relayed to the client).
	d := door{record: h.store != nil, onProgress: onProgress, relayInput: true, elicit: h.elicitBroker}
	d.ask = func(ctx context.Context, p Principal, a Approval) (string, error) {
		a.Principal = p.Name
		if elicit != nil && mayApprove(p, a) {
			wait, stop := untilClientGone(ctx)
			outcome, answered := elicit(wait, a)
			stop()
			if answered {
				if outcome == ApprovalAskClient {
					return "", &AskClientError{Approval: a}
				}
				return outcome, nil
			}
		}
		return h.ask(ctx, p, a)
	}
	out, err := h.pipeline(ctx, req, d)
	if out == nil {
		return nil, err
	}
	return &CallOutcome{Entry: out.entry, Result: out.result, Upstream: out.upstream, Stage: out.stage}, err
}

// ApprovalAskClient is what a gateway's elicit answers to put an `ask` rule
// to the client in an input_required round of its own (a 2026-07-28 client
// cannot be asked within the request): the call stops with an
// *AskClientError, before it reaches the server, and records nothing but
// the decision in the audit log; the client's retry carries its answer.
const ApprovalAskClient = "ask-client"

// AskClientError stops a gateway call whose `ask` rule the client is to
// answer in a round of its own.
type AskClientError struct{ Approval Approval }

func (e *AskClientError) Error() string {
	return fmt.Sprintf("call %s.%s needs the client's approval: %s", e.Approval.Server, e.Approval.Tool, e.Approval.Message)
}

// CallOutcome is what the pipeline made of a call that reached its
// policies (see [Host.GatewayCall]).
type CallOutcome struct {
	Entry *store.Entry // recorded when the host has a store
	// Result is the result as the plugins and policies left it; nil when
	// the call failed or a stage withheld it.
	Result *mcp.CallToolResult
	// Upstream is the failure of the call itself (the server's error, its
	// call_timeout, cancellation, the session ending).
	Upstream error
	// Stage is the failure of a stage after the call (a plugin, a result
	// policy).
	Stage error
}

// WatchLogs calls fn with every notifications/message a server sends
// within its log bounds that belongs to no call, when the server's block
// says log_messages = "all" (a message that belongs to a call goes only to
// that call: SessionCall.OnLog), until stop is called. principal is the
// principal of a per-principal session (oauth.go) the message came on,
// which only that principal's clients may hear; "" for a shared session.
// fn must not block.
func (h *Host) WatchLogs(fn func(server, principal string, p *mcp.LoggingMessageParams)) (stop func()) {
	return h.ev.logWatchers.Add(fn)
}

// GatewaySetLogLevel asks server (one c may see) to send its log messages
// from level up. The upstream session is shared by every client, so its
// level only ever becomes more verbose: it is the most verbose any client
// asked for; the gateway drops what a client did not ask for.
func (h *Host) GatewaySetLogLevel(ctx context.Context, c Caller, server string, level mcp.LoggingLevel) error {
	conn, cs, _, err := h.gatewaySession(ctx, c, server)
	if err != nil {
		return err
	}
	if !upstream.IsLogLevel(level) {
		return &RequestError{Reason: fmt.Sprintf("unknown log level %q", level)}
	}
	return conn.RaiseLogLevel(ctx, cs, level)
}

// ReleaseClient closes the per-client upstream sessions of the gateway
// client key on every server (the client's gateway session ended).
func (h *Host) ReleaseClient(key string) {
	g := h.acquire()
	defer g.Release()
	for _, c := range g.Conns {
		c.ReleaseClient(key)
	}
}
