package config

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// deepInputs generate configurations that nest n levels deep in each way
// HCL can nest. Before the nesting bound, each of them ended `mcphost
// validate` (and a daemon reloading on SIGHUP) with "fatal error: stack
// overflow" in the parser or the evaluation once n was large enough: 100,000
// for most (a few hundred kilobytes), a few million for binary operators and
// conditionals.
var deepInputs = []struct {
	name string
	gen  func(n int) string
}{
	{"parentheses", func(n int) string { return "log_level = " + rep("(", n) + `"info"` + rep(")", n) + "\n" }},
	{"tuples", func(n int) string { return "log_level = " + rep("[", n) + rep("]", n) + "\n" }},
	{"objects", func(n int) string { return "log_level = " + rep("{a=", n) + "1" + rep("}", n) + "\n" }},
	{"function calls", func(n int) string { return "log_level = " + rep("env(", n) + `"X"` + rep(")", n) + "\n" }},
	{"templates", func(n int) string { return "log_level = " + rep(`"${`, n) + `"x"` + rep(`}"`, n) + "\n" }},
	{"heredocs", func(n int) string { return "log_level = " + rep("<<EOT\n${", n) + "1" + rep("}\nEOT\n", n) }},
	{"blocks", func(n int) string { return rep("server {\n", n) + rep("}\n", n) }},
	{"if directives", func(n int) string { return "log_level = \"" + rep("%{if true}", n) + rep("%{endif}", n) + "\"\n" }},
	{"for directives", func(n int) string { return "log_level = \"" + rep("%{for x in [1]}", n) + rep("%{endfor}", n) + "\"\n" }},
	{"for expressions over lines", func(n int) string { return "log_level = " + rep("{for x in [1]:\nx => ", n) + "1" + rep("}", n) + "\n" }},
	{"unary operators", func(n int) string { return "log_level = " + rep("!", n) + "true\n" }},
	{"unary operators over lines in parentheses", func(n int) string { return "log_level = (" + rep("-\n", n) + "1)\n" }},
	{"binary operators", func(n int) string { return "log_level = 1" + rep("+1", n) + "\n" }},
	{"conditionals in the true branch", func(n int) string { return "log_level = " + rep("true ? ", n) + "1" + rep(" : 1", n) + "\n" }},
	{"conditionals in the false branch", func(n int) string { return "log_level = " + rep("true ? 1 : ", n) + "1\n" }},
	{"splats", func(n int) string { return "log_level = x" + rep("[*]", n) + "\n" }},
	{"indexes", func(n int) string { return "log_level = [1]" + rep("[a]", n) + "\n" }},
	{"indexes over lines in parentheses", func(n int) string { return "log_level = ([1]" + rep("\n[a]", n) + ")\n" }},
	{"comments do not end a line in parentheses", func(n int) string { return "log_level = (1" + rep(" /* c */ +1", n) + ")\n" }},
	{"unbalanced closers do not hide openers", func(n int) string { return "log_level = " + rep("(]", n) + "1\n" }},
}

func rep(s string, n int) string { return strings.Repeat(s, n) }

// TestNestingTooDeep loads each deep input, 10,000 levels deep, and the
// 200 KB file of the report (100,000 parentheses), and wants one "Nesting
// too deep" error inside the file instead of a crash. With a tenth of the
// bound, the same shapes load without it.
func TestNestingTooDeep(t *testing.T) {
	type input struct {
		name string
		n    int
		gen  func(n int) string
	}
	inputs := []input{{"the report: 100,000 parentheses", 100_000, deepInputs[0].gen}}
	for _, in := range deepInputs {
		inputs = append(inputs, input{in.name, 10_000, in.gen})
	}
	for _, tt := range inputs {
		t.Run(tt.name, func(t *testing.T) {
			src := tt.gen(tt.n)
			_, diags := Parse([]byte(src), "deep.hcl", testOptions())
			if len(diags) != 1 || diags[0].Summary != "Nesting too deep" || diags[0].Severity != hcl.DiagError {
				t.Fatalf("want one Nesting too deep error, got %d diagnostics:%s", len(diags), diagText(diags[:min(len(diags), 3)]))
			}
			d := diags[0]
			if r := d.Subject; r == nil || r.Filename != "deep.hcl" || r.Start.Byte < 0 || r.End.Byte > len(src) || r.Start.Byte >= r.End.Byte {
				t.Errorf("subject %v is not a token inside the source", r)
			}
			if !strings.Contains(d.Detail, "more than 256 levels") || !strings.Contains(d.Detail, "Flatten") {
				t.Errorf("detail does not give the limit and the fix: %s", d.Detail)
			}

			_, diags = Parse([]byte(tt.gen(MaxNestingDepth/10)), "shallow.hcl", testOptions())
			for _, d := range diags {
				if d.Summary == "Nesting too deep" {
					t.Errorf("%d levels: %s", MaxNestingDepth/10, d.Error())
				}
			}
		})
	}
}

