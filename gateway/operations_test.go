package gateway_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/fixture"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/mcphost/mcphost/policies"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestOperationPolicies: through the gateway, in both eras, a read and a
// prompt are governed like a tool call: a rule that names the operation
// denies it with its message, an ask waits for the WebShell's answer, a
// principal past its rate limit is refused, and the audit log has each.
func TestOperationPolicies(t *testing.T) {
	set, errs := policies.Compile([]policies.Rule{
		{Name: "no-readme", Phase: policies.PhaseCall, Ops: []string{policies.OpReadRes}, Effect: policies.EffectDeny,
			When: `resource.uri == "fixture://readme"`, Message: "not the readme"},
		{Name: "ask-greet", Phase: policies.PhaseCall, Ops: []string{policies.OpGetPrompt}, Effect: policies.EffectAsk,
			When: `prompt.name == "greet" && args.name == "Eve"`, Message: "Greet Eve?"},
	}, policies.EffectAllow)
	if errs != nil {
		t.Fatal(errs)
	}
	e := newEnvConfig(t, &config.Config{
		Servers:   []config.Server{stdioServer("fx", testbin.Build(t, wellbehavedPkg))},
		PolicySet: set,
		Principals: []config.Principal{
			{Name: "alice", Token: aliceToken, Groups: []string{"analysts"}},
			{Name: "bob", Token: bobToken, RateLimit: config.RateLimit{CallsPerSecond: 0.01, Burst: 3}},
		},
	})
	for _, version := range []string{legacyVersion, modernVersion} {
		t.Run(version, func(t *testing.T) {
			cs := e.connect(t, "/mcp", aliceToken, version, nil)
			_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "fx+" + fixture.ReadmeURI})
			if err == nil || !strings.Contains(err.Error(), "not the readme") {
				t.Fatalf("a denied read: %v, want the rule's message", err)
			}
			if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "fx+fixture://items/1"}); err != nil {
				t.Fatalf("a read no rule names: %v", err)
			}

			// The ask: alice's get waits until she answers in the WebShell.
			go func() {
				for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
					for _, a := range e.h.PendingApprovals(host.Principal{Name: "alice"}) {
						if a.Op == policies.OpGetPrompt {
							_ = e.h.Answer(host.Principal{Name: "alice"}, a.ID, true)
							return
						}
					}
				}
			}()
			res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "fx__greet", Arguments: map[string]string{"name": "Eve"}})
			if err != nil || len(res.Messages) != 1 {
				t.Fatalf("an approved prompt: %v, %v", res, err)
			}
		})
	}

	// Bob's burst of 3 covers the connection's own requests; reads past
	// it are refused with the limit's message.
	cs := e.connect(t, "/mcp", bobToken, modernVersion, nil)
	var refused error
	for range 10 {
		if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "fx+fixture://items/2"}); err != nil {
			refused = err
			break
		}
	}
	if refused == nil || !strings.Contains(refused.Error(), "faster than its limit") {
		t.Fatalf("10 reads within a burst of 3: %v, want a rate-limit refusal", refused)
	}

	log, err := e.st.AuditLog(t.Context(), "alice", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range log {
		got = append(got, a.Origin+" "+a.Op+" "+a.Tool+" "+a.Effect+" "+a.Rule)
	}
	for _, want := range []string{
		"gateway resources/read fixture://readme deny no-readme",
		"gateway resources/read fixture://items/1 allow ",
		"gateway prompts/get greet ask ask-greet",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("alice's audit log has no %q:\n%s", want, strings.Join(got, "\n"))
		}
	}
}
