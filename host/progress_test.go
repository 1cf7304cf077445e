package host_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// burstServer is a go-sdk server with one tool, progress, that reports
// progress three times and answers at once (as the elicit fixture's tool
// of that name does over stdio).
func burstServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "burst", Version: "1.0.0"}, nil)
	s.AddTool(&mcp.Tool{Name: "progress", Description: "Reports progress three times.", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				for i := 1; i <= 3; i++ {
					if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i)}); err != nil {
						return nil, err
					}
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "progressed"}}}, nil
		})
	return s
}

// TestProgressBeforeTheAnswer: every progress report a server sends
// before its answer reaches the caller before CallTool returns, although
// go-sdk completes the call as soon as the answer is read (progress.go).
// A server that reports and answers in one burst is the worst case; each
// transport and era is tried many times.
func TestProgressBeforeTheAnswer(t *testing.T) {
	remote := func(stateless bool, negotiation string) func(t *testing.T) config.Server {
		return func(t *testing.T) config.Server {
			srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return burstServer() },
				&mcp.StreamableHTTPOptions{Stateless: stateless}))
			t.Cleanup(srv.Close)
			s := remoteServer("ask", config.TransportStreamableHTTP, srv.URL)
			s.VersionNegotiation = negotiation
			s.HTTPProbeTimeout = config.HTTPProbeTimeoutFallback
			return s
		}
	}
	for _, tc := range []struct {
		name   string
		server func(t *testing.T) config.Server
		era    string
	}{
		{"stdio legacy", func(t *testing.T) config.Server { return elicitServer(t, config.NegotiationLegacy) }, host.EraLegacy},
		{"stdio modern", func(t *testing.T) config.Server { return elicitServer(t, config.NegotiationAuto) }, host.EraModern},
		{"streamable http legacy", remote(false, config.NegotiationLegacy), host.EraLegacy},
		{"streamable http modern", remote(true, config.NegotiationAuto), host.EraModern},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startHost(t, host.Options{}, tc.server(t))
			if st := mustStatus(t, h, "ask"); st.State != host.StateReady || st.Era != tc.era {
				t.Fatalf("state %s era %s (%s), want ready %s", st.State, st.Era, st.LastError, tc.era)
			}
			for i := range 25 {
				var mu sync.Mutex
				var got []host.Progress
				res, err := h.CallTool(t.Context(), host.CallToolRequest{Server: "ask", Tool: "progress",
					OnProgress: func(p host.Progress) { mu.Lock(); got = append(got, p); mu.Unlock() }})
				if err != nil || textOf(res) != "progressed" {
					t.Fatalf("call %d: %q %v", i+1, textOf(res), err)
				}
				mu.Lock()
				n := len(got)
				ok := n == 3
				for j, p := range got {
					ok = ok && p.Progress == float64(j+1) && p.Total == 3 && p.Message == fmt.Sprintf("step %d", j+1)
				}
				mu.Unlock()
				if !ok {
					t.Fatalf("call %d: the caller heard %+v by the time the call returned, want steps 1, 2, 3 in order", i+1, got)
				}
			}
		})
	}
}
