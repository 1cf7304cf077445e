package upstream

import (
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ConfigRoots are a server block's roots as MCP roots.
func ConfigRoots(uris []string) []*mcp.Root {
	out := make([]*mcp.Root, 0, len(uris))
	for _, u := range uris {
		out = append(out, &mcp.Root{URI: u})
	}
	return out
}

// CurrentRoots returns the server's roots.
func (c *Conn) CurrentRoots() []string {
	c.rootsMu.Lock()
	defer c.rootsMu.Unlock()
	return c.roots
}

// SetRoots replaces the server's roots (a reload that changed only them):
// the current session's client drops the old ones and adds the new ones,
// and go-sdk sends notifications/roots/list_changed for each change, so a
// legacy server lists them again; a 2026-07-28 server gets them in its
// next roots/list round.
func (c *Conn) SetRoots(roots []string) {
	c.rootsMu.Lock()
	old, client := c.roots, c.client
	c.roots = roots
	c.rootsMu.Unlock()
	if slices.Equal(old, roots) || client == nil {
		return
	}
	var gone []string
	for _, r := range old {
		if !slices.Contains(roots, r) {
			gone = append(gone, r)
		}
	}
	var added []*mcp.Root
	for _, r := range roots {
		if !slices.Contains(old, r) {
			added = append(added, &mcp.Root{URI: r})
		}
	}
	if len(gone) > 0 {
		client.RemoveRoots(gone...)
	}
	client.AddRoots(added...)
	c.logger.Info("roots changed", "roots", len(roots), "added", len(added), "removed", len(gone))
}
