package config

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/mcphost/mcphost/policies"
)

// compilePolicies compiles the rules of cfg into cfg.PolicySet and reports
// every compile error as a diagnostic at its place in the file: inside the
// `when` string for expression errors.
func (l *loader) compilePolicies(cfg *Config) {
	rules := make([]policies.Rule, len(cfg.Policies))
	for i, p := range cfg.Policies {
		rules[i] = policies.Rule{Name: p.Name, Phase: p.Phase, Effect: p.Effect, When: p.When, Message: p.Message, Ops: p.Ops, Approvers: p.Approvers}
	}
	set, errs := policies.Compile(rules, cfg.PolicyDefault)
	for _, e := range errs {
		d := &hcl.Diagnostic{Severity: hcl.DiagError, Summary: e.Summary, Detail: e.Detail}
		if e.Rule >= 0 && e.Rule < len(cfg.Policies) {
			p := &cfg.Policies[e.Rule]
			if e.Field == "when" && p.whenFrom != "" {
				// CEL's messages quote the expression.
				d.Detail = whenFromDetail(p, e.Offset)
			}
			rng := p.DeclRange
			if e.Field == "ops" && p.OpsRange.Filename != "" {
				rng = p.OpsRange
			}
			if e.Field == "approvers" && p.ApproversRange.Filename != "" {
				rng = p.ApproversRange
			}
			if e.Field == "when" {
				rng = p.WhenRange
				if e.Offset >= 0 && p.whenFrom == "" {
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

// whenFromDetail is the Detail of a compile error in a `when` expression
// read with env() or file(): where the error is, without CEL's message.
func whenFromDetail(p *Policy, offset int) string {
	where := ""
	if offset >= 0 && offset <= len(p.When) {
		before := p.When[:offset]
		line := strings.Count(before, "\n") + 1
		col := utf8.RuneCountInString(before[strings.LastIndexByte(before, '\n')+1:]) + 1
		where = fmt.Sprintf(" at line %d, column %d of the expression", line, col)
	}
	return fmt.Sprintf("The when expression of policy %q, read from %s, has this problem%s. Neither the expression nor CEL's message about it is shown, because values read with env() and file() may be secrets.", p.Name, p.whenFrom, where)
}
