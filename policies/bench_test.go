package policies

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// benchRules are ten realistic rules: group membership, tool name prefixes,
// annotations, argument paths guarded by has(), server names.
var benchRules = []Rule{
	{Name: "admin-tools-hidden", Phase: PhaseList, Effect: EffectDeny,
		When: `tool.name.startsWith("admin_") && !("admins" in principal.groups)`},
	{Name: "legacy-crm-hidden", Phase: PhaseList, Effect: EffectDeny,
		When: `era == "legacy" && server == "crm" && !("crm" in principal.groups)`},
	{Name: "readers-read-only", Phase: PhaseCall, Effect: EffectDeny,
		When: `"readers" in principal.groups && !tool.annotations.readOnlyHint`},
	{Name: "writes-inside-data", Phase: PhaseCall, Effect: EffectDeny,
		When: `tool.name.startsWith("write_") && has(args.path) && !args.path.startsWith("/srv/data/")`},
	{Name: "no-etc", Phase: PhaseCall, Effect: EffectDeny,
		When: `has(args.path) && args.path.startsWith("/etc/")`},
	{Name: "apps-not-destructive", Phase: PhaseCall, Effect: EffectDeny,
		When: `origin == "app" && tool.annotations.destructiveHint && !tool.annotations.readOnlyHint`},
	{Name: "prod-db-approval", Phase: PhaseCall, Effect: EffectAsk,
		When: `server == "prod-db" && tool.annotations.destructiveHint && !tool.annotations.readOnlyHint`},
	{Name: "limit-cap", Phase: PhaseCall, Effect: EffectDeny,
		When: `has(args.limit) && args.limit > 1000`},
	{Name: "no-drop", Phase: PhaseCall, Effect: EffectDeny,
		When: `server == "db" && has(args.query) && args.query.lowerAscii().contains("drop table")`},
	{Name: "api-restart-ops", Phase: PhaseCall, Effect: EffectDeny,
		When: `origin == "api" && tool.name == "restart" && !("ops" in principal.groups)`},
}

// benchArgs returns a 2 KB arguments object of 41 keys that no rule matches.
func benchArgs() []byte {
	m := map[string]any{
		"path":  "/srv/data/reports/2025/q3/summary.csv",
		"limit": 250,
		"query": "select id, name from customers where region = 'emea'",
	}
	for i := range 38 {
		switch i % 3 {
		case 0:
			m[fmt.Sprintf("option_%02d", i)] = strings.Repeat("v", 82)
		case 1:
			m[fmt.Sprintf("flag_%02d", i)] = i%2 == 0
		default:
			m[fmt.Sprintf("nested_%02d", i)] = map[string]any{"k": i, "tags": []any{"a", "b"}}
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

func benchInput() Input {
	return Input{
		Server: "files", Era: "modern", Origin: OriginUser,
		Principal: Principal{Name: "alice", Groups: []string{"staff", "eng"}},
		Tool: Tool{Name: "write_file", Title: "Write file",
			Annotations: Annotations{DestructiveHint: true, OpenWorldHint: false}},
	}
}

func BenchmarkDecide(b *testing.B) {
	set, errs := Compile(benchRules, EffectAllow)
	if errs != nil {
		b.Fatal(errs)
	}
	raw := benchArgs()
	if len(raw) < 1900 || len(raw) > 2200 {
		b.Fatalf("args are %d bytes, want about 2 KB", len(raw))
	}
	var decoded map[string]any
	if err := json.Unmarshal(raw, &decoded); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	check := func(b *testing.B, d Decision) {
		if d.Effect != EffectAllow || d.Rule != "" {
			b.Fatalf("decision %+v, want default allow", d)
		}
	}
	b.Run("call/args-decoded", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			in := benchInput()
			in.Args = decoded
			check(b, set.Decide(ctx, PhaseCall, &in))
		}
	})
	b.Run("call/raw-args", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			in := benchInput()
			in.RawArgs = raw
			check(b, set.Decide(ctx, PhaseCall, &in))
		}
	})
	b.Run("list", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			in := benchInput()
			check(b, set.Decide(ctx, PhaseList, &in))
		}
	})
	b.Run("nil-set", func(b *testing.B) {
		var none *Set
		b.ReportAllocs()
		for b.Loop() {
			in := benchInput()
			in.RawArgs = raw
			check(b, none.Decide(ctx, PhaseCall, &in))
		}
	})
	b.Run("decode-only", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// curveRules returns n call rules, none of which matches benchInput: the
// call rules of benchRules over and over, each copy with constants of its
// own so that no two rules are the same program.
func curveRules(n int) []Rule {
	var call []Rule
	for _, r := range benchRules {
		if r.Phase == PhaseCall {
			call = append(call, r)
		}
	}
	out := make([]Rule, 0, n)
	for i := range n {
		r := call[i%len(call)]
		r.Name = fmt.Sprintf("%s-%d", r.Name, i)
		r.When = fmt.Sprintf("(%s) && %d >= 0", r.When, i)
		out = append(out, r)
	}
	return out
}

// BenchmarkDecideRules is one call decision (2 KB of raw arguments, as a
// call brings them) as the rule set grows: 1, 10 and 100 call rules, none
// of which matches, so every rule runs.
//
//	go test -run '^$' -bench BenchmarkDecideRules -count 5 ./policies/
func BenchmarkDecideRules(b *testing.B) {
	raw := benchArgs()
	ctx := context.Background()
	for _, n := range []int{1, 10, 100} {
		set, errs := Compile(curveRules(n), EffectAllow)
		if errs != nil {
			b.Fatal(errs)
		}
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				in := benchInput()
				in.RawArgs = raw
				if d := set.Decide(ctx, PhaseCall, &in); d.Effect != EffectAllow || d.Rule != "" {
					b.Fatalf("decision %+v, want default allow", d)
				}
			}
		})
	}
}

func BenchmarkCompile(b *testing.B) {
	for _, r := range []Rule{benchRules[0], benchRules[3], benchRules[8]} {
		b.Run(r.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, errs := Compile([]Rule{r}, ""); errs != nil {
					b.Fatal(errs)
				}
			}
		})
	}
}
