package host

import (
	"context"
	"time"

	"github.com/mcphost/mcphost/host/store"
)

// GatewayAppContexts returns the model contexts (ui/update-model-context)
// that the MCP Apps of a gateway client's calls gave after since: the
// WebShell renders the Apps of the calls in the client's transcript
// session sessionID, and what they give is for the client's model, which
// the gateway hands it with the client's next result (gateway/appcontext.go).
func (h *Host) GatewayAppContexts(ctx context.Context, c Caller, sessionID string, since time.Time) ([]store.SessionAppContext, error) {
	if h.store == nil || sessionID == "" {
		return nil, nil
	}
	return h.store.SessionAppContexts(ctx, c.Name, sessionID, since)
}

// AppContextVersion changes whenever an App gives context for the model;
// the gateway reads GatewayAppContexts only when it has (0 without a
// store).
func (h *Host) AppContextVersion() uint64 {
	if h.store == nil {
		return 0
	}
	return h.store.AppContextVersion()
}
