package policies

import (
	"context"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStaticRule: a rule is static when it reads only who and what the
// decision is about; one that reads args, result or app is evaluated at
// every decision.
func TestStaticRule(t *testing.T) {
	for _, tc := range []struct {
		phase, when string
		static      bool
	}{
		{PhaseCall, `server == "db" && era == "modern" && origin == "user" && op == "tools/call"`, true},
		{PhaseCall, `principal.groups.exists(g, g == "ops") || principal.name == "root"`, true},
		{PhaseCall, `!tool.annotations.readOnlyHint && client.name == "x"`, true},
		{PhaseCall, `resource.uri.startsWith("file:") || prompt.name == "p"`, true},
		{PhaseCall, `true`, true},
		{PhaseCall, `principal.groups.all(args, args != "x")`, false},
		{PhaseCall, `principal.groups.exists(g, g == "x") && args.size() > 0`, false},
		{PhaseCall, `has(args.path)`, false},
		{PhaseCall, `tool.name == "x" && args.size() > 0`, false},
		{PhaseResult, `result.isError`, false},
		{PhaseApp, `app.htmlSize > 10 && server == "x"`, false},
	} {
		s := mustCompile(t, "", Rule{Name: "r", Phase: tc.phase, Effect: EffectDeny, When: tc.when})
		if got := s.phases[phaseIndex(tc.phase)][0].static; got != tc.static {
			t.Errorf("%s: static %v, want %v", tc.when, got, tc.static)
		}
	}
}

// TestVerdictsDecideAsEvaluation: decisions with the kept verdicts, the
// first for a set of facts and the ones after, are those of a Set that
// evaluates every rule every time, for inputs that differ in each fact a
// static rule can read, in both phases that have static rules here; and a
// caller changing its groups after a decision changes no kept verdict.
func TestVerdictsDecideAsEvaluation(t *testing.T) {
	rules := []Rule{
		{Name: "admin-tools", Phase: PhaseList, Effect: EffectDeny, When: `tool.name.startsWith("admin_") && !("admins" in principal.groups)`},
		{Name: "big-text", Phase: PhaseCall, Effect: EffectDeny, When: `has(args.text) && size(args.text) > 5`},
		{Name: "prod-apps", Phase: PhaseCall, Effect: EffectDeny, When: `server == "prod" && origin == "app"`},
		{Name: "guests-write", Phase: PhaseCall, Effect: EffectAsk, When: `!tool.annotations.readOnlyHint && principal.name == "guest"`},
		{Name: "etc", Phase: PhaseCall, Effect: EffectDeny, When: `has(args.path) && args.path.startsWith("/etc")`},
		{Name: "modern-drop", Phase: PhaseCall, Effect: EffectDeny, When: `era == "modern" && tool.title == "Drop"`},
		{Name: "old-client", Phase: PhaseCall, Effect: EffectDeny, When: `client.name == "old" && client.version < "2"`},
		{Name: "secrets", Phase: PhaseCall, Effect: EffectDeny, When: `op == "resources/read" && resource.uri.startsWith("secret:")`},
		{Name: "blocked", Phase: PhaseCall, Effect: EffectDeny, When: `"blocked" in principal.groups`},
	}
	cached := mustCompile(t, "", rules...)
	plain := mustCompile(t, "", rules...)
	plain.statics = [4]int{} // evaluates every rule, every time
	edits := []func(in *Input){
		func(in *Input) {},
		func(in *Input) { in.Tool.Name = "admin_x" },
		func(in *Input) { in.Tool.Name = "admin_x"; in.Principal.Groups = []string{"admins"} },
		func(in *Input) { in.Server, in.Origin = "prod", OriginApp },
		func(in *Input) { in.Server = "prod" },
		func(in *Input) { in.Principal.Name = "guest"; in.Tool.Annotations.ReadOnlyHint = false },
		func(in *Input) { in.Principal.Name = "guest" },
		func(in *Input) { in.Tool.Title = "Drop" },
		func(in *Input) { in.Tool.Title = "Drop"; in.Era = "legacy" },
		func(in *Input) { in.Client = Client{Name: "old", Version: "1.0"} },
		func(in *Input) { in.Client = Client{Name: "old", Version: "2.0"} },
		func(in *Input) { in.Op = OpReadRes; in.Tool = Tool{}; in.Resource = &Resource{URI: "secret:x"} },
		func(in *Input) { in.Op = OpReadRes; in.Tool = Tool{}; in.Resource = &Resource{URI: "file:x"} },
		func(in *Input) { in.Principal.Groups = []string{"eng", "blocked"} },
		func(in *Input) { in.Principal.Groups = []string{"engblocked"} },
		func(in *Input) { in.Principal.Groups = nil },
		func(in *Input) { in.RawArgs = []byte(`{"text":"long text"}`) },
		func(in *Input) { in.RawArgs = []byte(`{"path":"/etc/passwd"}`); in.Principal.Name = "guest" },
		func(in *Input) { in.RawArgs = []byte(`{"path":"/tmp/x"}`); in.Server = "prod"; in.Origin = OriginApp },
	}
	for round := range 2 {
		for i, edit := range edits {
			for _, phase := range []string{PhaseList, PhaseCall} {
				in, in2 := baseInput(), baseInput()
				edit(in)
				edit(in2)
				if phase == PhaseList && in.Op != "" {
					continue
				}
				got := cached.Decide(context.Background(), phase, in)
				want := plain.Decide(context.Background(), phase, in2)
				if diff := cmp.Diff(want, got, ignoreDuration); diff != "" {
					t.Errorf("round %d, input %d, %s (-every rule +kept verdicts):\n%s", round, i, phase, diff)
				}
				if in.Principal.Groups != nil {
					in.Principal.Groups[0] = "blocked" // the caller's slice, changed after the decision
				}
			}
		}
	}
	if n := cached.verdicts.n.Load(); n == 0 {
		t.Error("no verdicts kept")
	}
	if n := plain.verdicts.n.Load(); n != 0 {
		t.Errorf("%d verdict sets kept by a Set without static rules", n)
	}
}

// TestVerdictsNotKept: a static rule that fails is reported at each
// decision and leaves no verdicts; verdicts kept under a hash for other
// facts (a collision) are not used; and a Set that meets more facts than
// the bound keeps no more than it, deciding right throughout.
func TestVerdictsNotKept(t *testing.T) {
	never := Rule{Name: "never", Phase: PhaseCall, Effect: EffectDeny, When: `server == "never"`} // verdicts are kept from two static rules
	failing := mustCompile(t, "", never, Rule{Name: "third-group", Phase: PhaseCall, Effect: EffectDeny, When: `principal.groups[2] == "x"`})
	for range 2 {
		d := failing.Decide(context.Background(), PhaseCall, baseInput())
		if d.Effect != EffectDeny || !d.Error || d.Rule != "third-group" {
			t.Fatalf("decision %+v, want the rule's failure", d)
		}
	}
	if n := failing.verdicts.n.Load(); n != 0 {
		t.Errorf("%d verdict sets kept for a failing rule", n)
	}

	s := mustCompile(t, "", never, Rule{Name: "alice", Phase: PhaseCall, Effect: EffectDeny, When: `principal.name == "alice"`})
	in := baseInput()
	f := factsOf(1, opOf(PhaseCall, in), in)
	other := f
	other.principal = "bob"
	s.verdicts.m.Store(f.hash(s.verdicts.seed), &verdictSet{facts: other, matched: []bool{false, false}})
	if d := s.Decide(context.Background(), PhaseCall, in); d.Effect != EffectDeny || d.Rule != "alice" {
		t.Errorf("with another set's verdicts under the hash: %+v, want rule alice's deny", d)
	}

	s = mustCompile(t, "", never, Rule{Name: "alice", Phase: PhaseCall, Effect: EffectDeny, When: `principal.name == "alice"`})
	for i := range maxVerdictSets + 10 {
		in := baseInput()
		in.Client = Client{Name: "client", Version: strconv.Itoa(i)}
		if d := s.Decide(context.Background(), PhaseCall, in); d.Effect != EffectDeny || d.Rule != "alice" {
			t.Fatalf("client %d: %+v, want rule alice's deny", i, d)
		}
	}
	if n := s.verdicts.n.Load(); n > maxVerdictSets || n == 0 {
		t.Errorf("%d verdict sets kept, want between 1 and %d", n, maxVerdictSets)
	}
	in = baseInput()
	in.Principal.Name = "bob"
	if d := s.Decide(context.Background(), PhaseCall, in); d.Effect != EffectAllow {
		t.Errorf("bob after the cache was emptied: %+v, want allow", d)
	}
}
