package policies

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/interpreter"
)

// Phases: when a rule runs.
const (
	PhaseList   = "list"   // when tools are listed; deny hides the tool
	PhaseCall   = "call"   // before the upstream call; list rules apply first
	PhaseResult = "result" // after result plugins; deny withholds the result
	PhaseApp    = "app"    // before an App renders; deny shows the fallback
)

// Effects: what a deciding rule, or the default, does.
const (
	EffectAllow = "allow"
	EffectDeny  = "deny"
	EffectAsk   = "ask" // call phase only: pause for approval
)

// Origins: who started a call.
const (
	OriginUser = "user"
	OriginApp  = "app"
	OriginAPI  = "api"
	// OriginGateway is a call from an MCP client through the gateway.
	OriginGateway = "gateway"
)

// Rule is one `policy "NAME"` block as the config loader read it.
type Rule struct {
	Name    string
	Phase   string // PhaseList, PhaseCall, PhaseResult or PhaseApp
	Effect  string // EffectAllow, EffectDeny or EffectAsk
	When    string // CEL expression of type bool
	Message string // shown when the rule denies or asks; optional
	// Ops are the operations the rule governs (see [Ops]); empty means
	// the phase's default: "tools/list" for a list rule, "tools/call" for
	// a call rule, so rules written before operations existed keep their
	// meaning. The result and app phases govern tool calls only.
	Ops []string
	// Approvers name who may answer an `ask` rule: principal or group
	// names, matched as the config's `admins` are. Empty means the caller,
	// whose call it is. Only an ask rule may name them.
	Approvers []string
}

// CompileError is one problem with one rule.
type CompileError struct {
	Rule int // index into the rules slice; -1 for the default effect
	// Field is "when", "phase", "effect", "approvers", "name" (a name
	// used twice; the later rule is reported) or "default" (with Rule -1).
	Field string
	// Offset is the byte offset inside Rule.When where the problem is, only
	// for Field "when"; -1 when the problem is the whole expression or its
	// place is unknown.
	Offset  int
	Summary string // short phrase, e.g. "Undeclared variable in policy"
	Detail  string // full sentences: what is wrong and how to fix it
}

func (e CompileError) Error() string {
	where := fmt.Sprintf("policies: rule %d %s", e.Rule, e.Field)
	if e.Rule < 0 {
		where = "policies: " + e.Field
	}
	if e.Field == "when" && e.Offset >= 0 {
		where += fmt.Sprintf(" at byte %d", e.Offset)
	}
	return where + ": " + e.Summary + ": " + e.Detail
}

// Set is a compiled policy set: immutable and safe for concurrent use. A nil
// *Set allows everything.
type Set struct {
	phases        [4][]rule // indexed by phaseIndex
	adapter       types.Adapter
	loops         [4]bool // a rule of the phase has a comprehension
	defaultEffect string
	n             int
	statics       [4]int    // the phase's static rules (verdicts.go)
	verdicts      *verdicts // their verdicts by the facts they read
}

type rule struct {
	name, effect, message string
	approvers             []string    // an ask rule's; nil: the caller
	prg                   cel.Program // with the cost limit
	// fast is the same program without cost tracking, set when the rule's
	// estimated worst-case cost stays under CostLimit for every input within
	// the identity bounds (see inputBounded); nil otherwise.
	fast cel.Program
	// fastSmallArgs: fast may run only on arguments within maxArgsBytes.
	fastSmallArgs bool
	uses          uint16 // variable bits, see varBits
	ops           opSet  // the operations the rule governs
	comprehension bool   // loops, so it must watch the context
	// static: the rule reads only the identity variables, so its verdict
	// is kept per set of facts (verdicts.go).
	static bool
}

func phaseIndex(phase string) int {
	switch phase {
	case PhaseList:
		return 0
	case PhaseCall:
		return 1
	case PhaseResult:
		return 2
	case PhaseApp:
		return 3
	}
	return -1
}

