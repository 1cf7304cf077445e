package host

import (
	"context"

	"github.com/mcphost/mcphost/host/internal/upstream"
	"github.com/mcphost/mcphost/policies"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What a caller may see of the servers. An admin sees everything. Anyone
// else sees a server only when the `list` phase of the policies leaves them
// at least one of its tools (for a server that offers no tools right now,
// because it has none or is not ready, the list rules decide for the
// server with an empty tool name), and never its process details: no pid,
// no last error (which carries the stderr tail), no restart count, and a
// tool count of the tools it may see.

// visible reports whether c may see conn's server and how many of its tools.
func (g *generation) visible(ctx context.Context, c Caller, conn *upstream.Conn) (bool, int) {
	_, cat, err := conn.Current()
	total := 0
	if err == nil {
		total = len(cat.Tools)
	}
	if c.Admin || g.policies == nil {
		return true, total
	}
	if total == 0 {
		return g.visibleWithoutTools(ctx, c, conn), 0
	}
	n := 0
	l := g.lister(c)
	for _, t := range cat.Tools {
		if t != nil && l.tool(ctx, conn, t) {
			n++
		}
	}
	return n > 0, n
}

// sees reports whether c may see conn's server: visible, deciding only
// until the first tool c may see (every operation on a server asks it).
func (g *generation) sees(ctx context.Context, c Caller, conn *upstream.Conn) bool {
	if c.Admin || g.policies == nil {
		return true
	}
	_, cat, err := conn.Current()
	if err != nil || len(cat.Tools) == 0 {
		return g.visibleWithoutTools(ctx, c, conn)
	}
	l := g.lister(c)
	for _, t := range cat.Tools {
		if t != nil && l.tool(ctx, conn, t) {
			return true
		}
	}
	return false
}

// visibleWithoutTools decides whether c may see conn while it lists no
// tools (none, or not ready): the list rules with an empty tool.
func (g *generation) visibleWithoutTools(ctx context.Context, c Caller, conn *upstream.Conn) bool {
	return g.lister(c).tool(ctx, conn, &mcp.Tool{})
}

// lister is the one list filter: the `list` phase of the policies for one
// caller, over the tools, resources, resource templates and prompts of
// the servers. Its input is reused from item to item: a lister is for one
// goroutine.
type lister struct {
	set *policies.Set // nil: everything is shown
	in  policies.Input
}

// lister returns the list filter of c under g's policies.
func (g *generation) lister(c Caller) *lister {
	return &lister{set: g.policies, in: policies.Input{Origin: c.Origin, Client: policies.Client(c.Client),
		Principal: policies.Principal{Name: c.Name, Groups: c.Groups}}}
}

// shows decides for the input as set up for one item of conn.
func (l *lister) shows(ctx context.Context, conn *upstream.Conn, op string) bool {
	if l.set == nil {
		return true
	}
	l.in.Server, l.in.Era, l.in.Op = conn.Cfg.Name, conn.Era(), op
	return l.set.Decide(ctx, policies.PhaseList, &l.in).Allowed()
}

// tool reports whether the caller may see tool of conn.
func (l *lister) tool(ctx context.Context, conn *upstream.Conn, t *mcp.Tool) bool {
	l.in.Tool, l.in.Resource, l.in.Prompt = policies.ToolFromMCP(t), nil, nil
	return l.shows(ctx, conn, policies.OpListTools)
}

// resource reports whether the caller may see a resource (or a resource
// template: uri is the template) of conn.
func (l *lister) resource(ctx context.Context, conn *upstream.Conn, uri, name, mimeType string) bool {
	l.in.Tool, l.in.Prompt = policies.Tool{}, nil
	l.in.Resource = &policies.Resource{URI: uri, Name: name, MIMEType: mimeType}
	return l.shows(ctx, conn, policies.OpListResources)
}

// prompt reports whether the caller may see prompt p of conn.
func (l *lister) prompt(ctx context.Context, conn *upstream.Conn, p *mcp.Prompt) bool {
	l.in.Tool, l.in.Resource = policies.Tool{}, nil
	l.in.Prompt = &policies.Prompt{Name: p.Name, Title: p.Title}
	return l.shows(ctx, conn, policies.OpListPrompts)
}

// listInput is what the policies see of c asking something of conn,
// before what it is about.
func listInput(c Caller, conn *upstream.Conn) *policies.Input {
	in := policyInput(c.Principal, conn, nil, c.Origin)
	in.Client = policies.Client(c.Client)
	return in
}

// redact returns st as a non-admin sees it.
func redact(st ServerStatus, tools int) ServerStatus {
	st.PID = 0
	st.LastError = ""
	st.Restarts = 0
	st.Tools = tools
	return st
}

// statusFor returns st as c may see it, or false when c may not see the
// server at all.
func (g *generation) statusFor(c Caller, st ServerStatus) (ServerStatus, bool) {
	if c.Admin {
		return st, true
	}
	conn, ok := g.byName[st.Name]
	if !ok {
		return ServerStatus{}, false
	}
	conn = conn.Peek(c.Name)
	// Event publishing has no request context; a list rule is bounded by
	// its cost limit.
	ok, n := g.visible(context.Background(), c, conn)
	if !ok {
		return ServerStatus{}, false
	}
	return redact(st, n), true
}

// ServersFor returns the status of every server c may see, in config
// order, as c may see it.
func (h *Host) ServersFor(ctx context.Context, c Caller) []ServerStatus {
	g := h.gen()
	g.startSessions(ctx, c.Name)
	out := make([]ServerStatus, 0, len(g.conns))
	for _, conn := range g.conns {
		conn = conn.Peek(c.Name) // a per-principal server: the caller's own session
		st := conn.Snapshot()
		if c.Admin {
			out = append(out, st)
			continue
		}
		if ok, n := g.visible(ctx, c, conn); ok {
			out = append(out, redact(st, n))
		}
	}
	g.annotateCollisions(out)
	return out
}

// visibleConn returns the server called name when c may see it; a hidden
// server is an unknown one (named among the servers c may see). A
// per-principal server is judged by c's own session's tools.
func (g *generation) visibleConn(ctx context.Context, c Caller, name string) (*upstream.Conn, error) {
	conn, ok := g.byName[name]
	if ok {
		if g.sees(ctx, c, conn.Peek(c.Name)) {
			return conn, nil
		}
	}
	var known []string
	for _, conn := range g.conns {
		if g.sees(ctx, c, conn.Peek(c.Name)) {
			known = append(known, conn.Cfg.Name)
		}
	}
	return nil, &UnknownServerError{Server: name, Known: known}
}

// ServerFor returns one server's status as c may see it.
func (h *Host) ServerFor(ctx context.Context, c Caller, name string) (ServerStatus, error) {
	g := h.gen()
	conn, err := g.visibleConn(ctx, c, name)
	if err != nil {
		return ServerStatus{}, err
	}
	// A per-principal server: the caller's own session (started now).
	st, _ := g.statusFor(c, conn.As(ctx, c.Name).Snapshot())
	return st, nil
}

// PromptsFor returns the prompts of a ready server c may see (on c's own
// session of a per-principal server), those the `list` rules leave c.
func (h *Host) PromptsFor(ctx context.Context, c Caller, server string) ([]*mcp.Prompt, error) {
	g := h.gen()
	t, err := g.visibleTarget(ctx, c, server)
	if err != nil {
		return nil, err
	}
	l := g.lister(c)
	out := make([]*mcp.Prompt, 0, len(t.Catalog.Prompts))
	for _, p := range t.Catalog.Prompts {
		if p != nil && l.prompt(ctx, t.Conn, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// ResourcesFor returns the resources and templates of a ready server c may
// see (on c's own session of a per-principal server), those the `list`
// rules leave c.
func (h *Host) ResourcesFor(ctx context.Context, c Caller, server string) ([]*mcp.Resource, []*mcp.ResourceTemplate, error) {
	g := h.gen()
	t, err := g.visibleTarget(ctx, c, server)
	if err != nil {
		return nil, nil, err
	}
	l := g.lister(c)
	rs := make([]*mcp.Resource, 0, len(t.Catalog.Resources))
	for _, r := range t.Catalog.Resources {
		if r != nil && l.resource(ctx, t.Conn, r.URI, r.Name, r.MIMEType) {
			rs = append(rs, r)
		}
	}
	ts := make([]*mcp.ResourceTemplate, 0, len(t.Catalog.Templates))
	for _, rt := range t.Catalog.Templates {
		if rt != nil && l.resource(ctx, t.Conn, rt.URITemplate, rt.Name, rt.MIMEType) {
			ts = append(ts, rt)
		}
	}
	return rs, ts, nil
}

// CheckVisible fails with an UnknownServerError unless c may see server.
func (h *Host) CheckVisible(ctx context.Context, c Caller, server string) error {
	_, err := h.gen().visibleConn(ctx, c, server)
	return err
}
