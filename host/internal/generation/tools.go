package generation

import (
	"sort"

	"github.com/mcphost/mcphost/apps"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/upstream"
)

// Tools is Tools for generation g, as principal sees them: a per-principal
// server's tools are those of principal's own session ("" none).
func (g *Gen) Tools(server, principal string) ([]upstream.Tool, error) {
	conns := g.Conns
	if server != "" {
		c, err := g.Conn(server)
		if err != nil {
			return nil, err
		}
		c = c.Peek(principal)
		if _, _, err := c.Current(); err != nil {
			return nil, err
		}
		conns = []*upstream.Conn{c}
	}
	var out []upstream.Tool
	for _, c := range conns {
		c = c.Peek(principal)
		_, cat, err := c.Current()
		if err != nil {
			continue
		}
		tools := make([]upstream.Tool, 0, len(cat.Tools))
		for _, t := range cat.Tools {
			if t != nil {
				tool := upstream.Tool{Server: c.Cfg.Name, Tool: t}
				if link, ok := apps.ToolLink(t); ok && c.Cfg.Apps != config.AppsOff {
					tool.App = &link
				}
				tools = append(tools, tool)
			}
		}
		sort.SliceStable(tools, func(i, j int) bool { return tools[i].Tool.Name < tools[j].Tool.Name })
		out = append(out, tools...)
	}
	return out, nil
}
