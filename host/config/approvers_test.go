package config

import (
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
