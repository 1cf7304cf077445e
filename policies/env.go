package policies

import (
	"fmt"
	"reflect"
	"slices"
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
	PhaseList:   {"server", "era", "origin", "principal", "client", "op", "tool", "resource", "prompt"},
	PhaseCall:   {"server", "era", "origin", "principal", "client", "op", "tool", "resource", "prompt", "args"},
	PhaseResult: {"server", "era", "origin", "principal", "client", "tool", "args", "result"},
	PhaseApp:    {"server", "era", "origin", "principal", "client", "tool", "app"},
}

// phases in the order they are reported.
var phases = []string{PhaseList, PhaseCall, PhaseResult, PhaseApp}

// Object types as CEL sees them (ext.NativeTypes names a Go struct by its
// package and type name).
var (
	principalType = cel.ObjectType("policies.Principal")
	clientType    = cel.ObjectType("policies.Client")
	toolType      = cel.ObjectType("policies.Tool")
	resultType    = cel.ObjectType("policies.Result")
	appType       = cel.ObjectType("policies.App")
	resourceType  = cel.ObjectType("policies.Resource")
	promptType    = cel.ObjectType("policies.Prompt")
)

var varTypes = map[string]*cel.Type{
	"server":    cel.StringType,
	"era":       cel.StringType,
	"origin":    cel.StringType,
	"principal": principalType,
	"client":    clientType,
	"tool":      toolType,
	"args":      cel.DynType,
	"result":    resultType,
	"app":       appType,
	"op":        cel.StringType,
	"resource":  resourceType,
	"prompt":    promptType,
}

// allowedExtensions are the functions of the strings extension a policy may
// call: each is linear in its input. The others are refused at compile
// (see celEnvs.forbidden).
var allowedExtensions = []string{"lowerAscii", "upperAscii", "trim"}

// celEnvs is what envs builds once per process.
type celEnvs struct {
	byPhase map[string]*cel.Env
	// forbidden holds the refused functions: those the strings extension
	// adds beyond allowedExtensions. CEL charges a call's
	// cost only after it returns, so a single call whose work grows faster
	// than its inputs (replace, join, indexOf) could run away before the
	// cost limit sees it. Computed from the library itself so that an
	// upgrade adding functions refuses them too.
	forbidden map[string]bool
}

// envs holds one environment per phase, built once per process: they are
// immutable and shared by every Compile.
var envs = sync.OnceValues(func() (*celEnvs, error) {
	common := []cel.EnvOption{
		ext.NativeTypes(
			ext.ParseStructTags(true),
			reflect.TypeFor[Principal](),
			reflect.TypeFor[Client](),
			reflect.TypeFor[Tool](),
			reflect.TypeFor[Annotations](),
			reflect.TypeFor[Result](),
			reflect.TypeFor[App](),
			reflect.TypeFor[CSP](),
			reflect.TypeFor[Resource](),
			reflect.TypeFor[Prompt](),
		),
		cel.ParserExpressionSizeLimit(maxWhenCodePoints),
	}
	std, err := cel.NewEnv(common...)
	if err != nil {
		return nil, fmt.Errorf("policies: standard environment: %w", err)
	}
	base, err := std.Extend(ext.Strings())
	if err != nil {
		return nil, fmt.Errorf("policies: base environment: %w", err)
	}
	out := &celEnvs{byPhase: make(map[string]*cel.Env, len(phaseVars)), forbidden: map[string]bool{}}
	for name := range base.Functions() {
		if !std.HasFunction(name) && !slices.Contains(allowedExtensions, name) {
			out.forbidden[name] = true
		}
	}
	for phase, names := range phaseVars {
		opts := make([]cel.EnvOption, 0, len(names))
		for _, n := range names {
			opts = append(opts, cel.Variable(n, varTypes[n]))
		}
		env, err := base.Extend(opts...)
		if err != nil {
			return nil, fmt.Errorf("policies: %s environment: %w", phase, err)
		}
		out.byPhase[phase] = env
	}
	return out, nil
})
