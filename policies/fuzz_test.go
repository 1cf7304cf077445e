package policies

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzInput exercises every variable.
func fuzzInput() *Input {
	in := baseInput()
	in.RawArgs = json.RawMessage(`{"path": "/srv/a", "n": 3, "items": [1, 2, 3], "o": {"k": "v"}, "b": true}`)
	in.Result = &Result{Text: "ok", Structured: map[string]any{"count": 2.0}}
	in.App = &App{ResourceURI: "ui://a/b", CSP: CSP{ConnectDomains: []string{"a.example.com"}}, Permissions: []string{"camera"}, HTMLSize: 10}
	return in
}

// FuzzCompile compiles arbitrary conditions in every phase. Properties: no
// panic; every error is about "when" (or "effect" for ask) with an offset
// inside the expression or -1; a compiled rule decides every phase without
// panicking, with a valid effect, and an error always denies.
func FuzzCompile(f *testing.F) {
	for _, r := range benchRules {
		f.Add(r.When)
	}
	for _, s := range []string{
		"", "true", "1", "args.enabled", `args.path.startsWith("/etc")`, "tool.name == ", "\"é\" == \n 1 +",
		`"😀" == tool.name && ]`, "principal.nmae", "result.isError", "app.htmlSize > 1", "args.x.matches(args.y)",
		`args.s.replace("a", "b") == ""`, "[1,2,3].all(a, [1,2,3].all(b, a + b > 0))", "has(args.a.b.c)",
		"size(args) > 0 && args.exists(k, k == 'x')", "a\xffb", "\x00", "//", "/* */", "dyn(1) == 1",
		"principal.groups.exists(g, g.startsWith('x'))", "int(args.n) > 2", "args.o.k.lowerAscii() == 'v'",
		"timestamp('2020-01-01T00:00:00Z') < timestamp('2021-01-01T00:00:00Z')", "duration('1h') > duration('1m')",
		"1/0 == 1", "args.items[10] == 1", "[1,2].map(x, x * 2)[1] == 4", "{'a': 1}.a == 1",
		strings.Repeat("(", 300) + "true" + strings.Repeat(")", 300),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, when string) {
		for _, phase := range phases {
			effect := EffectDeny
			if phase == PhaseCall {
				effect = EffectAsk
			}
			set, errs := Compile([]Rule{{Name: "r", Phase: phase, Effect: effect, When: when}}, "")
			for _, e := range errs {
				if e.Rule != 0 || e.Field != "when" {
					t.Fatalf("error on %+v for %q", e, when)
				}
				if e.Offset < -1 || e.Offset > len(when) {
					t.Fatalf("offset %d outside %q", e.Offset, when)
				}
				if e.Summary == "" || e.Detail == "" {
					t.Fatalf("empty summary or detail: %+v", e)
				}
			}
			if (set == nil) == (errs == nil) {
				t.Fatalf("set %v and errors %v", set, errs)
			}
			if set == nil {
				continue
			}
			if !utf8.ValidString(when) {
				t.Fatalf("invalid UTF-8 compiled: %q", when)
			}
			for _, p := range phases {
				d := set.Decide(context.Background(), p, fuzzInput())
				checkDecision(t, d)
			}
		}
	})
}

func checkDecision(t *testing.T, d Decision) {
	t.Helper()
	switch d.Effect {
	case EffectAllow, EffectDeny, EffectAsk:
	default:
		t.Fatalf("effect %q in %+v", d.Effect, d)
	}
	if d.Error && d.Effect != EffectDeny {
		t.Fatalf("an error did not deny: %+v", d)
	}
	if d.Reason == "" {
		t.Fatalf("no reason: %+v", d)
	}
}

// fuzzRules read every part of the input in every phase.
var fuzzRules = []Rule{
	{Name: "l1", Phase: PhaseList, Effect: EffectDeny, When: `tool.name.startsWith("admin_") && !("admins" in principal.groups)`},
	{Name: "l2", Phase: PhaseList, Effect: EffectDeny, When: `era == "legacy" && origin == "app" && server.endsWith("x") && tool.title.lowerAscii() == "x"`},
	{Name: "c1", Phase: PhaseCall, Effect: EffectDeny, When: `has(args.path) && args.path.startsWith("/etc")`},
	{Name: "c2", Phase: PhaseCall, Effect: EffectAsk, When: `tool.annotations.destructiveHint && !tool.annotations.readOnlyHint && size(args) > 3`},
	{Name: "c3", Phase: PhaseCall, Effect: EffectDeny, When: `args.exists(k, k.startsWith("x")) || args == {"a": 1}`},
	{Name: "c4", Phase: PhaseCall, Effect: EffectAllow, When: `args.n > 2`},
	{Name: "r1", Phase: PhaseResult, Effect: EffectDeny, When: `result.isError && result.text.contains("secret")`},
	{Name: "r2", Phase: PhaseResult, Effect: EffectDeny, When: `has(result.structured.count) && result.structured.count > 1 || args.size() == 0`},
	{Name: "a1", Phase: PhaseApp, Effect: EffectDeny, When: `app.csp.connectDomains.exists(d, !d.endsWith(".example.com")) || "camera" in app.permissions`},
	{Name: "a2", Phase: PhaseApp, Effect: EffectDeny, When: `app.htmlSize > 1000 || app.resourceUri.matches("^ui://x/") || size(app.csp.frameDomains) > 0`},
}