var varBits = map[string]uint16{
	"server": 1 << 0, "era": 1 << 1, "origin": 1 << 2, "principal": 1 << 3,
	"tool": 1 << 4, "args": 1 << 5, "result": 1 << 6, "app": 1 << 7,
	"op": 1 << 8, "resource": 1 << 9, "prompt": 1 << 10,
}

// Compile compiles every rule and reports every problem at once, in rule
// order. defaultEffect is EffectAllow, EffectDeny, or "" for allow. The Set
// is nil whenever errors are returned. Compile costs about a tenth of a
// millisecond per rule; call it at load, never per request.
func Compile(rules []Rule, defaultEffect string) (*Set, []CompileError) {
	var errs []CompileError
	switch defaultEffect {
	case "":
		defaultEffect = EffectAllow
	case EffectAllow, EffectDeny:
	default:
		errs = append(errs, CompileError{Rule: -1, Field: "default", Offset: -1,
			Summary: "Invalid default effect",
			Detail:  fmt.Sprintf("The default effect %q is not allow or deny. Write default = \"allow\" or default = \"deny\".", defaultEffect)})
	}
	celEnv, err := envs()
	if err != nil {
		// The environments are built from constants; this cannot happen
		// unless cel-go itself is broken.
		errs = append(errs, CompileError{Rule: -1, Field: "default", Offset: -1,
			Summary: "Policy engine unavailable", Detail: err.Error() + "."})
		return nil, errs
	}
	s := &Set{defaultEffect: defaultEffect, adapter: celEnv.byPhase[PhaseList].CELTypeAdapter()}
	s.verdicts = &verdicts{seed: maphash.MakeSeed()}
	seen := make(map[string]int, len(rules))
	for i, r := range rules {
		if first, dup := seen[r.Name]; dup {
			errs = append(errs, CompileError{Rule: i, Field: "name", Offset: -1,
				Summary: "Duplicate policy name",
				Detail:  fmt.Sprintf("The name %q is already used by rule %d. Give each policy its own name so decisions say which rule decided.", r.Name, first)})
		} else {
			seen[r.Name] = i
		}
		pi := phaseIndex(r.Phase)
		if pi < 0 {
			errs = append(errs, CompileError{Rule: i, Field: "phase", Offset: -1,
				Summary: "Invalid policy phase",
				Detail:  fmt.Sprintf("The phase %q is not one of list, call, result or app.", r.Phase)})
		}
		switch r.Effect {
		case EffectAllow, EffectDeny:
		case EffectAsk:
			if pi >= 0 && r.Phase != PhaseCall {
				errs = append(errs, CompileError{Rule: i, Field: "effect", Offset: -1,
					Summary: "Invalid policy effect",
					Detail:  fmt.Sprintf("The effect \"ask\" pauses a call for approval, so it is only allowed in phase \"call\", not %q. Use effect = \"deny\" or move the rule to phase = \"call\".", r.Phase)})
			}
		default:
			errs = append(errs, CompileError{Rule: i, Field: "effect", Offset: -1,
				Summary: "Invalid policy effect",
				Detail:  fmt.Sprintf("The effect %q is not one of allow, deny or ask.", r.Effect)})
		}
		if len(r.Approvers) > 0 && r.Effect != EffectAsk {
			errs = append(errs, CompileError{Rule: i, Field: "approvers", Offset: -1,
				Summary: "Approvers without ask",
				Detail:  fmt.Sprintf("Only an ask rule waits for an answer, so approvers mean nothing on a rule whose effect is %q. Remove approvers, or use effect = \"ask\".", r.Effect)})
		}
		ops, oerrs := compileOps(i, r.Phase, r.Ops)
		errs = append(errs, oerrs...)
		phase := r.Phase
		if pi < 0 {
			// Still report syntax errors; the result phase declares the
			// most variables.
			phase = PhaseResult
		}
		compiled, werrs := compileWhen(celEnv, phase, i, r.When)
		errs = append(errs, werrs...)
		if len(errs) > 0 {
			continue
		}
		compiled.name, compiled.effect, compiled.message, compiled.ops = r.Name, r.Effect, r.Message, ops
		if len(r.Approvers) > 0 {
			compiled.approvers = append([]string(nil), r.Approvers...)
		}
		s.phases[pi] = append(s.phases[pi], compiled)
		s.loops[pi] = s.loops[pi] || compiled.comprehension
		if compiled.static {
			s.statics[pi]++
		}
		s.n++
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return s, nil
}

var (
	programOptions = []cel.ProgramOption{
		cel.CostLimit(CostLimit),
		cel.CostTracking(dynamicCallCost{}),
		cel.InterruptCheckFrequency(interruptCheckFrequency),
		cel.EvalOptions(cel.OptOptimize),
	}
	fastProgramOptions = []cel.ProgramOption{
		cel.InterruptCheckFrequency(interruptCheckFrequency),
		cel.EvalOptions(cel.OptOptimize),
	}
)

// compileWhen parses, checks and plans one expression in the environment of
// phase.
func compileWhen(envs *celEnvs, phase string, i int, when string) (rule, []CompileError) {
	env := envs.byPhase[phase]
	if strings.TrimSpace(when) == "" {
		return rule{}, []CompileError{{Rule: i, Field: "when", Offset: -1,
			Summary: "Empty policy condition",
			Detail:  "The when expression is empty. Write a CEL expression that is true when the rule applies, for example when = \"true\" for every call."}}
	}
	if !utf8.ValidString(when) {
		return rule{}, []CompileError{{Rule: i, Field: "when", Offset: firstInvalidUTF8(when),
			Summary: "Invalid policy condition",
			Detail:  "The when expression is not valid UTF-8. Write it as UTF-8 text."}}
	}
	parsed, iss := env.Parse(when)
	if iss != nil && iss.Err() != nil {
		return rule{}, issueErrors(i, when, phase, iss.Errors(), true)
	}
	checked, iss := env.Check(parsed)
	if iss != nil && iss.Err() != nil {
		return rule{}, issueErrors(i, when, phase, iss.Errors(), false)
	}
	if errs := checkCalls(envs, checked, i, when); errs != nil {
		return rule{}, errs
	}
	if out := checked.OutputType(); !out.IsExactType(cel.BoolType) {
		detail := fmt.Sprintf("The expression has type %s, but a policy condition must be true or false.", out)
		if out.IsExactType(cel.DynType) {
			detail += " A value read from args or result.structured has no fixed type: compare it explicitly, for example args.enabled == true."
		} else {
			detail += " Compare the value, for example size(x) > 0 or x == \"value\"."
		}
		return rule{}, []CompileError{{Rule: i, Field: "when", Offset: -1,
			Summary: "Policy condition is not boolean", Detail: detail}}
	}
	prg, err := env.Program(checked, programOptions...)
	if err != nil {
		return rule{}, []CompileError{{Rule: i, Field: "when", Offset: -1,
			Summary: "Invalid policy condition",
			Detail:  "CEL cannot prepare the expression: " + err.Error() + ". Fix the expression."}}
	}
	r := rule{prg: prg}
	var names []string
	for _, ref := range checked.NativeRep().ReferenceMap() {
		r.uses |= varBits[ref.Name]
		if len(ref.OverloadIDs) == 0 && ref.Value == nil {
			names = append(names, ref.Name) // a variable, not a function or a constant
		}
	}
	nav := celast.NavigateAST(checked.NativeRep())
	loops := celast.MatchDescendants(nav, celast.KindMatcher(celast.ComprehensionKind))
	r.comprehension = len(loops) > 0
	var locals []string
	for _, l := range loops {
		c := l.AsComprehension()
		locals = append(locals, c.IterVar(), c.IterVar2(), c.AccuVar())
	}
	r.static = staticRule(names, locals)
	if est, err := env.EstimateCost(checked, boundedEstimator{}); err == nil && est.Max <= CostLimit {
		if fast, err := env.Program(checked, fastProgramOptions...); err == nil {
			r.fast = fast
		}
	} else if r.uses&varBits["args"] != 0 {
		if est, err := env.EstimateCost(checked, boundedEstimator{args: true}); err == nil && est.Max <= CostLimit {
			if fast, err := env.Program(checked, fastProgramOptions...); err == nil {
				r.fast, r.fastSmallArgs = fast, true
			}
		}
	}
	return r, nil
}

// checkCalls refuses the functions envs forbids and matches() with a
// pattern that is not a literal: a pattern from the input could be as large
// as the text it searches, and the cost limit counts a call only after it
// returns.
func checkCalls(envs *celEnvs, checked *cel.Ast, i int, when string) []CompileError {
	native := checked.NativeRep()
	info := native.SourceInfo()
	offset := func(id int64) int {
		loc := info.GetStartLocation(id)
		if loc == nil || loc.Line() < 1 {
			return -1
		}
		return byteOffset(when, loc.Line(), loc.Column())
	}
	var errs []CompileError
	calls := celast.MatchDescendants(celast.NavigateAST(native), celast.KindMatcher(celast.CallKind))
	for _, call := range calls {
		c := call.AsCall()
		fn := c.FunctionName()
		switch {
		case envs.forbidden[fn]:
			// CEL places a call at its '('; point at the name before it.
			off := offset(call.ID())
			if off >= len(fn) && strings.HasSuffix(when[:off], fn) {
				off -= len(fn)
			}
			errs = append(errs, CompileError{Rule: i, Field: "when", Offset: off,
				Summary: "Function not allowed in policy",
				Detail: fmt.Sprintf("%s() is not available in policies: the cost limit counts a call only after it returns, and its work can grow faster than its input. The string functions beyond the CEL standard library are %s.",
					fn, strings.Join(allowedExtensions, ", "))})
		case fn == "matches":
			args := c.Args()
			pattern := args[len(args)-1]
			if pattern.Kind() != celast.LiteralKind {
				errs = append(errs, CompileError{Rule: i, Field: "when", Offset: offset(pattern.ID()),
					Summary: "Regular expression must be a literal",
					Detail:  "The pattern of matches() must be a string literal, so that it is compiled once at load and cannot come from the input. Write the pattern in the rule, for example args.path.matches(\"^/srv/[a-z]+$\")."})
			}
		}
	}
	return errs
}

func firstInvalidUTF8(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return i
			}
		}
	}
	return -1
}

