package policies

// Verdicts of the rules that read only who and what a decision is about.
//
// Most rules test the identity of a decision (the server, the era, the
// origin, the principal, the client, the operation, the tool, resource or
// prompt) and nothing that changes from call to call (args, result, app).
// Such a rule is a pure function of those facts: CEL has no clock, no
// randomness and no I/O, and the functions a policy may call are
// deterministic. So its verdict for one set of facts holds for every
// decision with the same facts, for as long as the Set lives (a reload
// compiles a new Set, with no verdicts). The Set keeps them, per phase
// and facts, and a decision evaluates only the rules that read what
// changes. Evaluating ten rules cold (a process woken for one call among
// others) costs tens of microseconds; looking the verdicts up, one hash.
//
// The facts are hashed, and the verdicts kept with a copy of the facts
// they are for: a lookup whose facts differ (a hash collision) is a miss.
// A rule that fails (its cost limit, a cancelled context) leaves no
// verdicts for those facts. At most maxVerdictSets sets are kept: a
// Set that meets more facts than that (clients that name themselves
// anew at every request) starts again from none.

import (
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"
)

// minStaticRules is the fewest static rules of a phase whose verdicts are
// kept: one such rule costs about what hashing the facts costs.
const minStaticRules = 2

// maxVerdictSets bounds the verdict sets a Set keeps (a few hundred bytes
// each).
const maxVerdictSets = 1 << 14

// identityVars are the variables whose values the verdict key holds.
var identityVars = map[string]bool{
	"server": true, "era": true, "origin": true, "principal": true, "client": true,
	"op": true, "tool": true, "resource": true, "prompt": true,
}

// facts is what a static rule can read of an input, for one phase.
type facts struct {
	phase                   int
	ops                     opSet // the operations the phase's rules are matched against
	server, era, origin, op string
	principal               string
	groups                  []string
	client                  Client
	tool                    Tool
	resource                Resource
	prompt                  Prompt
	hasResource, hasPrompt  bool
}

func factsOf(pi int, ops opSet, in *Input) facts {
	f := facts{phase: pi, ops: ops, server: in.Server, era: in.Era, origin: in.Origin, op: in.Op,
		principal: in.Principal.Name, groups: in.Principal.Groups, client: in.Client, tool: in.Tool}
	if in.Resource != nil {
		f.resource, f.hasResource = *in.Resource, true
	}
	if in.Prompt != nil {
		f.prompt, f.hasPrompt = *in.Prompt, true
	}
	return f
}

func (f *facts) equal(o *facts) bool {
	return f.phase == o.phase && f.ops == o.ops && f.server == o.server && f.era == o.era && f.origin == o.origin &&
		f.op == o.op && f.principal == o.principal && slices.Equal(f.groups, o.groups) &&
		f.client == o.client && f.tool == o.tool && f.resource == o.resource && f.prompt == o.prompt &&
		f.hasResource == o.hasResource && f.hasPrompt == o.hasPrompt
}

// hash writes every fact, each string and the groups' count with its
// length first, so that no two different sets of facts write the same
// bytes.
func (f *facts) hash(seed maphash.Seed) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	var n [8]byte
	u64 := func(x uint64) {
		for i := range n {
			n[i] = byte(x >> (8 * i))
		}
		_, _ = h.Write(n[:])
	}
	u64(uint64(f.phase))
	u64(uint64(f.ops))
	for _, s := range [...]string{f.server, f.era, f.origin, f.op, f.principal, f.client.Name, f.client.Version,
		f.tool.Name, f.tool.Title, f.resource.URI, f.resource.Name, f.resource.MIMEType, f.prompt.Name, f.prompt.Title} {
		u64(uint64(len(s)))
		_, _ = h.WriteString(s)
	}
	u64(uint64(len(f.groups)))
	for _, g := range f.groups {
		u64(uint64(len(g)))
		_, _ = h.WriteString(g)
	}
	a := f.tool.Annotations
	var bits uint64
	for i, b := range [...]bool{a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint, a.OpenWorldHint, f.hasResource, f.hasPrompt} {
		if b {
			bits |= 1 << i
		}
	}
	u64(bits)
	return h.Sum64()
}

// verdictSet is the verdicts of a phase's static rules for one set of
// facts, by the rules' index in the phase: matched or not.
type verdictSet struct {
	facts   facts
	matched []bool
}

// verdicts is a Set's cache of verdict sets.
type verdicts struct {
	seed maphash.Seed
	m    sync.Map // uint64 → *verdictSet
	n    atomic.Int64
}

// lookup returns the verdict set kept for f, or nil, and f's hash; ok is
// false when the verdicts kept under that hash are another set's (a
// collision), which are neither used nor replaced.
func (v *verdicts) lookup(f *facts) (vs *verdictSet, h uint64, ok bool) {
	h = f.hash(v.seed)
	got, found := v.m.Load(h)
	if !found {
		return nil, h, true
	}
	vs = got.(*verdictSet)
	if !vs.facts.equal(f) {
		return nil, h, false
	}
	return vs, h, true
}

// keep keeps vs under h; the facts' groups are copied, as the caller's
// slice may change after the decision. At the bound every kept set is
// dropped first: the facts in use now are kept again as they come.
func (v *verdicts) keep(h uint64, vs *verdictSet) {
	if v.n.Load() >= maxVerdictSets {
		v.m.Clear()
		v.n.Store(0)
	}
	vs.facts.groups = slices.Clone(vs.facts.groups)
	if _, loaded := v.m.LoadOrStore(h, vs); !loaded {
		v.n.Add(1)
	}
}

// staticRule reports whether a rule whose checked expression references
// names, with locals the variables of its comprehensions, reads nothing
// but the identity variables. A local named as a variable that is not an
// identity variable (a loop over x named args) makes the rule not static:
// the references do not say which of the two a name is.
func staticRule(names, locals []string) bool {
	for _, n := range locals {
		if n != "" && !identityVars[n] && varTypes[n] != nil {
			return false
		}
	}
	for _, n := range names {
		if !identityVars[n] && !slices.Contains(locals, n) {
			return false
		}
	}
	return true
}
