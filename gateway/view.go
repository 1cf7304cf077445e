package gateway

import (
	"context"
	"strings"
	"sync"

	"github.com/mcphost/mcphost/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxViews bounds the views one table keeps: past it a view is computed
// for each request and not kept (a client that names itself anew on every
// request cannot grow the daemon's memory).
const maxViews = 1024

// A view is what one caller sees of a table: the tools its `list` rules
// leave (in the form the endpoint lists them) and the servers it may see.
// List rules are pure functions of the caller, the client it names and the
// tool, so a view holds until the table is rebuilt — on every catalog
// change, reload or server status change — and a flood of tools/list from
// one client costs a map lookup each, not an evaluation of every rule on
// every tool.
type view struct {
	t       *table // the table the view is of
	tools   []*mcp.Tool
	servers []string
	names   map[string]*mcp.Tool // tools by served name

	// What search mode lists and how large the whole list is, computed
	// on first use (discovery.go).
	searchOnce sync.Once
	searchList []*mcp.Tool
	size       int
}

// views caches the views of one table by caller.
type views struct {
	mu sync.Mutex
	m  map[string]*view
}

// viewKey is everything of a caller the list phase can read.
func viewKey(c host.Caller) string {
	return strings.Join([]string{c.Name, strings.Join(c.Groups, "\x01"), c.Origin, c.Client.Name, c.Client.Version}, "\x00")
}

// view returns c's view of the endpoint's current table.
func (e *endpoint) view(ctx context.Context, c host.Caller) *view {
	t := e.table.Load()
	key := viewKey(c)
	t.views.mu.Lock()
	v, ok := t.views.m[key]
	t.views.mu.Unlock()
	if ok {
		return v
	}
	tools, servers := e.g.h.GatewayFilter(ctx, c, t.cat)
	v = &view{t: t, tools: make([]*mcp.Tool, 0, len(tools)), servers: servers, names: make(map[string]*mcp.Tool, len(tools))}
	for _, gt := range tools {
		adv := t.advertised[gt.Name]
		if adv == nil {
			adv = e.advertise(gt)
		}
		v.tools = append(v.tools, adv)
		v.names[gt.Name] = adv
	}
	if ctx.Err() != nil {
		return v // a rule may have been cut short: do not keep it
	}
	t.views.mu.Lock()
	if t.views.m == nil {
		t.views.m = map[string]*view{}
	}
	if len(t.views.m) < maxViews {
		t.views.m[key] = v
	}
	t.views.mu.Unlock()
	return v
}
