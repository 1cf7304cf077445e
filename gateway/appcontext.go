package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An MCP App of a gateway client's call renders in the WebShell (the
// client's transcript session is there) and may give context for the
// model (ui/update-model-context). The model is the client's, and the one
// way to it is a result: the client's next tool result carries what its
// Apps gave since the last one, as a text block the model reads and, whole,
// under _meta["io.mcphost/appContext"]. Each context is handed on once per
// update.

// appContextMetaKey names the contexts in a result's _meta.
const appContextMetaKey = "io.mcphost/appContext"

// maxAppContextText bounds the text one result gains.
const maxAppContextText = 256 << 10

// contextMarks remembers, per transcript session, when the last context
// handed to its client was given.
type contextMarks struct{ m sync.Map } // session id → *contextMark

type contextMark struct {
	mu sync.Mutex
	at time.Time
	// version is the host's AppContextVersion at the last read: while it
	// holds, no App gave anything, and a call costs no query.
	version uint64
}

// mark returns the session's mark, new ones at now: a context given before
// this daemon first served the session is not handed on again.
func (cm *contextMarks) mark(sessionID string) *contextMark {
	if m, ok := cm.m.Load(sessionID); ok {
		return m.(*contextMark)
	}
	m, _ := cm.m.LoadOrStore(sessionID, &contextMark{at: time.Now()})
	return m.(*contextMark)
}

// withAppContexts returns res with the contexts the Apps of the client's
// session gave since its last result, or res itself when there are none.
func (g *Gateway) withAppContexts(ctx context.Context, c host.Caller, sessionID string, res *mcp.CallToolResult) *mcp.CallToolResult {
	if sessionID == "" || res == nil {
		return res
	}
	m := g.marks.mark(sessionID)
	m.mu.Lock()
	defer m.mu.Unlock()
	v := g.h.AppContextVersion() // before the read: a context set during it is read next time
	if v == m.version {
		return res
	}
	got, err := g.h.GatewayAppContexts(ctx, c, sessionID, m.at)
	if err != nil {
		g.log.Warn("reading the App contexts of a client's session", "session", sessionID, "err", err)
		return res
	}
	m.version = v
	if len(got) == 0 {
		return res
	}
	var text strings.Builder
	meta := make([]map[string]any, 0, len(got))
	for _, ac := range got {
		m.at = ac.UpdatedAt
		var p struct {
			Content           []json.RawMessage `json:"content"`
			StructuredContent json.RawMessage   `json:"structuredContent"`
		}
		if json.Unmarshal(ac.Context, &p) != nil {
			continue
		}
		var parts []string
		for _, raw := range p.Content {
			var b struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if json.Unmarshal(raw, &b) == nil && b.Type == "text" && b.Text != "" {
				parts = append(parts, b.Text)
			}
		}
		if len(p.StructuredContent) > 0 && string(p.StructuredContent) != "null" {
			parts = append(parts, string(p.StructuredContent))
		}
		if len(parts) == 0 {
			continue
		}
		block := fmt.Sprintf("Context the MCP App of %s.%s gave for the model (its entry %s):\n%s", ac.Server, ac.Tool, ac.EntryID, strings.Join(parts, "\n"))
		if text.Len()+len(block) > maxAppContextText {
			g.log.Warn("App contexts over the bound of one result; the rest is left out", "session", sessionID, "bound", maxAppContextText)
			break
		}
		if text.Len() > 0 {
			text.WriteString("\n\n")
		}
		text.WriteString(block)
		meta = append(meta, map[string]any{"entryId": ac.EntryID, "server": ac.Server, "tool": ac.Tool,
			"updatedAt": ac.UpdatedAt, "context": ac.Context})
	}
	if text.Len() == 0 {
		return res
	}
	out := *res
	out.Content = append(slices.Clone(res.Content), &mcp.TextContent{Text: text.String()})
	out.Meta = maps.Clone(res.Meta)
	if out.Meta == nil {
		out.Meta = mcp.Meta{}
	}
	out.Meta[appContextMetaKey] = meta
	return &out
}
