package config

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Values that env() and file() return may be secrets: a token, a password,
// or whatever file the configuration names (file("/etc/shadow")). No
// diagnostic prints them. A diagnostic about a value names the calls it was
// read from instead, as written in the file:
//
//	The call_timeout read from env("SECRET") (not shown) is not a duration.
//
// Every diagnostic that quotes a value goes through [shown] or [quoted]; the
// diagnostics HCL itself makes while evaluating an expression go through
// [loader.scrub]. The source snippet under a diagnostic shows the source text,
// env("SECRET"), which is not secret.

// sourceCalls returns the env() and file() calls in expr as they are written,
// such as `env("TOKEN")`, in the order they appear, without repeats. A call
// whose argument is not a literal string is `env(...)`.
func sourceCalls(expr hcl.Expression) []string {
	node, ok := expr.(hclsyntax.Node)
	if !ok {
		return nil
	}
	var calls []string
	hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		call, ok := n.(*hclsyntax.FunctionCallExpr)
		if !ok || (call.Name != "env" && call.Name != "file") {
			return nil
		}
		c := call.Name + "(...)"
		if len(call.Args) > 0 {
			if s, ok := literalString(call.Args[0]); ok {
				c = fmt.Sprintf("%s(%q)", call.Name, s)
			}
		}
		for _, seen := range calls {
			if seen == c {
				return nil
			}
		}
		calls = append(calls, c)
		return nil
	})
	return calls
}

// literalString returns the value of expr when it is a string written in the
// file, with no functions or variables.
func literalString(expr hcl.Expression) (string, bool) {
	v, diags := expr.Value(nil)
	if diags.HasErrors() || !v.IsKnown() || v.IsNull() || v.Type() != cty.String {
		return "", false
	}
	return v.AsString(), true
}

// sourcesPhrase is "" when expr calls neither env() nor file(), else
// `env("A")`, `env("A") and file("b")` or `env("A"), env("B") and file("c")`.
func sourcesPhrase(expr hcl.Expression) string {
	calls := sourceCalls(expr)
	switch len(calls) {
	case 0:
		return ""
	case 1:
		return calls[0]
	}
	return strings.Join(calls[:len(calls)-1], ", ") + " and " + calls[len(calls)-1]
}

// shown is how a diagnostic refers to a value of expr: plain (the value as
// the diagnostic would print it, such as `"10"` or `5m`) when expr calls
// neither env() nor file(), else `read from env("X") (not shown)`.
func shown(expr hcl.Expression, plain string) string {
	if from := sourcesPhrase(expr); from != "" {
		return "read from " + from + " (not shown)"
	}
	return plain
}

// quoted is shown with the value in quotes, clipped to maxQuotedBytes.
func quoted(expr hcl.Expression, v string) string {
	return shown(expr, clipQuote(v))
}

// maxQuotedBytes bounds the part of a value a diagnostic quotes: a value
// written in the file may be megabytes long, and one diagnostic should not
// print all of it.
const maxQuotedBytes = 100

// clipQuote quotes v like strconv.Quote; a value over maxQuotedBytes is cut
// at a character boundary, followed by "…" and its length.
func clipQuote(v string) string {
	if len(v) <= maxQuotedBytes {
		return strconv.Quote(v)
	}
	i := maxQuotedBytes
	for i > 0 && !utf8.RuneStart(v[i]) {
		i--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(v[:i]), len(v))
}

// because is ": " and err when expr calls neither env() nor file(), else
// "": the text of an error about a value, such as a URL parser's, may quote
// a part of it.
func because(expr hcl.Expression, err error) string {
	if sourcesPhrase(expr) != "" {
		return ""
	}
	return ": " + err.Error()
}

// scrub replaces the Detail of each diagnostic HCL made while evaluating
// expr that quotes one of the values env() and file() returned for it
// (returned): HCL's messages quote object keys and conversion paths, for
// example "Two different items produced the key "s3cret"".
func scrub(diags hcl.Diagnostics, expr hcl.Expression, returned []string) {
	if len(returned) == 0 || len(diags) == 0 {
		return
	}
	forms := secretForms(returned)
	from := ""
	for _, d := range diags {
		if !containsAny(d.Summary+"\n"+d.Detail, forms) {
			continue
		}
		if from == "" {
			if from = sourcesPhrase(expr); from == "" {
				from = "env() or file()"
			}
		}
		d.Detail = fmt.Sprintf("The full message is not shown, because it quotes a value read from %s, and values read with env() and file() may be secrets. Check that value.", from)
	}
}

// secretForms returns the ways a message may quote one of values, each
// once: with and without the spaces around it, quoted as %q prints it (how
// HCL quotes values), and as it is when it is long enough not to match by
// chance. scrub computes them once for all the diagnostics of an
// expression: quoting a value of a megabyte costs a megabyte, and an
// expression may have thousands of diagnostics.
func secretForms(values []string) []string {
	done := map[string]bool{} // values and their trimmed forms looked at
	added := map[string]bool{}
	var forms []string
	add := func(f string) {
		if !added[f] {
			added[f] = true
			forms = append(forms, f)
		}
	}
	for _, v := range values {
		for _, form := range []string{v, strings.TrimSpace(v)} {
			if form == "" || done[form] {
				continue
			}
			done[form] = true
			if len(form) >= 8 {
				add(form)
			}
			add(strconv.Quote(form))
		}
	}
	return forms
}

// containsAny reports whether text contains one of forms.
func containsAny(text string, forms []string) bool {
	for _, f := range forms {
		if strings.Contains(text, f) {
			return true
		}
	}
	return false
}

// readFrom is "" when expr calls neither env() nor file(), else
// `, read from env("X") (not shown),`: an aside after the name of what the
// value is for.
func readFrom(expr hcl.Expression) string {
	if from := sourcesPhrase(expr); from != "" {
		return ", read from " + from + " (not shown),"
	}
	return ""
}