// TestNestingLimit pins where the bound is crossed: MaxNestingDepth levels
// load, one more is an error at the token that opens it.
func TestNestingLimit(t *testing.T) {
	gen := func(n int) string {
		return "server \"a\" {\n  command = \"x\"\n  args = [" + rep("(", n-3) + "\"a\"" + rep(")", n-3) + "]\n}\n"
	}
	// Levels: the block body, the tuple, n-3 parentheses, the string.
	if _, diags := Parse([]byte(gen(MaxNestingDepth)), "limit.hcl", testOptions()); len(diags) > 0 {
		t.Fatalf("%d levels:%s", MaxNestingDepth, diagText(diags))
	}
	src := gen(MaxNestingDepth + 1)
	_, diags := Parse([]byte(src), "limit.hcl", testOptions())
	if len(diags) != 1 || diags[0].Summary != "Nesting too deep" {
		t.Fatalf("%d levels:%s", MaxNestingDepth+1, diagText(diags))
	}
	// The opening quote of "a", after `  args = [` and 254 parentheses.
	want := hcl.Range{
		Filename: "limit.hcl",
		Start:    hcl.Pos{Line: 3, Column: 11 + MaxNestingDepth - 2, Byte: strings.LastIndex(src, `"a"`)},
		End:      hcl.Pos{Line: 3, Column: 12 + MaxNestingDepth - 2, Byte: strings.LastIndex(src, `"a"`) + 1},
	}
	if got := *diags[0].Subject; got != want {
		t.Errorf("subject = %#v, want %#v", got, want)
	}

	// mcphost fmt parses the same way.
	if out, diags := Format([]byte(src), "limit.hcl"); out != nil || len(diags) != 1 || diags[0].Summary != "Nesting too deep" {
		t.Errorf("Format = %q,%s", out, diagText(diags))
	}
}

// TestNestingNotFooled checks that brackets in strings, heredocs and
// comments, and long flat lists and bodies, do not count as nesting.
func TestNestingNotFooled(t *testing.T) {
	const n = 10_000
	tests := []struct{ name, src string }{
		{"brackets in a string", "server \"a\" {\n  command = \"x\"\n  args = [\"" + rep("([{", n) + "\"]\n}\n"},
		{"escaped interpolations", "server \"a\" {\n  command = \"x\"\n  args = [\"" + rep("$${", n) + "\"]\n}\n"},
		{"brackets in a heredoc", "server \"a\" {\n  command = \"x\"\n  args = [<<EOT\n" + rep("([{\n", n) + "EOT\n  ]\n}\n"},
		{"brackets in comments", rep("# ([{\n// ([{\n/* ([{ */\n", n)},
		{"a long list", "server \"a\" {\n  command = \"x\"\n  args = [" + rep("\"-1\", ", n) + "]\n}\n"},
		{"many attributes with operators", "server \"a\" {\n  command = \"x\"\n" + rep("  enabled = !false # a comment ends the line\n", 1000) + "}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := checkNesting([]byte(tt.src), "flat.hcl"); d != nil {
				t.Errorf("checkNesting: %s", d.Error())
			}
		})
	}
}

// treeDepth is the depth of the syntax tree of f. Only call it on a file
// that passed checkNesting.
func treeDepth(f *hcl.File) int {
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		return 0
	}
	w := &depthWalker{}
	hclsyntax.Walk(body, w)
	return w.max
}

type depthWalker struct{ cur, max int }

func (w *depthWalker) Enter(hclsyntax.Node) hcl.Diagnostics {
	w.cur++
	w.max = max(w.max, w.cur)
	return nil
}

func (w *depthWalker) Exit(hclsyntax.Node) hcl.Diagnostics {
	w.cur--
	return nil
}

// maxTreeDepth is how deep the syntax tree of a file that passed
// checkNesting can be: a %{for} directive takes four nodes (the join, the
// for, its template and the part), a nested block three (Blocks, Block,
// Body), and every other level one or two.
const maxTreeDepth = 4*MaxNestingDepth + 8

// TestNestingBoundsTheTree parses each deep shape at the largest depth that
// passes the check and wants its syntax tree within maxTreeDepth: the check
// counts what makes the tree deep, not only brackets.
func TestNestingBoundsTheTree(t *testing.T) {
	for _, tt := range deepInputs {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi := 1, 4*MaxNestingDepth // the largest n that passes
			for lo < hi {
				mid := (lo + hi + 1) / 2
				if checkNesting([]byte(tt.gen(mid)), "x.hcl") == nil {
					lo = mid
				} else {
					hi = mid - 1
				}
			}
			src := tt.gen(lo)
			f, _ := hclsyntax.ParseConfig([]byte(src), "x.hcl", hcl.InitialPos)
			if got := treeDepth(f); got > maxTreeDepth {
				t.Errorf("n=%d passes the check, and the tree is %d deep (> %d)", lo, got, maxTreeDepth)
			}
		})
	}
}
