package benchrules_test

import (
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/benchrules"
	"github.com/mcphost/mcphost/policies"
)

// TestCallHCL: the call-phase variant has the same ten rules, every one in
// the call phase, and they compile.
func TestCallHCL(t *testing.T) {
	cfg, diags := config.Parse([]byte(benchrules.CallHCL), "call.hcl", config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if len(cfg.Policies) != 10 {
		t.Fatalf("%d rules, want 10", len(cfg.Policies))
	}
	for _, r := range cfg.Policies {
		if r.Phase != policies.PhaseCall {
			t.Errorf("rule %s is in phase %s, want call", r.Name, r.Phase)
		}
	}
	if strings.Contains(benchrules.CallHCL, "result.") {
		t.Error("a call rule reads the result")
	}
}
