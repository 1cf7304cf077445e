package policies

import (
	"fmt"
	"math/bits"
	"strings"
)

// Operations: what a principal asks of a server. A rule governs the
// operations of its `ops` list; one without governs its phase's default
// operation (OpListTools in the list phase, OpCallTool in the call phase),
// which is all a rule governed before there were other operations.
const (
	// The list phase: what a principal sees.
	OpListTools     = "tools/list"
	OpListResources = "resources/list" // resources and resource templates
	OpListPrompts   = "prompts/list"
	// The call phase: what a principal does.
	OpCallTool    = "tools/call"
	OpReadRes     = "resources/read"
	OpGetPrompt   = "prompts/get"
	OpComplete    = "completion/complete"
	OpSubscribe   = "resources/subscribe"
	OpUnsubscribe = "resources/unsubscribe"
)

// opSet is a set of operations, one bit each.
type opSet uint16

var opBits = map[string]opSet{
	OpListTools: 1 << 0, OpListResources: 1 << 1, OpListPrompts: 1 << 2,
	OpCallTool: 1 << 3, OpReadRes: 1 << 4, OpGetPrompt: 1 << 5, OpComplete: 1 << 6,
	OpSubscribe: 1 << 7, OpUnsubscribe: 1 << 8,
}

// phaseOps are the operations a rule of each phase may govern, the first
// being the phase's default.
var phaseOps = map[string][]string{
	PhaseList:   {OpListTools, OpListResources, OpListPrompts},
	PhaseCall:   {OpCallTool, OpReadRes, OpGetPrompt, OpComplete, OpSubscribe, OpUnsubscribe},
	PhaseResult: {OpCallTool},
	PhaseApp:    {OpCallTool},
}

// Ops returns the operations a rule of phase may name in its ops list, the
// phase's default first; nil for an unknown phase.
func Ops(phase string) []string { return append([]string(nil), phaseOps[phase]...) }

// compileOps checks rule i's ops against its phase and returns their set:
// the phase's default when ops is empty. An unknown phase reports nothing
// here (Compile reports the phase).
func compileOps(i int, phase string, ops []string) (opSet, []CompileError) {
	allowed, ok := phaseOps[phase]
	if !ok {
		return 0, nil
	}
	if len(ops) == 0 {
		return opBits[allowed[0]], nil
	}
	var set opSet
	var errs []CompileError
	for _, op := range ops {
		bit := opBits[op]
		known := false
		for _, a := range allowed {
			known = known || a == op
		}
		if !known {
			detail := fmt.Sprintf("The operation %q is not one a %s rule can govern. Use one of %s.", op, phase, quoteList(allowed))
			if bit != 0 {
				detail = fmt.Sprintf("The operation %q belongs to another phase: a %s rule governs %s.", op, phase, quoteList(allowed))
			}
			errs = append(errs, CompileError{Rule: i, Field: "ops", Offset: -1, Summary: "Invalid policy operation", Detail: detail})
			continue
		}
		set |= bit
	}
	return set, errs
}

func quoteList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// opOf is the operation in is about in phase: in.Op, or the phase's
// default when it is empty; 0 when in.Op is not an operation of the phase.
func opOf(phase string, in *Input) opSet {
	allowed := phaseOps[phase]
	if in.Op == "" {
		return opBits[allowed[0]]
	}
	for _, a := range allowed {
		if a == in.Op {
			return opBits[a]
		}
	}
	return 0
}

// listOpOf is the list operation that hides what a call-phase operation
// is about: a hidden tool cannot be called, a hidden resource cannot be
// read or subscribed to, a hidden prompt cannot be got. A completion is
// about its prompt, or else its resource template.
func listOpOf(op opSet, in *Input) opSet {
	switch op {
	case opBits[OpReadRes], opBits[OpSubscribe], opBits[OpUnsubscribe]:
		return opBits[OpListResources]
	case opBits[OpGetPrompt]:
		return opBits[OpListPrompts]
	case opBits[OpComplete]:
		if in.Prompt != nil {
			return opBits[OpListPrompts]
		}
		return opBits[OpListResources]
	}
	return opBits[OpListTools]
}

// opNames are the operations by bit position.
var opNames = func() (out [16]string) {
	for name, bit := range opBits {
		out[bits.TrailingZeros16(uint16(bit))] = name
	}
	return out
}()

// opName is the name of the one operation in op.
func opName(op opSet) string { return opNames[bits.TrailingZeros16(uint16(op))&15] }