// FuzzDecodeInput decodes arbitrary input files. Properties: no panic;
// errors carry the package prefix; a decoded input decides every phase
// without panicking, with a valid effect.
func FuzzDecodeInput(f *testing.F) {
	for _, s := range []string{
		`{}`, `null`, `[]`, ``, `{"server": "files", "era": "modern", "origin": "user"}`,
		`{"principal": {"name": "a", "groups": null}, "tool": {"name": "admin_x", "annotations": {"readOnlyHint": true}}}`,
		`{"args": {"path": "/etc/passwd", "n": 3}, "result": {"isError": true, "text": "secret", "structured": {"count": 5}}}`,
		`{"app": {"resourceUri": "ui://x/y", "csp": {"connectDomains": ["evil.test"], "frameDomains": []}, "permissions": ["camera"], "htmlSize": 2000}}`,
		`{"args": {"xa": 1, "a": 1}}`, `{"args": {"a": 1}}`, `{"args": {"a": {"b": [1, 2, {"c": null}]}}}`,
		`{"args": {"n": "3"}}`, `{"args": {"n": 1e308}}`, `{"args": {"\u0070ath": "/etc/x"}}`,
		`{"server": "a", "server": "b"}`, `{"tool": {"annotations": {"x": 1}}}`, `{"app": {"htmlSize": -1}}`,
		`{"args": {"deep": ` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}}`,
		"{\"args\": {\"s\": \"\xff\"}}",
	} {
		f.Add([]byte(s))
	}
	set := mustCompile(f, "", fuzzRules...)
	denySet := mustCompile(f, EffectDeny, fuzzRules...)
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := DecodeInput(data)
		if err != nil {
			if in != nil || !strings.HasPrefix(err.Error(), "policies: input: ") {
				t.Fatalf("input %v, error %v", in, err)
			}
			return
		}
		for _, s := range []*Set{set, denySet} {
			for _, p := range phases {
				checkDecision(t, s.Decide(context.Background(), p, in))
			}
		}
	})
}

// FuzzLazyArgs checks the lazy arguments map against encoding/json on
// arbitrary raw arguments: it accepts exactly what json.Unmarshal accepts as
// an object, and decides as the decoded map does.
func FuzzLazyArgs(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"path": "/etc/x"}`, `{"a": 1, "a": 2}`, `{"n": 1e400}`, `{"n": -0}`, `{"s": "\ud800"}`,
		`{"k\"ey": [1, {"x": null}]}`, `[1]`, `"s"`, `null`, `{"a": tru}`, `{"a":1}x`, "{\"a\":\"\x7f\xff\"}",
		`{"` + strings.Repeat("a", 100) + `": {"b": [[], {}, 1.5e3, -2, true, false, null]}}`,
	} {
		f.Add([]byte(s))
	}
	set := mustCompile(f, "", fuzzRules...)
	f.Fuzz(func(t *testing.T, raw []byte) {
		var decoded map[string]any
		jsonErr := json.Unmarshal(raw, &decoded)
		l, lazyErr := newLazyArgs(raw, nil)
		isObject := jsonErr == nil && decoded != nil
		if isObject != (lazyErr == nil && l != nil) {
			t.Fatalf("json: %v (object %v); lazy: %v, %v", jsonErr, isObject, l != nil, lazyErr)
		}
		if !isObject {
			return
		}
		want := fuzzInput()
		want.RawArgs = nil
		want.Args = decoded
		got := fuzzInput()
		got.RawArgs = raw
		for _, p := range phases {
			dw := set.Decide(context.Background(), p, want)
			dg := set.Decide(context.Background(), p, got)
			if dw.Rule != dg.Rule || dw.Effect != dg.Effect || dw.Error != dg.Error || dw.Reason != dg.Reason {
				t.Fatalf("phase %s: decoded %+v, lazy %+v", p, dw, dg)
			}
		}
	})
}