var (
	undeclaredRE = regexp.MustCompile(`^undeclared reference to '([^']*)'`)
	undefinedRE  = regexp.MustCompile(`^undefined field '([^']*)'`)
)

// wrongPhaseHint explains, per variable and phase lacking it, which phase
// to use instead.
var wrongPhaseHint = map[string]map[string]string{
	"args": {
		PhaseList: "Listing has no arguments: a list rule decides whether a tool is visible at all. Use phase = \"call\" to decide on arguments.",
		PhaseApp:  "An App about to render has no arguments. Use phase = \"call\" to decide on arguments.",
	},
	"result": {
		PhaseList: "Listing has no result. Use phase = \"result\" to decide on what a tool returned.",
		PhaseCall: "A call has no result yet when call rules run. Use phase = \"result\" to decide on what a tool returned.",
		PhaseApp:  "App rules do not see the result. Use phase = \"result\" to decide on what a tool returned.",
	},
	"app": {
		PhaseList:   "Listing has no App. Use phase = \"app\" to decide whether an App may render.",
		PhaseCall:   "A call has no App yet when call rules run. Use phase = \"app\" to decide whether an App may render.",
		PhaseResult: "Result rules do not see the App. Use phase = \"app\" to decide whether an App may render.",
	},
}

// typedFields lists the fields of the typed variables, for a misspelling.
const typedFields = "principal: name, groups; tool: name, title, annotations; " +
	"tool.annotations: readOnlyHint, destructiveHint, idempotentHint, openWorldHint; " +
	"result: isError, text, structured, structuredText; app: resourceUri, csp, permissions, htmlSize; " +
	"app.csp: connectDomains, resourceDomains, frameDomains, baseUriDomains"

