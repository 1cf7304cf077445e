package generation

import (
	"context"

	"github.com/mcphost/mcphost/host/internal/identity"
	"github.com/mcphost/mcphost/host/internal/upstream"
	"github.com/mcphost/mcphost/policies"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Visible reports whether c may see conn's server and how many of its tools.
func (g *Gen) Visible(ctx context.Context, c identity.Caller, conn *upstream.Conn) (bool, int) {
	_, cat, err := conn.Current()
	total := 0
	if err == nil {
		total = len(cat.Tools)
	}
	if c.Admin || g.Policies == nil {
		return true, total
	}
	if total == 0 {
		return g.VisibleWithoutTools(ctx, c, conn), 0
	}
	n := 0
	l := g.Lister(c)
	for _, t := range cat.Tools {
		if t != nil && l.Tool(ctx, conn, t) {
			n++
		}
	}
	return n > 0, n
}

// Sees reports whether c may see conn's server: visible, deciding only
// until the first tool c may see (every operation on a server asks it).
func (g *Gen) Sees(ctx context.Context, c identity.Caller, conn *upstream.Conn) bool {
	if c.Admin || g.Policies == nil {
		return true
	}
	_, cat, err := conn.Current()
	if err != nil || len(cat.Tools) == 0 {
		return g.VisibleWithoutTools(ctx, c, conn)
	}
	l := g.Lister(c)
	for _, t := range cat.Tools {
		if t != nil && l.Tool(ctx, conn, t) {
			return true
		}
	}
	return false
}

// VisibleWithoutTools decides whether c may see conn while it lists no
// tools (none, or not ready): the list rules with an empty tool.
func (g *Gen) VisibleWithoutTools(ctx context.Context, c identity.Caller, conn *upstream.Conn) bool {
	return g.Lister(c).Tool(ctx, conn, &mcp.Tool{})
}

// Lister is the one list filter: the `list` phase of the policies for one
// caller, over the tools, resources, resource templates and prompts of
// the servers. Its input is reused from item to item: a lister is for one
// goroutine.
type Lister struct {
	set *policies.Set // nil: everything is shown
	in  policies.Input
}

// Lister returns the list filter of c under g's policies.
func (g *Gen) Lister(c identity.Caller) *Lister {
	return &Lister{set: g.Policies, in: policies.Input{Origin: c.Origin, Client: policies.Client(c.Client),
		Principal: policies.Principal{Name: c.Name, Groups: c.Groups}}}
}

// shows decides for the input as set up for one item of conn.
func (l *Lister) shows(ctx context.Context, conn *upstream.Conn, op string) bool {
	if l.set == nil {
		return true
	}
	l.in.Server, l.in.Era, l.in.Op = conn.Cfg.Name, conn.Era(), op
	return l.set.Decide(ctx, policies.PhaseList, &l.in).Allowed()
}

// Tool reports whether the caller may see tool of conn.
func (l *Lister) Tool(ctx context.Context, conn *upstream.Conn, t *mcp.Tool) bool {
	l.in.Tool, l.in.Resource, l.in.Prompt = policies.ToolFromMCP(t), nil, nil
	return l.shows(ctx, conn, policies.OpListTools)
}

// Resource reports whether the caller may see a resource (or a resource
// template: uri is the template) of conn.
func (l *Lister) Resource(ctx context.Context, conn *upstream.Conn, uri, name, mimeType string) bool {
	l.in.Tool, l.in.Prompt = policies.Tool{}, nil
	l.in.Resource = &policies.Resource{URI: uri, Name: name, MIMEType: mimeType}
	return l.shows(ctx, conn, policies.OpListResources)
}

// Prompt reports whether the caller may see prompt p of conn.
func (l *Lister) Prompt(ctx context.Context, conn *upstream.Conn, p *mcp.Prompt) bool {
	l.in.Tool, l.in.Resource = policies.Tool{}, nil
	l.in.Prompt = &policies.Prompt{Name: p.Name, Title: p.Title}
	return l.shows(ctx, conn, policies.OpListPrompts)
}

// Redact returns st as a non-admin sees it.
func Redact(st upstream.ServerStatus, tools int) upstream.ServerStatus {
	st.PID = 0
	st.LastError = ""
	st.Restarts = 0
	st.Tools = tools
	return st
}

// StatusFor returns st as c may see it, or false when c may not see the
// server at all.
func (g *Gen) StatusFor(c identity.Caller, st upstream.ServerStatus) (upstream.ServerStatus, bool) {
	if c.Admin {
		return st, true
	}
	conn, ok := g.ByName[st.Name]
	if !ok {
		return upstream.ServerStatus{}, false
	}
	conn = conn.Peek(c.Name)
	// Event publishing has no request context; a list rule is bounded by
	// its cost limit.
	ok, n := g.Visible(context.Background(), c, conn)
	if !ok {
		return upstream.ServerStatus{}, false
	}
	return Redact(st, n), true
}

// VisibleConn returns the server called name when c may see it; a hidden
// server is an unknown one (named among the servers c may see). A
// per-principal server is judged by c's own session's tools.
func (g *Gen) VisibleConn(ctx context.Context, c identity.Caller, name string) (*upstream.Conn, error) {
	conn, ok := g.ByName[name]
	if ok {
		if g.Sees(ctx, c, conn.Peek(c.Name)) {
			return conn, nil
		}
	}
	var known []string
	for _, conn := range g.Conns {
		if g.Sees(ctx, c, conn.Peek(c.Name)) {
			known = append(known, conn.Cfg.Name)
		}
	}
	return nil, &UnknownServerError{Server: name, Known: known}
}
