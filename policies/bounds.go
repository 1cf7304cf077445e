package policies

import (
	"strings"

	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// Identity bounds. Most rules test only the identity variables (server, era,
// origin, principal, tool); for an input within these bounds, a rule whose
// estimated worst-case cost under them stays below CostLimit cannot reach
// the limit, so it runs without per-node cost tracking, which is most of the
// price of an evaluation. Larger inputs are still decided, with tracking.
const (
	maxIdentityBytes = 1024 // server, era, origin, principal.name, each group, tool.name, tool.title
	maxGroups        = 256  // principal.groups
)

// maxArgsBytes bounds the raw arguments for which a rule that reads args
// may run without cost tracking: every value in arguments of n bytes (a
// string in code points, a list or map in members) has a size of at most
// n, so a rule whose estimated worst-case cost under that bound stays
// below CostLimit cannot reach the limit on them. Larger arguments, or
// arguments given only decoded, are decided with tracking.
const maxArgsBytes = 4096

// boundedEstimator tells CEL's cost estimator the identity bounds and,
// with args set, maxArgsBytes for every value read from args; every other
// size (result, app, and args without it) stays unknown, that is
// unbounded.
type boundedEstimator struct{ args bool }

func (b boundedEstimator) EstimateSize(n cost.AstNode) *cost.SizeEstimate {
	if path := n.Path(); b.args && len(path) > 0 && path[0] == "args" {
		est := cost.RangedSizeEstimate(0, maxArgsBytes)
		return &est
	}
	var max uint64
	switch strings.Join(n.Path(), ".") {
	case "server", "era", "origin", "principal.name", "principal.groups.@items", "tool.name", "tool.title",
		"op", "resource.uri", "resource.name", "resource.mimeType", "prompt.name", "prompt.title":
		max = maxIdentityBytes // CEL sizes strings in code points, never more than bytes
	case "principal.groups":
		max = maxGroups
	default:
		return nil
	}
	est := cost.RangedSizeEstimate(0, max)
	return &est
}

func (boundedEstimator) EstimateCallCost(string, string, *cost.AstNode, []cost.AstNode) *cost.CallEstimate {
	return nil
}

// inputBounded reports whether in is within the identity bounds, so the
// rules' fast programs may run.
func inputBounded(in *Input) bool {
	for _, s := range [...]string{in.Server, in.Era, in.Origin, in.Principal.Name, in.Tool.Name, in.Tool.Title, in.Op} {
		if len(s) > maxIdentityBytes {
			return false
		}
	}
	if r := in.Resource; r != nil && (len(r.URI) > maxIdentityBytes || len(r.Name) > maxIdentityBytes || len(r.MIMEType) > maxIdentityBytes) {
		return false
	}
	if p := in.Prompt; p != nil && (len(p.Name) > maxIdentityBytes || len(p.Title) > maxIdentityBytes) {
		return false
	}
	if len(in.Principal.Groups) > maxGroups {
		return false
	}
	for _, g := range in.Principal.Groups {
		if len(g) > maxIdentityBytes {
			return false
		}
	}
	return true
}

// dynamicCallCost charges calls that CEL dispatches at run time (operands
// of type dyn, such as anything read from args): CEL's tracker knows no
// overload for them and charges 1, so `args.s + args.s` in a loop could copy
// megabytes per step within the limit. They are charged as the typed
// overloads are: one unit plus a tenth of the bytes of their string and
// bytes operands. Calls with a resolved overload keep CEL's own model.
type dynamicCallCost struct{}

func (dynamicCallCost) CallCost(function, overloadID string, args []ref.Val, result ref.Val) *uint64 {
	if overloadID != "" {
		return nil
	}
	var n uint64
	for _, a := range args {
		switch v := a.(type) {
		case types.String:
			n += uint64(len(v))
		case types.Bytes:
			n += uint64(len(v))
		}
	}
	c := 1 + (n+9)/10
	return &c
}

// argsBounded reports whether in's arguments are within maxArgsBytes: raw,
// or none at all.
func argsBounded(in *Input) bool {
	if in.RawArgs == nil {
		return in.Args == nil
	}
	return len(in.RawArgs) <= maxArgsBytes
}
