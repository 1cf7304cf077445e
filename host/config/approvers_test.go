package config

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/policies"
)

// TestPolicyApprovers: an ask rule's approvers are read as written and
// reach the decisions the rule makes; a rule without them leaves the
// caller to approve (no approvers in its decision).
func TestPolicyApprovers(t *testing.T) {
	cfg, diags := LoadFile("testdata/valid/approvers.hcl", testOptions())
	if len(diags) > 0 {
		t.Fatal(diagText(diags))
	}
	got := map[string][]string{}
	for _, p := range cfg.Policies {
		got[p.Name] = p.Approvers
	}
	want := map[string][]string{"security-approves-deploys": {"security"}, "confirm-deletes": nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("approvers (-want +got):\n%s", diff)
	}
	agent := policies.Principal{Name: "agent"}
	for _, tc := range []struct {
		tool string
		ann  policies.Annotations
		want []string
	}{
		{"deploy", policies.Annotations{ReadOnlyHint: true}, []string{"security"}},
		{"delete", policies.Annotations{DestructiveHint: true}, nil},
	} {
		d := cfg.PolicySet.Decide(t.Context(), policies.PhaseCall, &policies.Input{Principal: agent, Tool: policies.Tool{Name: tc.tool, Annotations: tc.ann}})
		if d.Effect != policies.EffectAsk || !cmp.Equal(d.Approvers, tc.want) {
			t.Errorf("%s: %s by %q with approvers %q, want ask with %q", tc.tool, d.Effect, d.Rule, d.Approvers, tc.want)
		}
	}
}

// TestDocsApprovers loads the example of docs/policies-and-plugins.md's
// "Who approves an `ask`": the bot's deploys wait for the security group.
func TestDocsApprovers(t *testing.T) {
	readme, err := os.ReadFile("../../docs/policies-and-plugins.md")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(readme), "### Who approves an `ask`")
	if i < 0 {
		t.Fatal("docs/policies-and-plugins.md has no section Who approves an `ask`")
	}
	block := regexp.MustCompile("(?s)```hcl\n(.*?)```").FindStringSubmatch(string(readme)[i:])
	if block == nil {
		t.Fatal("the section has no hcl block")
	}
	opts := Options{LookupEnv: testEnv("DEPLOY_BOT_TOKEN", "deploy-bot-0123456789abcdef", "CAROL_TOKEN", "carol-0123456789abcdef")}
	cfg, diags := Parse([]byte(block[1]), "docs/policies-and-plugins.md", opts)
	if len(diags) > 0 {
		t.Fatal(diagText(diags))
	}
	d := cfg.PolicySet.Decide(t.Context(), policies.PhaseCall, &policies.Input{Principal: policies.Principal{Name: "deploy-bot"}, Tool: policies.Tool{Name: "deploy"}})
	if d.Effect != policies.EffectAsk || !cmp.Equal(d.Approvers, []string{"security"}) {
		t.Errorf("the bot's deploy: %s by %q with approvers %q, want ask with security", d.Effect, d.Rule, d.Approvers)
	}
}

// TestREADMETeamConfig loads the README's "A small team" config as its
// reader would, with both tokens set: two principals (alice an admin), the
// memory server from npm, and a rule that asks before every call of a tool
// that is not read-only.
func TestREADMETeamConfig(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(readme), "## A small team")
	if i < 0 {
		t.Fatal("the README has no section A small team")
	}
	block := regexp.MustCompile("(?s)```hcl\n(.*?)```").FindStringSubmatch(string(readme)[i:])
	if block == nil {
		t.Fatal("the section has no hcl block")
	}
	opts := Options{LookupEnv: testEnv("ALICE_TOKEN", "alice-0123456789abcdef", "BOB_TOKEN", "bob-0123456789abcdef")}
	cfg, diags := Parse([]byte(block[1]), "mcphost.hcl", opts)
	if len(diags) > 0 {
		t.Fatal(diagText(diags))
	}
	var names []string
	for _, p := range cfg.Principals {
		names = append(names, p.Name)
	}
	if !cmp.Equal(names, []string{"alice", "bob"}) || !cmp.Equal(cfg.Admins, []string{"admins"}) {
		t.Errorf("principals %q, admins %q: want alice and bob, admins the group admins", names, cfg.Admins)
	}
	if len(cfg.Servers) != 1 || cfg.Servers[0].Command != "npx" {
		t.Errorf("servers %+v: want one run by npx", cfg.Servers)
	}
	bob := policies.Principal{Name: "bob"}
	write := policies.Tool{Name: "create_entities", Annotations: policies.AnnotationsFromMCP(nil)}
	read := policies.Tool{Name: "read_graph", Annotations: policies.Annotations{ReadOnlyHint: true}}
	if d := cfg.PolicySet.Decide(t.Context(), policies.PhaseCall, &policies.Input{Principal: bob, Tool: write}); d.Effect != policies.EffectAsk {
		t.Errorf("bob's create_entities: %s by %q, want ask", d.Effect, d.Rule)
	}
	if d := cfg.PolicySet.Decide(t.Context(), policies.PhaseCall, &policies.Input{Principal: bob, Tool: read}); d.Effect != policies.EffectAllow {
		t.Errorf("bob's read_graph: %s by %q, want allow", d.Effect, d.Rule)
	}
}
