package gateway_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/gateway"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/mcphost/mcphost/policies"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestApproversNotInBand: an ask rule that names approvers is never put
// to the client that made the call unless the rule lets its principal
// approve: bob's client, which can elicit and would approve, is not
// asked in either era (no elicitation, no input_required round of the
// gateway's); the call waits until an approver (alice, of the group
// analysts) approves it. alice's own client, which the rule lets approve,
// is asked in-band as before. Before, any client that declared
// elicitation answered its own approvals (research/redteam.md F15).
func TestApproversNotInBand(t *testing.T) {
	set, errs := policies.Compile([]policies.Rule{{Name: "analysts-approve", Phase: policies.PhaseCall, Effect: policies.EffectAsk,
		When: `tool.name == "echo"`, Message: "echo needs an analyst", Approvers: []string{"analysts"}}}, policies.EffectAllow)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	// Approvals last long enough for the test to answer them.
	e := newEnvApproval(t, &config.Config{Servers: []config.Server{stdioServer("fx", testbin.Build(t, wellbehavedPkg))}, PolicySet: set},
		func(net.Listener) gateway.Options { return gateway.Options{Version: "test"} }, nil, waitBound)
	alice := host.Principal{Name: "alice", Groups: []string{"analysts"}}
	var asked atomic.Int64
	approving := &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
	}}
	for _, version := range []string{legacyVersion, modernVersion} {
		t.Run("bob "+version, func(t *testing.T) {
			asked.Store(0)
			cs := e.connect(t, "/mcp", bobToken, version, approving)
			done := make(chan *mcp.CallToolResult, 1)
			go func() {
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "fx__echo", Arguments: map[string]any{"text": "by an analyst"}})
				if err != nil {
					t.Error(err)
				}
				done <- res
			}()
			var pending []host.Approval
			for deadline := time.Now().Add(waitBound); len(pending) == 0; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("no approval pending for the approvers")
				}
				pending = e.h.PendingApprovals(alice)
			}
			if a := pending[0]; a.Principal != "bob" || !a.CanAnswer {
				t.Fatalf("alice's pending approval = %+v, want bob's, hers to answer", a)
			}
			if err := e.h.Answer(host.Principal{Name: "bob"}, pending[0].ID, true); !errors.Is(err, host.ErrNotApprover) {
				t.Fatalf("bob approves his own call: %v, want ErrNotApprover", err)
			}
			if err := e.h.Answer(alice, pending[0].ID, true); err != nil {
				t.Fatal(err)
			}
			if res := <-done; res == nil || res.IsError || textOf(res) != "by an analyst" {
				t.Fatalf("the approved call = %+v", res)
			}
			if n := asked.Load(); n != 0 {
				t.Fatalf("bob's client was asked %d times", n)
			}
		})
	}
	t.Run("alice", func(t *testing.T) {
		asked.Store(0)
		cs := e.connect(t, "/mcp", aliceToken, legacyVersion, approving)
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "fx__echo", Arguments: map[string]any{"text": "mine"}})
		if err != nil || res.IsError || !strings.Contains(textOf(res), "mine") {
			t.Fatalf("alice's call = %+v, %v", res, err)
		}
		if n := asked.Load(); n != 1 {
			t.Fatalf("alice's client was asked %d times, want once", n)
		}
	})
}
