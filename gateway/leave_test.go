package gateway_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/gateway"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/policies"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// countingServer is a shared 2025-11-25 upstream on loopback whose one
// tool, write, counts its calls.
func countingServer(t *testing.T) (config.Server, *atomic.Int64) {
	t.Helper()
	var calls atomic.Int64
	up := mcp.NewServer(&mcp.Implementation{Name: "counter", Version: "1"}, nil)
	up.AddTool(&mcp.Tool{Name: "write", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		calls.Add(1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "written"}}}, nil
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil)}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return config.Server{
		Name: "store", Transport: config.TransportStreamableHTTP, URL: "http://" + ln.Addr().String(),
		VersionNegotiation: config.NegotiationLegacy, DiscoveryTimeout: 20 * time.Second, CallTimeout: time.Minute,
		Enabled: true, Apps: config.AppsAuto, SessionMode: config.SessionShared,
	}, &calls
}

// killable is a client's HTTP transport that can die at once, as a
// killed process does: its requests in flight are cut, nothing more is
// sent (no notifications/cancelled, no DELETE).
type killable struct {
	next http.RoundTripper
	dead context.Context
}

func (k killable) RoundTrip(r *http.Request) (*http.Response, error) {
	if k.dead.Err() != nil {
		return nil, errors.New("the client is dead")
	}
	ctx, cancel := context.WithCancel(r.Context())
	context.AfterFunc(k.dead, cancel)
	return k.next.RoundTrip(r.WithContext(ctx))
}

// TestAbortedCallEndsItsApproval: a gateway client whose call waits for
// an approval in the WebShell, and that then cancels it or goes away,
// ends the approval: the WebShell's stream hears approval_done with
// outcome cancelled, an answer given afterwards is refused as not found,
// and the tool never runs. In both eras: by notifications/cancelled, by
// a dropped connection (a killed client says nothing), and, on a
// 2025-11-25 session, by DELETE while the call's request stays open.
// Before, only the first ended it: a killed client's or a deleted
// session's approval stayed pending (the DELETE itself hung behind it),
// and approving it ran the call (research/newcomer.md, rows 3 and 8).
func TestAbortedCallEndsItsApproval(t *testing.T) {
	srv, calls := countingServer(t)
	set, errs := policies.Compile([]policies.Rule{{Name: "ask-writes", Phase: policies.PhaseCall, Effect: policies.EffectAsk, When: `tool.name == "write"`}}, policies.EffectAllow)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	// The approvals last long enough that only the client's leaving ends
	// them (expiry would be "expired"), and short enough that a daemon
	// that keeps them fails the test rather than hangs it.
	e := newEnvApproval(t, &config.Config{Servers: []config.Server{srv}, PolicySet: set},
		func(net.Listener) gateway.Options { return gateway.Options{Version: "test"} }, nil, waitBound/2)
	alice := host.Principal{Name: "alice", Groups: []string{"analysts"}}
	events, stop, err := e.h.Subscribe(host.Caller{Principal: alice})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	for _, tc := range []struct {
		name, version string
		// leave makes the client leave: cancel ends the call's context,
		// kill the client's transport.
		leave func(t *testing.T, cs *mcp.ClientSession, cancel, kill func())
	}{
		{"legacy cancels", legacyVersion, func(_ *testing.T, _ *mcp.ClientSession, cancel, _ func()) { cancel() }},
		{"legacy is killed", legacyVersion, func(_ *testing.T, _ *mcp.ClientSession, _, kill func()) { kill() }},
		{"legacy deletes its session", legacyVersion, func(t *testing.T, cs *mcp.ClientSession, _, _ func()) {
			ctx, cancel := context.WithTimeout(t.Context(), waitBound)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodDelete, e.base+"/mcp", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+aliceToken)
			req.Header.Set("Mcp-Session-Id", cs.ID())
			req.Header.Set("Mcp-Protocol-Version", legacyVersion)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusNoContent {
				t.Errorf("DELETE: %s, want 204", resp.Status)
			}
		}},
		{"modern cancels", modernVersion, func(_ *testing.T, _ *mcp.ClientSession, cancel, _ func()) { cancel() }},
		{"modern is killed", modernVersion, func(_ *testing.T, _ *mcp.ClientSession, _, kill func()) { kill() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dead, kill := context.WithCancel(t.Context())
			defer kill()
			client := mcp.NewClient(&mcp.Implementation{Name: "leaver", Version: "1"}, nil)
			tr := &mcp.StreamableClientTransport{Endpoint: e.base + "/mcp", MaxRetries: -1,
				HTTPClient: &http.Client{Transport: bearer{token: aliceToken, next: killable{next: http.DefaultTransport, dead: dead}}}}
			cctx, ccancel := context.WithTimeout(t.Context(), waitBound)
			defer ccancel()
			cs, err := client.Connect(cctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: tc.version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			defer kill() // first: go-sdk's Close waits for the calls in flight
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			returned := make(chan struct{})
			go func() {
				defer close(returned)
				_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "store__write", Arguments: map[string]any{}})
			}()
			id := ""
			for ev := range waitEvents(t, events) {
				if a, ok := ev.Data.(host.Approval); ok && ev.Type == "approval" {
					id = a.ID
					break
				}
			}
			tc.leave(t, cs, cancel, kill)
			for ev := range waitEvents(t, events) {
				if d, ok := ev.Data.(host.ApprovalDone); ok && ev.Type == "approval_done" && d.ID == id {
					if d.Outcome != host.ApprovalCancelled {
						t.Fatalf("the approval ended %s, want %s", d.Outcome, host.ApprovalCancelled)
					}
					break
				}
			}
			if err := e.h.Answer(alice, id, true); !errors.Is(err, host.ErrNotFound) {
				t.Errorf("approving it afterwards: %v, want not found", err)
			}
			if pending := e.h.PendingApprovals(alice); len(pending) != 0 {
				t.Errorf("still pending: %+v", pending)
			}
			kill() // the call that is still waiting for its answer (cancel, delete) returns
			<-returned
			if n := calls.Load(); n != 0 {
				t.Fatalf("the tool ran %d times", n)
			}
		})
	}
}

// waitEvents yields the events of a subscription until the caller stops,
// failing the test when none comes within waitBound.
func waitEvents(t *testing.T, events <-chan host.Event) func(func(host.Event) bool) {
	return func(yield func(host.Event) bool) {
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					t.Fatal("the event stream ended")
				}
				if !yield(ev) {
					return
				}
			case <-time.After(waitBound):
				t.Fatal("no event within the bound")
			}
		}
	}
}
