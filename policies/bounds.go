package policies

import (
	"strings"

	"cel.dev/cel-go/common/cost"
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

// boundedEstimator tells CEL's cost estimator the identity bounds; every
// other size (args, result, app) stays unknown, that is unbounded.
type boundedEstimator struct{}

func (boundedEstimator) EstimateSize(n cost.AstNode) *cost.SizeEstimate {
	var max uint64
	switch strings.Join(n.Path(), ".") {
	case "server", "era", "origin", "principal.name", "principal.groups.@items", "tool.name", "tool.title":
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
	for _, s := range [...]string{in.Server, in.Era, in.Origin, in.Principal.Name, in.Tool.Name, in.Tool.Title} {
		if len(s) > maxIdentityBytes {
			return false
		}
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
