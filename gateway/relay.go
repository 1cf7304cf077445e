package gateway

import (
	"fmt"

	"github.com/mcphost/mcphost/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// clientRelay is what the host needs to put a server's own requests
// (elicitation, sampling) to the client of a 2025-11-25 session, for a
// server block with session_mode = "per_client" (host/perclient.go): the
// session's key, the capabilities it declared and how to ask it. A
// 2026-07-28 client has no session to be asked on (its server's requests
// come as input_required rounds, which the gateway relays anyway): nil.
//
// The first call of a session also watches it, so that its end closes
// its upstream sessions.
func (g *Gateway) clientRelay(ss *mcp.ServerSession) *host.ClientRelay {
	if ss == nil {
		return nil
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.ProtocolVersion >= modernVersion {
		return nil
	}
	key := ss.ID()
	if key == "" {
		key = fmt.Sprintf("%p", ss) // a stdio session has no id; it is the only one of its process
	}
	key = "gateway\x00" + key
	rel := &host.ClientRelay{Key: key}
	if caps := ip.Capabilities; caps != nil {
		if caps.Elicitation != nil {
			rel.Elicitation, rel.Elicit = caps.Elicitation, ss.Elicit
		}
		if caps.Sampling != nil {
			rel.Sampling, rel.CreateMessage = caps.Sampling, ss.CreateMessage
		}
	}
	if _, watched := g.relays.LoadOrStore(key, struct{}{}); !watched {
		go func() {
			_ = ss.Wait()
			g.relays.Delete(key)
			g.h.ReleaseClient(key)
		}()
	}
	return rel
}
