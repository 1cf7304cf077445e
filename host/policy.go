package host

import (
	"context"
)

// ToolsFor returns the tools that principal p may see (the list phase of
// the policies), of every ready server or of the named one.
func (h *Host) ToolsFor(ctx context.Context, p Principal, origin, server string) ([]Tool, error) {
	g := h.gen() // one generation: its tools, filtered by its policies
	g.StartSessions(ctx, p.Name)
	tools, err := g.Tools(server, p.Name)
	if err != nil || g.Policies == nil {
		return tools, err
	}
	l := g.Lister(Caller{Principal: p, Origin: origin})
	out := tools[:0]
	for _, t := range tools {
		if l.Tool(ctx, g.ByName[t.Server], t.Tool) {
			out = append(out, t)
		}
	}
	return out, nil
}
