package config

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// A configuration can be checked on a machine that lacks its secrets:
// with Options.UnsetEnvUnknown, env() of a variable that is not set is
// an unknown value (cty.UnknownVal), as Terraform plans with values it
// cannot know yet. eval treats an attribute with an unknown value as one
// with an error (it is left out of the Config, and nothing that depends on
// it is checked), and names each such call in a warning. Unknown is never
// used as known: a principal whose token is unknown has no token (and
// the empty token authenticates nobody), a policy set with an unknown rule
// is not compiled, and serve loads without the option, so it refuses the
// file as before.

// UnsetEnv is one env() call of a variable that is not set.
type UnsetEnv struct {
	// Name is the variable, or "" when its name is itself read with env()
	// or file() (and so not shown).
	Name string
	// Call is the call as written: `env("GITHUB_TOKEN")`, or `env(...)`.
	Call string
	// Attribute is the attribute that reads it ("token", "env").
	Attribute string
	// Block is its top-level block: `server "github"`, `principal
	// "alice"`; "" for a top-level attribute.
	Block string
	// Range is the call's range in the file.
	Range hcl.Range
}

// Where says what reads the value: `"env" of server "github"`.
func (u UnsetEnv) Where() string {
	if u.Block == "" {
		return fmt.Sprintf("%q", u.Attribute)
	}
	return fmt.Sprintf("%q of %s", u.Attribute, u.Block)
}

// String is `env("GITHUB_TOKEN") ("env" of server "github", FILE:LINE)`.
func (u UnsetEnv) String() string {
	return fmt.Sprintf("%s (%s, %s)", u.Call, u.Where(), fileLine(u.Range))
}

// unsetWarning marks the warnings of unset variables, for StrictUnset.
type unsetWarning struct{}

// StrictUnset turns the warnings of a load with Options.UnsetEnvUnknown
// about variables that are not set into errors (validate -strict).
func StrictUnset(diags hcl.Diagnostics) {
	for _, d := range diags {
		if _, ok := d.Extra.(unsetWarning); ok {
			d.Severity = hcl.DiagError
		}
	}
}

// noteUnset records the env() calls in expr, the value of attribute attr,
// that found their variable unset while it was evaluated (l.unsetNow),
// each with a warning at the call.
func (l *loader) noteUnset(expr hcl.Expression, attr string) {
	names := map[string]bool{}
	for _, n := range l.unsetNow {
		names[n] = true
	}
	type call struct {
		name, from string
		rng        hcl.Range
	}
	var calls []call
	if node, ok := expr.(hclsyntax.Node); ok {
		hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
			c, ok := n.(*hclsyntax.FunctionCallExpr)
			if !ok || c.Name != "env" || len(c.Args) != 1 {
				return nil
			}
			if s, ok := literalString(c.Args[0]); ok {
				if names[s] {
					calls = append(calls, call{name: s, rng: c.Range()})
					delete(names, s)
				}
				return nil
			}
			calls = append(calls, call{from: sourcesPhrase(c.Args[0]), rng: c.Range()})
			return nil
		})
	}
	// A call whose name is computed counts only when some unset name
	// matched no literal call (the name is not shown, so it cannot be
	// matched itself).
	kept := calls[:0]
	for _, c := range calls {
		if c.name != "" || len(names) > 0 {
			kept = append(kept, c)
		}
	}
	if len(kept) == 0 {
		kept = append(kept, call{rng: expr.Range()})
	}
	for _, c := range kept {
		u := UnsetEnv{Name: c.name, Call: "env(...)", Attribute: attr, Block: l.blockOf(c.rng), Range: c.rng}
		what := "The environment variable whose name is computed (not shown) is not set"
		if c.from != "" {
			what = fmt.Sprintf("The environment variable whose name is read from %s (not shown) is not set", c.from)
		}
		if c.name != "" {
			u.Call = fmt.Sprintf("env(%q)", c.name)
			what = u.Call + " is not set"
		}
		l.unset = append(l.unset, u)
		rng := c.rng
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  "Environment variable not set",
			Detail: fmt.Sprintf("%s: serve needs it for %s. The rest of the configuration was checked without this value; `mcphost serve` refuses the file until the variable is set (or env() is given a default as its second argument).",
				what, u.Where()),
			Subject: &rng,
			Extra:   unsetWarning{},
		})
	}
}

// blockOf names the top-level block that holds rng, such as
// `server "github"`; "" when it is a top-level attribute.
func (l *loader) blockOf(rng hcl.Range) string {
	if l.file == nil {
		return ""
	}
	body, ok := l.file.Body.(*hclsyntax.Body)
	if !ok {
		return ""
	}
	for _, b := range body.Blocks {
		r := b.Range()
		if r.Filename != rng.Filename || rng.Start.Byte < r.Start.Byte || rng.End.Byte > r.End.Byte {
			continue
		}
		parts := []string{b.Type}
		for _, lb := range b.Labels {
			parts = append(parts, fmt.Sprintf("%q", lb))
		}
		return strings.Join(parts, " ")
	}
	return ""
}

// UnsetIn returns the calls of c.Unset inside the top-level block of kind
// and name (`plugin "redact"`: "plugin", "redact"; name "" for a block
// without a label); kind "" returns those of top-level attributes. A command that uses only that block refuses
// when it has one.
func (c *Config) UnsetIn(kind, name string) []UnsetEnv {
	want := kind
	if name != "" {
		want = fmt.Sprintf("%s %q", kind, name)
	}
	var out []UnsetEnv
	for _, u := range c.Unset {
		if u.Block == want {
			out = append(out, u)
		}
	}
	return out
}

// WithoutUnset returns diags without the warnings about unset variables,
// for a command that reports them its own way.
func WithoutUnset(diags hcl.Diagnostics) hcl.Diagnostics {
	var out hcl.Diagnostics
	for _, d := range diags {
		if _, ok := d.Extra.(unsetWarning); !ok || d.Severity == hcl.DiagError {
			out = append(out, d)
		}
	}
	return out
}