// issueErrors turns CEL's errors into CompileErrors with byte offsets. Only
// the first syntax error is kept (the parser's later ones are mostly its
// recovery going astray), and a checker message repeated for a second use of
// the same name is reported once.
func issueErrors(i int, when, phase string, cerrs []*common.Error, syntax bool) []CompileError {
	const maxPerRule = 5
	var out []CompileError
	seen := map[string]bool{}
	for _, ce := range cerrs {
		if len(out) == maxPerRule || syntax && len(out) == 1 || seen[ce.Message] {
			continue
		}
		seen[ce.Message] = true
		off := -1
		if ce.Location != nil {
			off = byteOffset(when, ce.Location.Line(), ce.Location.Column())
		}
		e := CompileError{Rule: i, Field: "when", Offset: off}
		msg := ce.Message
		switch {
		case syntax:
			e.Summary = "Syntax error in policy"
			e.Detail = fmt.Sprintf("CEL cannot parse the condition: %s. Correct the expression at this position.", msg)
		case undeclaredRE.MatchString(msg):
			name := undeclaredRE.FindStringSubmatch(msg)[1]
			e.Summary = "Undeclared variable in policy"
			if hint, ok := wrongPhaseHint[name][phase]; ok {
				e.Detail = fmt.Sprintf("%q is not defined in a %q rule. %s (CEL: %s.)", name, phase, hint, msg)
			} else {
				e.Detail = fmt.Sprintf("%q is neither a variable nor a function here. A %q rule has the variables %s. (CEL: %s.)",
					name, phase, strings.Join(phaseVars[phase], ", "), msg)
			}
		case undefinedRE.MatchString(msg):
			e.Summary = "Unknown field in policy"
			e.Detail = fmt.Sprintf("CEL: %s. The typed variables have these fields: %s. Only args and result.structured accept any key.", msg, typedFields)
		default:
			e.Summary = "Type error in policy"
			e.Detail = fmt.Sprintf("CEL: %s. Fix the expression at this position.", msg)
		}
		out = append(out, e)
	}
	return out
}

