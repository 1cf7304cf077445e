package gateway

import (
	"encoding/json"
	"net/http"

	"github.com/mcphost/mcphost/host"
)

// closeWhenStopping ends the legacy sessions (and their GET streams) when
// the daemon has drained and stops serving, so that the HTTP server's
// shutdown does not wait out its bound on streams that never end; or
// returns when the gateway closes first.
func (g *Gateway) closeWhenStopping() {
	select {
	case <-g.h.Stopping():
		g.Close()
	case <-g.closedCh:
	}
}

// refuseDraining answers a 2026-07-28 tools/call (its Mcp-Method header
// says so without reading the body) with HTTP 503 while the daemon drains:
// the call has not started, and a load balancer may retry a 503 on
// another replica, where any 2026-07-28 request may go. Other requests go
// on; a legacy session's new calls get the pipeline's DrainingError as a
// JSON-RPC error on their session, which this replica holds.
func refuseDraining(h *host.Host, w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost || !stateless(r) || r.Header.Get("Mcp-Method") != "tools/call" || h.Readiness().Status != "draining" {
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", "1")
	w.WriteHeader(http.StatusServiceUnavailable)
	_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": codeServerError, "message": (&host.DrainingError{Replica: h.Replica()}).Error()}})
	return true
}
