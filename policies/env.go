package policies

import (
	"fmt"
	"reflect"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/ext"
)

// Evaluation bounds, the same for every rule.
const (
	// CostLimit is the most CEL cost units one rule may spend on one
	// evaluation; past it the evaluation stops and the decision is deny.
	CostLimit = 10000
	// interruptCheckFrequency is how many comprehension steps pass between
	// checks of the caller's context.
	interruptCheckFrequency = 100
	// maxWhenCodePoints bounds the length of one expression.
	maxWhenCodePoints = 16384
)

// phaseVars lists the variables each phase declares, in the order the
// diagnostics name them.
var phaseVars = map[string][]string{
	PhaseList:   {"server", "era", "origin", "principal", "tool"},
	PhaseCall:   {"server", "era", "origin", "principal", "tool", "args"},
	PhaseResult: {"server", "era", "origin", "principal", "tool", "args", "result"},
	PhaseApp:    {"server", "era", "origin", "principal", "tool", "app"},
}

// phases in the order they are reported.
var phases = []string{PhaseList, PhaseCall, PhaseResult, PhaseApp}

// Object types as CEL sees them (ext.NativeTypes names a Go struct by its
// package and type name).
var (
	principalType = cel.ObjectType("policies.Principal")
	toolType      = cel.ObjectType("policies.Tool")
	resultType    = cel.ObjectType("policies.Result")
	appType       = cel.ObjectType("policies.App")
)

var varTypes = map[string]*cel.Type{
	"server":    cel.StringType,
	"era":       cel.StringType,
	"origin":    cel.StringType,
	"principal": principalType,
	"tool":      toolType,
	"args":      cel.DynType,
	"result":    resultType,
	"app":       appType,
}

// envs holds one environment per phase, built once per process: they are
// immutable and shared by every Compile.
var envs = sync.OnceValues(func() (map[string]*cel.Env, error) {
	base, err := cel.NewEnv(
		ext.NativeTypes(
			ext.ParseStructTags(true),
			reflect.TypeFor[Principal](),
			reflect.TypeFor[Tool](),
			reflect.TypeFor[Annotations](),
			reflect.TypeFor[Result](),
			reflect.TypeFor[App](),
			reflect.TypeFor[CSP](),
		),
		ext.Strings(),
		ext.Sets(),
		cel.ParserExpressionSizeLimit(maxWhenCodePoints),
	)
	if err != nil {
		return nil, fmt.Errorf("policies: base environment: %w", err)
	}
	out := make(map[string]*cel.Env, len(phaseVars))
	for phase, names := range phaseVars {
		opts := make([]cel.EnvOption, 0, len(names))
		for _, n := range names {
			opts = append(opts, cel.Variable(n, varTypes[n]))
		}
		env, err := base.Extend(opts...)
		if err != nil {
			return nil, fmt.Errorf("policies: %s environment: %w", phase, err)
		}
		out[phase] = env
	}
	return out, nil
})
