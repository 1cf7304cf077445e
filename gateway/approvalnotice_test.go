package gateway_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/gateway"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/mcphost/mcphost/policies"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestApprovalNotice: a gateway client whose call waits for an approval
// in the WebShell (it cannot be asked in-band: it declares no
// elicitation) is told so at once, in both eras: a progress notification
// on its progress token and, when it asked for log messages, a log
// message, each naming the WebShell's address, the rule and the
// approval_timeout the wait is bounded by. The notice arrives while the
// call still waits (nobody has answered before it is read). Before, such
// a client waited in silence until the approval expired
// (research/newcomer.md #7, interop.md F12).
func TestApprovalNotice(t *testing.T) {
	set, errs := policies.Compile([]policies.Rule{{Name: "ask-echo", Phase: policies.PhaseCall, Effect: policies.EffectAsk,
		When: `tool.name == "echo"`, Message: "echo needs a person"}}, policies.EffectAllow)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	e := newEnvApproval(t, &config.Config{Servers: []config.Server{stdioServer("fx", testbin.Build(t, wellbehavedPkg))}, PolicySet: set},
		func(net.Listener) gateway.Options { return gateway.Options{Version: "test"} }, nil, waitBound)
	alice := host.Principal{Name: "alice", Groups: []string{"analysts"}}
	for _, version := range []string{legacyVersion, modernVersion} {
		t.Run(version, func(t *testing.T) {
			notices := make(chan string, 8)
			cs := e.connect(t, "/mcp", aliceToken, version, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
					notices <- "progress: " + r.Params.Message
				},
				LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
					notices <- fmt.Sprint("log: ", r.Params.Data)
				},
			})
			params := &mcp.CallToolParams{Name: "fx__echo", Arguments: map[string]any{"text": "approved"}}
			params.SetProgressToken("t-" + version)
			wantLog := version == legacyVersion
			if wantLog {
				if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
					t.Fatal(err)
				}
			}
			done := make(chan *mcp.CallToolResult, 1)
			go func() {
				res, err := cs.CallTool(t.Context(), params)
				if err != nil {
					t.Error(err)
				}
				done <- res
			}()
			want := 1
			if wantLog {
				want = 2
			}
			got := map[string]string{}
			for len(got) < want {
				select {
				case n := <-notices:
					kind, text, _ := strings.Cut(n, ": ")
					if strings.Contains(text, "waits for a person to approve it") {
						got[kind] = text
					}
				case res := <-done:
					t.Fatalf("the call ended before its notice: %+v", res)
				case <-time.After(waitBound):
					t.Fatalf("no notice of the waiting approval; got %v", got)
				}
			}
			for kind, text := range got {
				if !strings.Contains(text, "the call of fx__echo waits for a person to approve it in the WebShell at "+e.h.WebShellURL()) ||
					!strings.Contains(text, `(rule "ask-echo")`) || !strings.Contains(text, "(approval_timeout)") {
					t.Errorf("the %s notice says %q", kind, text)
				}
			}
			pending := e.h.PendingApprovals(alice)
			if len(pending) != 1 {
				t.Fatalf("pending approvals %+v", pending)
			}
			if err := e.h.Answer(alice, pending[0].ID, true); err != nil {
				t.Fatal(err)
			}
			if res := <-done; res == nil || res.IsError || textOf(res) != "approved" {
				t.Fatalf("the approved call = %+v", res)
			}
		})
	}
}