// byteOffset converts CEL's location (line from 1, column from 0 counted in
// code points, lines split at '\n') to a byte offset into s. Invalid UTF-8
// counts one code point per byte, as CEL's source buffer does. The result is
// clamped to len(s); -1 when the line does not exist.
func byteOffset(s string, line, col int) int {
	if line < 1 || col < 0 {
		return -1
	}
	off := 0
	for l := 1; l < line; l++ {
		nl := strings.IndexByte(s[off:], '\n')
		if nl < 0 {
			return -1
		}
		off += nl + 1
	}
	for ; col > 0 && off < len(s); col-- {
		_, size := utf8.DecodeRuneInString(s[off:])
		off += size
	}
	return off
}

// Has reports whether the set has rules of the phase. A nil set has none.
func (s *Set) Has(phase string) bool {
	if s == nil {
		return false
	}
	pi := phaseIndex(phase)
	return pi >= 0 && len(s.phases[pi]) > 0
}

// Uses reports whether a rule of the phase references the variable, for
// example Uses(PhaseCall, "args"): when false the caller need not prepare
// it. For PhaseCall the list rules, which Decide applies first, count too.
func (s *Set) Uses(phase, variable string) bool {
	if s == nil {
		return false
	}
	pi := phaseIndex(phase)
	if pi < 0 {
		return false
	}
	bit := varBits[variable]
	for _, r := range s.phases[pi] {
		if r.uses&bit != 0 {
			return true
		}
	}
	return phase == PhaseCall && s.Uses(PhaseList, variable)
}

// Rules returns the number of compiled rules.
func (s *Set) Rules() int {
	if s == nil {
		return 0
	}
	return s.n
}

