package policies

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// wantErr is the part of a CompileError a test pins; detail is a substring.
type wantErr struct {
	Rule    int
	Field   string
	Offset  int
	Summary string
	detail  string
}

func TestCompileErrors(t *testing.T) {
	call := func(when string) []Rule { return []Rule{{Name: "r", Phase: PhaseCall, Effect: EffectDeny, When: when}} }
	in := func(phase, when string) []Rule {
		return []Rule{{Name: "r", Phase: phase, Effect: EffectDeny, When: when}}
	}
	at := func(when, sub string) int {
		i := strings.Index(when, sub)
		if i < 0 {
			t.Fatalf("%q not in %q", sub, when)
		}
		return i
	}
	const nonASCIISyntax = `tool.title == "Données à écrire" && )`
	const multiLine = "tool.name == \"a\" &&\n  principal.name == \"Zoë\" &&\n\t# comment"
	const emoji = `"😀 ok" == tool.name && ]`
	const crlf = "server == \"a\" ||\r\n  server == \"é\" ||\r\n  ?"
	tests := []struct {
		name  string
		rules []Rule
		def   string
		want  []wantErr
	}{
		{
			name:  "args in a list rule",
			rules: in(PhaseList, `has(args.path) && args.path.startsWith("/etc")`),
			want: []wantErr{{0, "when", 4, "Undeclared variable in policy",
				`Listing has no arguments: a list rule decides whether a tool is visible at all. Use phase = "call"`}},
		},
		{
			name:  "args in an app rule",
			rules: in(PhaseApp, `args.x == 1`),
			want:  []wantErr{{0, "when", 0, "Undeclared variable in policy", `Use phase = "call"`}},
		},
		{
			name:  "result in a call rule",
			rules: in(PhaseCall, `tool.name == "x" && result.isError`),
			want:  []wantErr{{0, "when", 20, "Undeclared variable in policy", `Use phase = "result"`}},
		},
		{
			name:  "result in a list rule",
			rules: in(PhaseList, `result.isError`),
			want:  []wantErr{{0, "when", 0, "Undeclared variable in policy", `Listing has no result. Use phase = "result"`}},
		},
		{
			name:  "app in a result rule",
			rules: in(PhaseResult, `app.htmlSize > 10`),
			want:  []wantErr{{0, "when", 0, "Undeclared variable in policy", `Use phase = "app"`}},
		},
		{
			name:  "unknown variable",
			rules: call(`user.name == "bob"`),
			want: []wantErr{{0, "when", 0, "Undeclared variable in policy",
				`A "call" rule has the variables server, era, origin, principal, client, op, tool, resource, prompt, args.`}},
		},
		{
			name:  "unknown function",
			rules: call(`isAdmin(principal)`),
			want:  []wantErr{{0, "when", 7, "Undeclared variable in policy", `"isAdmin" is neither a variable nor a function`}},
		},
		{
			name:  "misspelt field",
			rules: call(`principal.nmae == "bob"`),
			want:  []wantErr{{0, "when", 9, "Unknown field in policy", `undefined field 'nmae'`}},
		},
		{
			name:  "misspelt annotation",
			rules: call(`tool.annotations.readOnly`),
			want:  []wantErr{{0, "when", 16, "Unknown field in policy", `readOnlyHint, destructiveHint`}},
		},
		{
			name:  "dyn is not boolean",
			rules: call(`args.enabled`),
			want:  []wantErr{{0, "when", -1, "Policy condition is not boolean", `args.enabled == true`}},
		},
		{
			name:  "string is not boolean",
			rules: call(`tool.name`),
			want:  []wantErr{{0, "when", -1, "Policy condition is not boolean", `type string`}},
		},
		{
			name:  "type error",
			rules: call(`tool.name + 1 == "x"`),
			want:  []wantErr{{0, "when", 10, "Type error in policy", `no matching overload for '_+_'`}},
		},
		{
			name:  "syntax error after non-ASCII text",
			rules: call(nonASCIISyntax),
			want:  []wantErr{{0, "when", at(nonASCIISyntax, ")"), "Syntax error in policy", `mismatched input ')'`}},
		},
		{
			name:  "syntax error after a four-byte character",
			rules: call(emoji),
			want:  []wantErr{{0, "when", at(emoji, "]"), "Syntax error in policy", `mismatched input ']'`}},
		},
		{
			name:  "syntax error on the third line",
			rules: call(multiLine),
			want:  []wantErr{{0, "when", at(multiLine, "#"), "Syntax error in policy", `token recognition error at: '#'`}},
		},
		{
			name:  "syntax error after CRLF lines",
			rules: call(crlf),
			want:  []wantErr{{0, "when", at(crlf, "?"), "Syntax error in policy", `mismatched input '?'`}},
		},
		{
			name:  "syntax error at the end",
			rules: call(`tool.name == `),
			want:  []wantErr{{0, "when", len(`tool.name == `), "Syntax error in policy", `mismatched input '<EOF>'`}},
		},
		{
			name:  "empty condition",
			rules: call("  "),
			want:  []wantErr{{0, "when", -1, "Empty policy condition", `when = "true"`}},
		},
		{
			name:  "invalid UTF-8",
			rules: call("tool.name == \"a\xffb\""),
			want:  []wantErr{{0, "when", 15, "Invalid policy condition", "not valid UTF-8"}},
		},
		{
			name:  "invalid constant regex",
			rules: call(`tool.name.matches("[")`),
			want:  []wantErr{{0, "when", -1, "Invalid policy condition", "missing closing ]"}},
		},
		{
			name:  "expression too long",
			rules: call(strings.Repeat("true && ", maxWhenCodePoints/8) + "true"),
			want:  []wantErr{{0, "when", -1, "Syntax error in policy", "expression code point size exceeds limit"}},
		},
		{
			name:  "superlinear string function",
			rules: call(`args.s.replace("a", args.s) == ""`),
			want:  []wantErr{{0, "when", 7, "Function not allowed in policy", "replace() is not available in policies"}},
		},
		{
			name:  "superlinear search",
			rules: call(`args.s.indexOf(args.t) > 0 || ["a"].join(args.s) == ""`),
			want: []wantErr{
				{0, "when", 7, "Function not allowed in policy", "indexOf()"},
				{0, "when", 36, "Function not allowed in policy", "join()"},
			},
		},
		{
			name:  "regular expression from the input",
			rules: call(`args.s.matches(args.pattern)`),
			want:  []wantErr{{0, "when", 19, "Regular expression must be a literal", "must be a string literal"}},
		},
		{
			name:  "regular expression from the input, global form",
			rules: call(`matches(tool.name, tool.title)`),
			want:  []wantErr{{0, "when", 23, "Regular expression must be a literal", "must be a string literal"}},
		},
		{
			name:  "ask outside the call phase",
			rules: []Rule{{Name: "r", Phase: PhaseResult, Effect: EffectAsk, When: "true"}},
			want:  []wantErr{{0, "effect", -1, "Invalid policy effect", `only allowed in phase "call", not "result"`}},
		},
		{
			name:  "approvers on a deny rule",
			rules: []Rule{{Name: "r", Phase: PhaseCall, Effect: EffectDeny, When: "true", Approvers: []string{"security"}}},
			want:  []wantErr{{0, "approvers", -1, "Approvers without ask", `effect is "deny"`}},
		},
		{
			name:  "unknown effect",
			rules: []Rule{{Name: "r", Phase: PhaseCall, Effect: "permit", When: "true"}},
			want:  []wantErr{{0, "effect", -1, "Invalid policy effect", `"permit" is not one of allow, deny or ask`}},
		},
		{
			name:  "unknown phase still checks the syntax",
			rules: []Rule{{Name: "r", Phase: "render", Effect: EffectDeny, When: "true &&"}},
			want: []wantErr{
				{0, "phase", -1, "Invalid policy phase", `"render" is not one of list, call, result or app`},
				{0, "when", 7, "Syntax error in policy", "mismatched input '<EOF>'"},
			},
		},
		{
			name:  "invalid default",
			rules: call("true"),
			def:   "ask",
			want:  []wantErr{{-1, "default", -1, "Invalid default effect", `default = "deny"`}},
		},
		{
			name: "duplicate name",
			rules: []Rule{
				{Name: "same", Phase: PhaseCall, Effect: EffectDeny, When: "true"},
				{Name: "same", Phase: PhaseList, Effect: EffectDeny, When: "true"},
			},
			want: []wantErr{{1, "name", -1, "Duplicate policy name", "already used by rule 0"}},
		},
		{
			name: "every problem at once, in rule order",
			rules: []Rule{
				{Name: "a", Phase: PhaseList, Effect: EffectAsk, When: "args.x == 1"},
				{Name: "ok", Phase: PhaseCall, Effect: EffectDeny, When: "true"},
				{Name: "c", Phase: PhaseCall, Effect: EffectAllow, When: "1"},
			},
			def: "block",
			want: []wantErr{
				{-1, "default", -1, "Invalid default effect", "block"},
				{0, "effect", -1, "Invalid policy effect", "only allowed"},
				{0, "when", 0, "Undeclared variable in policy", "Listing has no arguments"},
				{2, "when", -1, "Policy condition is not boolean", "type int"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, errs := Compile(tt.rules, tt.def)
			if set != nil {
				t.Errorf("Compile returned a set with errors %v", errs)
			}
			var got []wantErr
			for i, e := range errs {
				got = append(got, wantErr{e.Rule, e.Field, e.Offset, e.Summary, ""})
				if i < len(tt.want) && !strings.Contains(e.Detail, tt.want[i].detail) {
					t.Errorf("error %d detail %q does not contain %q", i, e.Detail, tt.want[i].detail)
				}
				if e.Detail == "" || !strings.HasSuffix(e.Detail, ".") && !strings.HasSuffix(e.Detail, ".)") {
					t.Errorf("error %d detail %q is not a full sentence", i, e.Detail)
				}
				if e.Error() == "" {
					t.Errorf("error %d has an empty Error()", i)
				}
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreUnexported(wantErr{})); diff != "" {
				t.Errorf("errors (-want +got):\n%s\nall: %v", diff, errs)
			}
		})
	}
}

func TestCompileValid(t *testing.T) {
	rules := []Rule{
		{Name: "hide-admin", Phase: PhaseList, Effect: EffectDeny, When: `tool.name.startsWith("admin_") && !("admins" in principal.groups)`},
		{Name: "readers", Phase: PhaseCall, Effect: EffectDeny, When: `"readers" in principal.groups && !tool.annotations.readOnlyHint`},
		{Name: "approve", Phase: PhaseCall, Effect: EffectAsk, When: `tool.annotations.destructiveHint && !tool.annotations.readOnlyHint`},
		{Name: "paths", Phase: PhaseCall, Effect: EffectDeny, When: "has(args.path) &&\n  !args.path.startsWith(\"/srv/\")"},
		{Name: "secrets", Phase: PhaseResult, Effect: EffectDeny, When: `result.text.matches("sk-[A-Za-z0-9]{20,}") || (has(result.structured.secret) && result.structured.secret == true)`},
		{Name: "csp", Phase: PhaseApp, Effect: EffectDeny, When: `app.csp.connectDomains.exists(d, !d.endsWith(".example.com")) || "camera" in app.permissions || app.htmlSize > 1048576`},
		{Name: "groups", Phase: PhaseCall, Effect: EffectAllow, When: `principal.groups.exists(g, g in ["ops", "sre"]) && era == "modern" && origin != "app" && server == "files"`},
		{Name: "strings", Phase: PhaseList, Effect: EffectAllow, When: `tool.title.lowerAscii().contains("read") && principal.name.trim().upperAscii().endsWith("@EXAMPLE.COM")`},
	}
	set, errs := Compile(rules, "")
	if errs != nil {
		t.Fatal(errs)
	}
	if set.Rules() != len(rules) || set.Default() != EffectAllow {
		t.Errorf("Rules() = %d, Default() = %q", set.Rules(), set.Default())
	}
	for phase, want := range map[string]bool{PhaseList: true, PhaseCall: true, PhaseResult: true, PhaseApp: true, "x": false} {
		if got := set.Has(phase); got != want {
			t.Errorf("Has(%q) = %v", phase, got)
		}
	}
	uses := []struct {
		phase, variable string
		want            bool
	}{
		{PhaseCall, "args", true},
		{PhaseList, "args", false},
		{PhaseList, "principal", true},
		{PhaseCall, "principal", true},
		{PhaseResult, "args", false},
		{PhaseResult, "result", true},
		{PhaseApp, "app", true},
		{PhaseApp, "server", false},
		{PhaseCall, "server", true},
		{"x", "server", false},
	}
	for _, u := range uses {
		if got := set.Uses(u.phase, u.variable); got != u.want {
			t.Errorf("Uses(%q, %q) = %v, want %v", u.phase, u.variable, got, u.want)
		}
	}
	var none *Set
	if none.Has(PhaseCall) || none.Rules() != 0 || none.Uses(PhaseCall, "args") || none.Default() != EffectAllow {
		t.Error("nil set is not empty")
	}
	if set, errs := Compile(nil, EffectDeny); errs != nil || set.Default() != EffectDeny || set.Rules() != 0 {
		t.Errorf("empty deny set: %v %v", set, errs)
	}
}

func TestByteOffset(t *testing.T) {
	tests := []struct {
		s         string
		line, col int
		want      int
	}{
		{"abc", 1, 0, 0},
		{"abc", 1, 3, 3},
		{"abc", 1, 9, 3}, // clamped
		{"é=x", 1, 1, 2},
		{"😀x", 1, 1, 4},
		{"a\nbc", 2, 1, 3},
		{"a\r\nbc", 2, 1, 4},
		{"a\n\nb", 3, 0, 3},
		{"a\xffb", 1, 2, 2}, // an invalid byte is one code point
		{"a", 2, 0, -1},
		{"a", 0, 0, -1},
		{"a", 1, -1, -1},
	}
	for _, tt := range tests {
		if got := byteOffset(tt.s, tt.line, tt.col); got != tt.want {
			t.Errorf("byteOffset(%q, %d, %d) = %d, want %d", tt.s, tt.line, tt.col, got, tt.want)
		}
	}
}
