package config

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/mcphost/mcphost/policies"
)

// compilePolicies compiles the rules of cfg into cfg.PolicySet and reports
// every compile error as a diagnostic at its place in the file: inside the
// `when` string for expression errors.
func (l *loader) compilePolicies(cfg *Config) {
	rules := make([]policies.Rule, len(cfg.Policies))
	for i, p := range cfg.Policies {
		rules[i] = policies.Rule{Name: p.Name, Phase: p.Phase, Effect: p.Effect, When: p.When, Message: p.Message}
	}
	set, errs := policies.Compile(rules, cfg.PolicyDefault)
	for _, e := range errs {
		d := &hcl.Diagnostic{Severity: hcl.DiagError, Summary: e.Summary, Detail: e.Detail}
		if e.Rule >= 0 && e.Rule < len(cfg.Policies) {
			p := &cfg.Policies[e.Rule]
			rng := p.DeclRange
			if e.Field == "when" {
				rng = p.WhenRange
				if e.Offset >= 0 {
					start := p.WhenPos(e.Offset)
					end := start
					end.Byte++
					end.Column++
					rng = hcl.Range{Filename: p.WhenRange.Filename, Start: start, End: end}
				}
			}
			d.Subject = rng.Ptr()
		}
		l.add(d)
	}
	if len(errs) == 0 {
		cfg.PolicySet = set
	}
}