// Default returns the default effect: EffectAllow or EffectDeny.
func (s *Set) Default() string {
	if s == nil {
		return EffectAllow
	}
	return s.defaultEffect
}

// Decision is the outcome of one phase for one input.
type Decision struct {
	Phase   string // the phase that decided; PhaseList when a list rule refused a call
	Rule    string // deciding rule's name; "" when the default decided
	Effect  string // EffectAllow, EffectDeny or EffectAsk
	Message string // the rule's message (deny or ask), or a generic one
	// Reason says why: "rule X matched", "no rule matched: default allow",
	// or an evaluation error "rule X: no such key: path" (errors deny).
	Reason   string
	Error    bool          // an evaluation error forced the deny
	Duration time.Duration // evaluation time including input conversion
	// Approvers are who may answer an ask (the rule's approvers); nil
	// means the caller. The slice is the rule's: do not modify it.
	Approvers []string
}

// Allowed reports whether the effect is allow. Ask is not allowed until
// someone approves.
func (d Decision) Allowed() bool { return d.Effect == EffectAllow }

// Decide evaluates the rules of a phase against in: the first rule whose
// condition is true decides, no match means the default. For PhaseCall the
// list rules run first, and a list deny (a hidden tool) is returned with
// Phase PhaseList; the host must answer it exactly as for an unknown tool.
// Any evaluation error (missing key, no matching overload, cost limit,
// cancelled ctx) denies with Error set; so do an unknown phase and a nil in.
// A nil Set allows everything. Decide never panics and is safe for
// concurrent use with distinct Inputs.
func (s *Set) Decide(ctx context.Context, phase string, in *Input) (d Decision) {
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			d = Decision{Phase: phase, Effect: EffectDeny, Error: true,
				Message: "denied: the policy engine failed",
				Reason:  fmt.Sprintf("internal error: %v", r)}
		}
		d.Duration = time.Since(start)
	}()
	if s == nil {
		return Decision{Phase: phase, Effect: EffectAllow, Reason: "no policies: allow"}
	}
	pi := phaseIndex(phase)
	switch {
	case pi < 0:
		return Decision{Phase: phase, Effect: EffectDeny, Error: true,
			Message: "denied: unknown policy phase", Reason: fmt.Sprintf("unknown phase %q", phase)}
	case in == nil:
		return Decision{Phase: phase, Effect: EffectDeny, Error: true,
			Message: "denied: no input for the policy decision", Reason: "no input"}
	case ctx.Err() != nil:
		return Decision{Phase: phase, Effect: EffectDeny, Error: true,
			Message: "denied: the request ended before the policy decision", Reason: context.Cause(ctx).Error()}
	}
	op := opOf(phase, in)
	if op == 0 {
		return Decision{Phase: phase, Effect: EffectDeny, Error: true,
			Message: "denied: unknown operation", Reason: fmt.Sprintf("operation %q is not one of the %s phase's", in.Op, phase)}
	}
	act := activation{in: in, op: opName(op), adapter: s.adapter}
	// One execution frame serves every rule of the call, and the context is
	// watched only when a rule loops (CEL checks it only inside
	// comprehensions): per-rule setup was most of the cost of a decision.
	frame, err := interpreter.NewExecutionFrame(&act)
	if err != nil {
		return Decision{Phase: phase, Effect: EffectDeny, Error: true,
			Message: "denied: the policy engine failed", Reason: err.Error()}
	}
	defer frame.Close()
	if s.loops[pi] || (pi == 1 && s.loops[0]) {
		if err := frame.SetContext(ctx, interruptCheckFrequency); err != nil {
			return Decision{Phase: phase, Effect: EffectDeny, Error: true,
				Message: "denied: the policy engine failed", Reason: err.Error()}
		}
	}
	bounded := bounds{identity: inputBounded(in), args: argsBounded(in)}
	if pi == 1 {
		if d := s.evalPhase(ctx, frame, bounded, PhaseList, 0, listOpOf(op, in), in); d.Effect == EffectDeny {
			return d
		}
	}
	return s.evalPhase(ctx, frame, bounded, phase, pi, op, in)
}

