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

// TestREADMEApprovers loads the example of the README's "Who approves an
// `ask`": the bot's deploys wait for the security group.
func TestREADMEApprovers(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(readme), "### Who approves an `ask`")
	if i < 0 {
		t.Fatal("the README has no section Who approves an `ask`")
	}
	block := regexp.MustCompile("(?s)```hcl\n(.*?)```").FindStringSubmatch(string(readme)[i:])
	if block == nil {
		t.Fatal("the section has no hcl block")
	}
	opts := Options{LookupEnv: testEnv("DEPLOY_BOT_TOKEN", "deploy-bot-0123456789abcdef", "CAROL_TOKEN", "carol-0123456789abcdef")}
	cfg, diags := Parse([]byte(block[1]), "README.md", opts)
	if len(diags) > 0 {
		t.Fatal(diagText(diags))
	}
	d := cfg.PolicySet.Decide(t.Context(), policies.PhaseCall, &policies.Input{Principal: policies.Principal{Name: "deploy-bot"}, Tool: policies.Tool{Name: "deploy"}})
	if d.Effect != policies.EffectAsk || !cmp.Equal(d.Approvers, []string{"security"}) {
		t.Errorf("the bot's deploy: %s by %q with approvers %q, want ask with security", d.Effect, d.Rule, d.Approvers)
	}
}
