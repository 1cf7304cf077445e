package host

import (
	"context"
	"slices"
	"sort"
	"sync"

	"github.com/mcphost/mcphost/apps"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/generation"
	"github.com/mcphost/mcphost/toolsearch"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxSearchIndexes bounds the indexes the host keeps: one per set of
// catalogs (a server with per-principal sessions gives each principal its
// own catalog, so a few sets may be in use at once).
const maxSearchIndexes = 8

// maxSearchQuery bounds a query's length in bytes; a longer one is cut.
const maxSearchQuery = 4096

// searchIndexes caches the tool search indexes by the identity of the
// catalogs they were built from. A catalog is replaced, never changed in
// place (list_changed, a restart and a reload each give a new one), so an
// index holds as long as every catalog it was built from is current.
type searchIndexes struct {
	mu      sync.Mutex
	entries []*searchIndex // most recently used first
}

// searchIndex is the index of one set of catalogs: the generation (whose
// config has the servers' search hints) and each server's catalog.
type searchIndex struct {
	key   []any
	tools []Tool
	rank  toolsearch.Ranker
}

// SearchTools ranks the tools c may see (the list phase of the policies,
// as [Host.ToolsFor] returns them) against query, best first, and returns
// at most limit of them, of the named servers only when servers is not
// empty (a server c may not see is an UnknownServerError, like a missing
// one); total is how many matched. A query with no word any tool has
// matches nothing. The index is built once per set of catalogs and kept
// until one of them changes; c's view filters it.
func (h *Host) SearchTools(ctx context.Context, c Caller, query string, servers []string, limit int) (tools []Tool, total int, err error) {
	if len(query) > maxSearchQuery {
		query = query[:maxSearchQuery]
	}
	g := h.gen()
	for _, s := range servers {
		// A server c may not see is unknown to it, as on every route.
		if _, err := g.VisibleConn(ctx, c, s); err != nil {
			return nil, 0, err
		}
	}
	g.StartSessions(ctx, c.Name)
	si := h.searchIndexOf(ctx, g, c.Name)
	l := g.Lister(c)
	keep := func(i int) bool {
		t := si.tools[i]
		if len(servers) > 0 && !slices.Contains(servers, t.Server) {
			return false
		}
		if g.Policies == nil {
			return true
		}
		conn, ok := g.ByName[t.Server]
		return ok && l.Tool(ctx, conn, t.Tool)
	}
	hits, total := si.rank.Rank(ctx, query, max(limit, 0), keep)
	if err := ctx.Err(); err != nil {
		return nil, 0, err // a rule may have been cut short
	}
	tools = make([]Tool, 0, len(hits))
	for _, hit := range hits {
		tools = append(tools, si.tools[hit.Doc])
	}
	return tools, total, nil
}

// searchIndexOf returns the index of the catalogs principal sees in g,
// building it when one of them changed since the last.
func (h *Host) searchIndexOf(ctx context.Context, g *generation.Gen, principal string) *searchIndex {
	key := []any{g}
	type part struct {
		server string
		apps   bool
		tools  []*mcp.Tool
	}
	var parts []part
	for _, conn := range g.Conns {
		conn = conn.Peek(principal)
		_, cat, err := conn.Current()
		if err != nil {
			continue
		}
		key = append(key, conn, cat)
		p := part{server: conn.Cfg.Name, apps: conn.Cfg.Apps != config.AppsOff}
		for _, t := range cat.Tools {
			if t != nil {
				p.tools = append(p.tools, t)
			}
		}
		parts = append(parts, p)
	}
	sx := &h.search
	sx.mu.Lock()
	for i, e := range sx.entries {
		if slices.Equal(e.key, key) {
			copy(sx.entries[1:i+1], sx.entries[:i])
			sx.entries[0] = e
			sx.mu.Unlock()
			return e
		}
	}
	sx.mu.Unlock()

	si := &searchIndex{key: key}
	var docs []toolsearch.Doc
	for _, p := range parts {
		var hints []string
		if s := g.Cfg.Server(p.server); s != nil {
			hints = s.SearchHint
		}
		sort.SliceStable(p.tools, func(i, j int) bool { return p.tools[i].Name < p.tools[j].Name })
		for _, mt := range p.tools {
			t := Tool{Server: p.server, Tool: mt}
			if link, ok := apps.ToolLink(mt); ok && p.apps {
				t.App = &link
			}
			si.tools = append(si.tools, t)
			docs = append(docs, toolsearch.ToolDoc(p.server, mt, hints))
		}
	}
	si.rank = h.SearchRanker(ctx, docs)

	sx.mu.Lock()
	defer sx.mu.Unlock()
	sx.entries = slices.Insert(sx.entries, 0, si)
	if len(sx.entries) > maxSearchIndexes {
		sx.entries = sx.entries[:maxSearchIndexes]
	}
	return si
}
