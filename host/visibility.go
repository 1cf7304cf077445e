package host

import (
	"context"

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
func (g *generation) visible(ctx context.Context, c Caller, conn *serverConn) (bool, int) {
	_, cat, err := conn.current()
	total := 0
	if err == nil {
		total = len(cat.tools)
	}
	if c.Admin || g.policies == nil {
		return true, total
	}
	if total == 0 {
		return g.visibleWithoutTools(ctx, c, conn), 0
	}
	n := 0
	for _, t := range cat.tools {
		if t == nil {
			continue
		}
		if d := g.policies.Decide(ctx, policies.PhaseList, callerInput(c, conn, t)); d.Allowed() {
			n++
		}
	}
	return n > 0, n
}

// visibleWithoutTools decides whether c may see conn while it lists no
// tools (none, or not ready): the list rules with an empty tool.
func (g *generation) visibleWithoutTools(ctx context.Context, c Caller, conn *serverConn) bool {
	return g.policies.Decide(ctx, policies.PhaseList, callerInput(c, conn, &mcp.Tool{})).Allowed()
}

// callerInput is what the list phase sees of tool on conn for c.
func callerInput(c Caller, conn *serverConn, tool *mcp.Tool) *policies.Input {
	in := policyInput(c.Principal, conn, tool, c.Origin)
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
	conn = conn.peek(c.Name)
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
		conn = conn.peek(c.Name) // a per-principal server: the caller's own session
		st := conn.snapshot()
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
// server is an unknown one (named among the servers c may see).
func (g *generation) visibleConn(ctx context.Context, c Caller, name string) (*serverConn, error) {
	conn, ok := g.byName[name]
	if ok {
		if vis, _ := g.visible(ctx, c, conn); vis {
			return conn, nil
		}
	}
	var known []string
	for _, conn := range g.conns {
		if vis, _ := g.visible(ctx, c, conn); vis {
			known = append(known, conn.cfg.Name)
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
	st, _ := g.statusFor(c, conn.as(ctx, c.Name).snapshot())
	return st, nil
}

// PromptsFor returns the prompts of a ready server c may see.
func (h *Host) PromptsFor(ctx context.Context, c Caller, server string) ([]*mcp.Prompt, error) {
	if _, err := h.gen().visibleConn(ctx, c, server); err != nil {
		return nil, err
	}
	return h.Prompts(server)
}

// ResourcesFor returns the resources and templates of a ready server c may
// see.
func (h *Host) ResourcesFor(ctx context.Context, c Caller, server string) ([]*mcp.Resource, []*mcp.ResourceTemplate, error) {
	if _, err := h.gen().visibleConn(ctx, c, server); err != nil {
		return nil, nil, err
	}
	return h.Resources(server)
}

// CheckVisible fails with an UnknownServerError unless c may see server.
func (h *Host) CheckVisible(ctx context.Context, c Caller, server string) error {
	_, err := h.gen().visibleConn(ctx, c, server)
	return err
}
