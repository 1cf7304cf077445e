package gateway_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestLegacyUpstreamElicitsInWebShell: a gateway call whose legacy
// upstream asks on the shared session (elicitation/create) is asked in the
// WebShell, to the call's principal (the host's broker), and the client's
// call ends with the answer.
func TestLegacyUpstreamElicitsInWebShell(t *testing.T) {
	s := stdioServer("ask", testbin.Build(t, "github.com/mcphost/mcphost/testdata/servers/elicit"))
	s.VersionNegotiation = config.NegotiationLegacy
	e := newEnvServers(t, []config.Server{s})
	alice := host.Principal{Name: "alice", Groups: []string{"analysts"}}
	events, stop, err := e.h.Subscribe(host.Caller{Principal: alice})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	cs := e.connect(t, "/mcp", aliceToken, legacyVersion, nil)
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask__ask_name", Arguments: map[string]any{}})
		done <- result{res, err}
	}()
	timeout := time.After(waitBound)
	var q host.Elicitation
	for q.ID == "" {
		select {
		case ev := <-events:
			if ev.Type == "elicitation" {
				q = ev.Data.(host.Elicitation)
			}
		case <-timeout:
			t.Fatal("no elicitation event")
		}
	}
	if q.Server != "ask" || q.Tool != "ask_name" || q.Message != "Who are you?" {
		t.Fatalf("question %+v", q)
	}
	if err := e.h.AnswerElicitation(alice, q.ID, host.ElicitationAnswer{Action: host.ElicitAccept, Content: map[string]any{"name": "Lin", "age": 33}}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.err != nil || !strings.Contains(textOf(r.res), "hello Lin, 33") {
			t.Fatalf("call: %v %+v", r.err, r.res)
		}
	case <-time.After(waitBound):
		t.Fatal("the call did not finish")
	}
}
