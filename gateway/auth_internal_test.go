package gateway

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/oauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAuthRefusalIsAToolError: a call to a server that needs a sign-in
// reaches the gateway's client as a tool error it can read (with the login
// command), whether the host refused it before the call or the server's
// challenge came back mid-call.
func TestAuthRefusalIsAToolError(t *testing.T) {
	need := &oauth.AuthRequiredError{Server: "linear", Principal: "alice", Reason: "not signed in"}
	cases := []struct {
		name string
		out  *host.CallOutcome
		err  error
	}{
		{"before the call", nil, need},
		{"from the server", &host.CallOutcome{Upstream: fmt.Errorf("calling tools/call: %w", need)}, nil},
		{"auth_error", &host.CallOutcome{Upstream: &oauth.AuthError{Server: "linear", Err: fmt.Errorf("resource mismatch")}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := callAnswer("linear__issues", tc.out, tc.err)
			if err != nil || res == nil || !res.IsError {
				t.Fatalf("got %v %v, want a tool error", res, err)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			if !strings.Contains(text, "linear") || !strings.HasPrefix(text, "mcphost: auth_") {
				t.Fatalf("text %q", text)
			}
		})
	}
}