func (s *Set) evalPhase(ctx context.Context, frame *interpreter.ExecutionFrame, bounded bounds, phase string, pi int, op opSet, in *Input) Decision {
	var vs *verdictSet
	if s.statics[pi] >= minStaticRules {
		vs = s.staticVerdicts(ctx, frame, bounded, pi, op, in)
	}
	for i := range s.phases[pi] {
		r := &s.phases[pi][i]
		if r.ops&op == 0 {
			continue // a rule about another operation
		}
		var matched bool
		if vs != nil && r.static {
			matched = vs.matched[i]
		} else {
			var err error
			if matched, err = evalRule(ctx, frame, bounded, r); err != nil {
				return Decision{Phase: phase, Rule: r.name, Effect: EffectDeny, Error: true,
					Message: "denied: policy " + r.name + " could not be evaluated",
					Reason:  "rule " + r.name + ": " + err.Error()}
			}
		}
		if !matched {
			continue
		}
		d := Decision{Phase: phase, Rule: r.name, Effect: r.effect, Message: r.message,
			Reason: "rule " + r.name + " matched", Approvers: r.approvers}
		if d.Message == "" {
			switch r.effect {
			case EffectDeny:
				d.Message = "denied by policy " + r.name
			case EffectAsk:
				d.Message = "approval required by policy " + r.name
			}
		}
		return d
	}
	if s.defaultEffect == EffectDeny {
		return Decision{Phase: phase, Effect: EffectDeny,
			Message: "denied by the default policy", Reason: "no rule matched: default deny"}
	}
	return Decision{Phase: phase, Effect: EffectAllow, Reason: "no rule matched: default allow"}
}

// staticVerdicts returns the verdicts of phase pi's static rules for in's
// facts: kept, or evaluated and kept. nil when they cannot be kept (a
// rule failed, another set's hash): the rules are then
// evaluated in turn, as without verdicts.
func (s *Set) staticVerdicts(ctx context.Context, frame *interpreter.ExecutionFrame, bounded bounds, pi int, op opSet, in *Input) *verdictSet {
	f := factsOf(pi, op, in)
	vs, h, ok := s.verdicts.lookup(&f)
	if vs != nil || !ok {
		return vs
	}
	vs = &verdictSet{facts: f, matched: make([]bool, len(s.phases[pi]))}
	for i := range s.phases[pi] {
		r := &s.phases[pi][i]
		if !r.static || r.ops&op == 0 {
			continue
		}
		m, err := evalRule(ctx, frame, bounded, r)
		if err != nil {
			return nil
		}
		vs.matched[i] = m
	}
	s.verdicts.keep(h, vs)
	return vs
}

// bounds tells which bounds an input is within: the identity bounds
// (inputBounded) and maxArgsBytes (argsBounded).
type bounds struct{ identity, args bool }

// evalRule evaluates r's condition on frame, without cost tracking when
// the input is within the bounds under which r cannot reach the limit.
func evalRule(ctx context.Context, frame *interpreter.ExecutionFrame, bounded bounds, r *rule) (bool, error) {
	prg := r.prg
	if bounded.identity && r.fast != nil && (bounded.args || !r.fastSmallArgs) {
		prg = r.fast
	} else if frame.CostTracker() != nil {
		// Each rule gets its own cost tracker, hence its own limit: the
		// program installs a fresh one when the frame has none.
		frame.SetCostTracker(nil)
	}
	out, _, err := prg.Eval(frame)
	if err != nil && errors.Is(err, interpreter.InterruptError{}) {
		if cause := context.Cause(ctx); cause != nil {
			err = fmt.Errorf("%w: %w", err, cause)
		}
	}
	if err != nil {
		return false, err
	}
	b, ok := out.(types.Bool)
	if !ok {
		return false, fmt.Errorf("condition returned %s, not bool", out.Type().TypeName())
	}
	return bool(b), nil
}
