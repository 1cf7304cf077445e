package config

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/mcphost/mcphost/policies"
)

// policyNameRE is the rule for policy and plugin names: they appear in
// decision records, audit logs and error messages.
var policyNameRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_.-]{0,63}$`)

// MaxPolicyExpressionLength bounds a `when` expression, in bytes.
const MaxPolicyExpressionLength = 4096

var policyPhases = []string{"list", "call", "result", "app"}

// decodePolicies reads the `policies` settings block and every `policy`
// block, then compiles the rules (compilePolicies) when they are well-formed.
func (l *loader) decodePolicies(cfg *Config, file *hcl.File, settings []*policiesBlock, rules []*policyBlock) {
	cfg.PolicyDefault = PolicyAllow
	for i, b := range settings {
		if i > 0 {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Duplicate policies block",
				Detail:   fmt.Sprintf("A policies block is already defined at %s. Merge the two blocks into one.", fileLine(settings[0].DeclRange)),
				Subject:  b.DeclRange.Ptr(),
			})
			continue
		}
		if v, st := l.evalString(b.Default, "default"); st == valid {
			switch v {
			case PolicyAllow, PolicyDeny:
				cfg.PolicyDefault = v
			default:
				l.add(&hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Invalid policy default",
					Detail:   fmt.Sprintf("The default effect %s is not known. Use \"allow\" (the default: calls no rule matches go ahead) or \"deny\".", quoted(b.Default, v)),
					Subject:  b.DefaultRange.Ptr(),
				})
			}
		}
	}

	names := map[string]hcl.Range{}
	ok := true
	for _, b := range rules {
		p, pok := l.decodePolicy(b, file, cfg.Principals)
		ok = ok && pok
		if first, dup := names[p.Name]; dup {
			ok = false
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Duplicate policy name",
				Detail: fmt.Sprintf("A policy named %q is already defined at %s. Decisions name the rule that decided, so names must be unique; rename or remove one of the blocks.",
					p.Name, fileLine(first)),
				Subject: b.NameRange.Ptr(),
			})
		} else {
			names[p.Name] = b.NameRange
		}
		cfg.Policies = append(cfg.Policies, p)
	}
	if ok {
		l.compilePolicies(cfg)
	}
}

// decodePolicy checks one policy block: one decoder per attribute, in the
// order they depend on each other (effect "ask" needs the phase). ok is
// false when the rule cannot be compiled (a diagnostic was reported).
func (l *loader) decodePolicy(b *policyBlock, file *hcl.File, principals []Principal) (p Policy, ok bool) {
	p = Policy{Name: b.Name, NameRange: b.NameRange, DeclRange: b.DeclRange, WhenRange: b.WhenRange}
	ok = l.checkRuleName("policy", b.Name, b.NameRange)
	ok = l.decodePolicyPhase(b, &p) && ok
	ok = l.decodePolicyEffect(b, &p) && ok
	ok = l.decodePolicyWhen(b, &p, file) && ok
	if msg, st := l.evalString(b.Message, "message"); st == valid {
		p.Message = msg
	} else if st == invalid {
		ok = false
	}
	ok = l.decodePolicyOps(b, &p) && ok
	ok = l.decodePolicyApprovers(b, &p, principals) && ok
	return p, ok
}

// decodePolicyPhase reads a policy's required `phase`. It reports false
// when the phase is missing or not valid.
func (l *loader) decodePolicyPhase(b *policyBlock, p *Policy) bool {
	phase, st := l.evalString(b.Phase, "phase")
	switch {
	case st == absent:
		l.add(missingAttr("phase", "policy", b.Name, b.DeclRange, `phase = "call" (one of "list", "call", "result", "app")`))
		return false
	case st == invalid:
		return false
	case !contains(policyPhases, phase):
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid policy phase",
			Detail:   fmt.Sprintf("The phase %s is not known. Use \"list\" (which tools a principal sees), \"call\" (before the call), \"result\" (before the result is shown) or \"app\" (before an App renders).", quoted(b.Phase, phase)),
			Subject:  b.PhaseRange.Ptr(),
		})
		return false
	}
	p.Phase = phase
	return true
}

// decodePolicyEffect reads a policy's required `effect`, after its phase.
// It reports false when the effect is missing or not valid.
func (l *loader) decodePolicyEffect(b *policyBlock, p *Policy) bool {
	effect, st := l.evalString(b.Effect, "effect")
	switch {
	case st == absent:
		l.add(missingAttr("effect", "policy", b.Name, b.DeclRange, `effect = "deny" (or "allow", or "ask" in the call phase)`))
		return false
	case st == invalid:
		return false
	case effect != PolicyAllow && effect != PolicyDeny && effect != PolicyAsk:
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid policy effect",
			Detail:   fmt.Sprintf("The effect %s is not known. Use \"allow\", \"deny\" or \"ask\" (ask pauses a call for the user's approval).", quoted(b.Effect, effect)),
			Subject:  b.EffectRange.Ptr(),
		})
		return false
	case effect == PolicyAsk && p.Phase != "" && p.Phase != "call":
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Effect ask needs the call phase",
			Detail:   fmt.Sprintf("The effect \"ask\" pauses a call until the user approves it, so it is only valid with phase = \"call\"; this rule's phase is %s. Use \"deny\" or \"allow\", or change the phase.", quoted(b.Phase, p.Phase)),
			Subject:  b.EffectRange.Ptr(),
		})
		return false
	}
	p.Effect = effect
	return true
}

// decodePolicyWhen reads a policy's required `when` and how its offsets
// map to the file. It reports false when the expression is missing, empty
// or too long; compiling it is compilePolicies' job.
func (l *loader) decodePolicyWhen(b *policyBlock, p *Policy, file *hcl.File) bool {
	when, st := l.evalString(b.When, "when")
	switch {
	case st == absent:
		l.add(missingAttr("when", "policy", b.Name, b.DeclRange, `when = "tool.annotations.readOnlyHint" (a CEL boolean expression)`))
		return false
	case st == invalid:
		return false
	case strings.TrimSpace(when) == "":
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Empty policy expression",
			Detail:   "The when expression is empty. Write a CEL boolean expression; \"true\" matches every request.",
			Subject:  b.WhenRange.Ptr(),
		})
		return false
	case len(when) > MaxPolicyExpressionLength:
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Policy expression too long",
			Detail:   fmt.Sprintf("The when expression has %d bytes; at most %d are allowed. Split the rule into several rules.", len(when), MaxPolicyExpressionLength),
			Subject:  b.WhenRange.Ptr(),
		})
		return false
	}
	p.When = when
	p.whenPos = whenMapper(b.When, file, when)
	p.whenFrom = sourcesPhrase(b.When)
	return true
}

// decodePolicyOps reads a policy's `ops`: a non-empty list of the
// operations its phase may govern, each once. It reports false when the
// list is not valid (a diagnostic was reported).
func (l *loader) decodePolicyOps(b *policyBlock, p *Policy) bool {
	ops, st := l.evalStringList(b.Ops, "ops")
	switch st {
	case invalid:
		return false
	case absent:
		return true
	}
	p.OpsRange = b.OpsRange
	allowed := policies.Ops(p.Phase)
	if len(ops) == 0 {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Empty policy operations",
			Detail:   "The ops list is empty, so the rule would govern nothing. Name the operations it governs, for example ops = [\"resources/read\"], or remove ops for the phase's default (tool calls, or tool listing for a list rule).",
			Subject:  b.OpsRange.Ptr(),
		})
		return false
	}
	seen := map[string]bool{}
	for _, op := range ops {
		if seen[op] {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Duplicate policy operation",
				Detail:   fmt.Sprintf("The operation %q is listed twice. List each operation once.", op),
				Subject:  b.OpsRange.Ptr(),
			})
			return false
		}
		seen[op] = true
		if allowed != nil && !contains(allowed, op) {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid policy operation",
				Detail:   fmt.Sprintf("The operation %q is not one a %s rule governs. Use %s.", op, p.Phase, quoteAll(allowed)),
				Subject:  b.OpsRange.Ptr(),
			})
			return false
		}
	}
	p.Ops = ops
	return true
}

// decodePolicyApprovers reads an ask rule's `approvers`: a non-empty
// list of principal and group names, each once, each naming someone (as
// `admins` does, but an unknown name is an error here: it would leave a
// call that nobody can approve). It reports false when the list is not
// valid (a diagnostic was reported).
func (l *loader) decodePolicyApprovers(b *policyBlock, p *Policy, principals []Principal) bool {
	names, st := l.evalStringList(b.Approvers, "approvers")
	switch st {
	case invalid:
		return false
	case absent:
		return true
	}
	p.ApproversRange = b.ApproversRange
	bad := func(summary, detail string, rng hcl.Range) bool {
		l.add(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: rng.Ptr()})
		return false
	}
	switch {
	case p.Effect != "" && p.Effect != PolicyAsk:
		return bad("Approvers without ask",
			fmt.Sprintf("Only an ask rule waits for an answer, so approvers mean nothing on a rule whose effect is %q. Remove approvers, or use effect = \"ask\".", p.Effect),
			b.ApproversRange)
	case len(names) == 0:
		return bad("Empty approvers",
			"The approvers list is empty, so nobody could approve a call this rule holds. Name the principals or groups who approve, for example approvers = [\"security\"], or remove approvers for the caller to approve its own calls.",
			b.ApproversRange)
	}
	known := func(n string) bool {
		for _, pr := range principals {
			if pr.Name == n || contains(pr.Groups, n) {
				return true
			}
		}
		return false
	}
	ok := true
	seen := map[string]bool{}
	for i, n := range names {
		rng := l.elementRange(b.Approvers, i, b.ApproversRange)
		switch {
		case seen[n]:
			ok = bad("Duplicate approver", fmt.Sprintf("The approver %q is listed twice. List each principal or group once.", n), rng)
		case len(principals) == 0:
			ok = bad("Unknown approver",
				fmt.Sprintf("approvers names %q, but this config declares no principals: the daemon's owner makes every call and approves it. Add principal blocks, or remove approvers.", n), rng)
		case !known(n):
			ok = bad("Unknown approver",
				fmt.Sprintf("approvers names %q, which is neither a principal nor a group of one, so it could approve nothing. Check the spelling, or add the principal.", n), rng)
		}
		seen[n] = true
	}
	if ok {
		p.Approvers = names
	}
	return ok
}

// quoteAll quotes each element and joins them with ", " and a final " or ".
func quoteAll(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = strconv.Quote(s)
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

func missingAttr(attr, block, name string, rng hcl.Range, example string) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Missing required argument",
		Detail:   fmt.Sprintf("The %s %q has no %s. Add it, for example: %s.", block, name, attr, example),
		Subject:  rng.Ptr(),
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// whenMapper returns a function from a byte offset in value (the evaluated
// string of expr) to its position in the file, or nil when the expression is
// not a plain literal (it interpolates, say) and offsets cannot be mapped.
//
// It aligns the decoded value with the source text: quoted-string escapes
// (\n, \", \uNNNN …), the doubled $${ and %%{, and the indentation a
// flush heredoc (<<-EOT) strips.
func whenMapper(expr hcl.Expression, file *hcl.File, value string) func(int) hcl.Pos {
	te, ok := expr.(*hclsyntax.TemplateExpr)
	if !ok || len(te.Parts) != 1 || file == nil {
		return nil
	}
	lit, ok := te.Parts[0].(*hclsyntax.LiteralValueExpr)
	if !ok {
		return nil
	}
	start := lit.SrcRange.Start
	end := lit.SrcRange.End
	if start.Byte < 0 || end.Byte > len(file.Bytes) || start.Byte > end.Byte {
		return nil
	}
	src := file.Bytes[start.Byte:end.Byte]
	quoted := start.Byte > 0 && file.Bytes[start.Byte-1] == '"'
	srcOff, ok := alignLiteral(src, value, quoted)
	if !ok {
		return nil
	}
	return func(offset int) hcl.Pos {
		if offset < 0 {
			offset = 0
		}
		target := len(src)
		if offset < len(srcOff) {
			target = srcOff[offset]
		}
		return advancePos(start, src[:target])
	}
}

// alignLiteral maps each byte offset of value to the offset in src of the
// source text that produced it. ok is false when they do not align.
func alignLiteral(src []byte, value string, quoted bool) (offsets []int, ok bool) {
	offsets = make([]int, len(value))
	i, j := 0, 0
	lineStart := true // only whitespace since the last newline in src
	for j < len(value) {
		if i >= len(src) {
			return nil, false
		}
		c := src[i]
		switch {
		case quoted && c == '\\' && i+1 < len(src):
			decoded, n, good := decodeEscape(src[i:])
			if !good || !strings.HasPrefix(value[j:], decoded) {
				return nil, false
			}
			for k := range len(decoded) {
				offsets[j+k] = i
			}
			i += n
			j += len(decoded)
			lineStart = false
			continue
		case (c == '$' || c == '%') && i+2 < len(src) && src[i+1] == c && src[i+2] == '{' &&
			strings.HasPrefix(value[j:], string(c)+"{"):
			offsets[j] = i
			offsets[j+1] = i + 2
			i += 3
			j += 2
			lineStart = false
			continue
		case c == value[j]:
			offsets[j] = i
			i++
			j++
			lineStart = c == '\n' || (lineStart && (c == ' ' || c == '\t'))
			continue
		case !quoted && lineStart && (c == ' ' || c == '\t'):
			i++ // indentation a flush heredoc removed
			continue
		}
		return nil, false
	}
	return offsets, true
}

// decodeEscape decodes the HCL escape sequence at the start of s.
func decodeEscape(s []byte) (decoded string, n int, ok bool) {
	switch s[1] {
	case 'n':
		return "\n", 2, true
	case 'r':
		return "\r", 2, true
	case 't':
		return "\t", 2, true
	case '"':
		return "\"", 2, true
	case '\\':
		return "\\", 2, true
	case 'u', 'U':
		digits := 4
		if s[1] == 'U' {
			digits = 8
		}
		if len(s) < 2+digits {
			return "", 0, false
		}
		v, err := strconv.ParseUint(string(s[2:2+digits]), 16, 32)
		if err != nil || !utf8.ValidRune(rune(v)) {
			return "", 0, false
		}
		return string(rune(v)), 2 + digits, true
	}
	return "", 0, false
}

// advancePos returns the position after text, which starts at pos. Columns
// count characters (runes), as hcl.Pos does for ASCII and most text.
func advancePos(pos hcl.Pos, text []byte) hcl.Pos {
	for len(text) > 0 {
		r, size := utf8.DecodeRune(text)
		text = text[size:]
		pos.Byte += size
		if r == '\n' {
			pos.Line++
			pos.Column = 1
		} else {
			pos.Column++
		}
	}
	return pos
}
