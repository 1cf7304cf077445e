package host

import (
	"context"

	"github.com/mcphost/mcphost/host/internal/generation"
	"github.com/mcphost/mcphost/host/internal/pipeline"
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

// listInput is what the policies see of c asking something of conn,
// before what it is about.
func listInput(c Caller, conn *upstream.Conn) *policies.Input {
	in := pipeline.PolicyInput(c.Principal, conn, nil, c.Origin)
	in.Client = policies.Client(c.Client)
	return in
}

// ServersFor returns the status of every server c may see, in config
// order, as c may see it.
func (h *Host) ServersFor(ctx context.Context, c Caller) []ServerStatus {
	g := h.gen()
	g.StartSessions(ctx, c.Name)
	out := make([]ServerStatus, 0, len(g.Conns))
	for _, conn := range g.Conns {
		conn = conn.Peek(c.Name) // a per-principal server: the caller's own session
		st := conn.Snapshot()
		if c.Admin {
			out = append(out, st)
			continue
		}
		if ok, n := g.Visible(ctx, c, conn); ok {
			out = append(out, generation.Redact(st, n))
		}
	}
	annotateCollisions(g, out)
	return out
}

// ServerFor returns one server's status as c may see it.
func (h *Host) ServerFor(ctx context.Context, c Caller, name string) (ServerStatus, error) {
	g := h.gen()
	conn, err := g.VisibleConn(ctx, c, name)
	if err != nil {
		return ServerStatus{}, err
	}
	// A per-principal server: the caller's own session (started now).
	st, _ := g.StatusFor(c, conn.As(ctx, c.Name).Snapshot())
	return st, nil
}

// PromptsFor returns the prompts of a ready server c may see (on c's own
// session of a per-principal server), those the `list` rules leave c.
func (h *Host) PromptsFor(ctx context.Context, c Caller, server string) ([]*mcp.Prompt, error) {
	g := h.gen()
	t, err := g.VisibleTarget(ctx, c, server)
	if err != nil {
		return nil, err
	}
	l := g.Lister(c)
	out := make([]*mcp.Prompt, 0, len(t.Catalog.Prompts))
	for _, p := range t.Catalog.Prompts {
		if p != nil && l.Prompt(ctx, t.Conn, p) {
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
	t, err := g.VisibleTarget(ctx, c, server)
	if err != nil {
		return nil, nil, err
	}
	l := g.Lister(c)
	rs := make([]*mcp.Resource, 0, len(t.Catalog.Resources))
	for _, r := range t.Catalog.Resources {
		if r != nil && l.Resource(ctx, t.Conn, r.URI, r.Name, r.MIMEType) {
			rs = append(rs, r)
		}
	}
	ts := make([]*mcp.ResourceTemplate, 0, len(t.Catalog.Templates))
	for _, rt := range t.Catalog.Templates {
		if rt != nil && l.Resource(ctx, t.Conn, rt.URITemplate, rt.Name, rt.MIMEType) {
			ts = append(ts, rt)
		}
	}
	return rs, ts, nil
}

// CheckVisible fails with an UnknownServerError unless c may see server.
func (h *Host) CheckVisible(ctx context.Context, c Caller, server string) error {
	_, err := h.gen().VisibleConn(ctx, c, server)
	return err
}
