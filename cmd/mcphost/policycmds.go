package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mcphost/mcphost/policies"
)

// policy runs the `policy` subcommands.
func (e *env) policy(ctx context.Context, args []string) int {
	if len(args) == 0 || args[0] != "eval" {
		fmt.Fprintln(e.stderr, "usage: mcphost policy eval [-config FILE] [-json] [-expect EFFECT] -phase PHASE INPUT.json")
		return exitUsage
	}
	return e.policyEval(ctx, args[1:])
}

// policyEval evaluates one phase of the config's policies on an input file
// and prints the decision, the deciding rule (with who approves an ask)
// and the evaluation time.
func (e *env) policyEval(ctx context.Context, args []string) int {
	fs := e.newFlagSet("policy eval", "[-config FILE] [-json] [-expect EFFECT] -phase PHASE INPUT.json|-")
	configPath := fs.String("config", "", "config file (default: the embedded default)")
	phase := fs.String("phase", "", "the phase to evaluate: list, call, result or app")
	asJSON := fs.Bool("json", false, "print the decision as JSON")
	expect := fs.String("expect", "", "exit 1 unless the effect is this (allow, deny or ask): for tests of a policy set")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	switch *phase {
	case policies.PhaseList, policies.PhaseCall, policies.PhaseResult, policies.PhaseApp:
	case "":
		fmt.Fprintln(e.stderr, "mcphost policy eval: -phase is required (list, call, result or app)")
		return exitUsage
	default:
		fmt.Fprintf(e.stderr, "mcphost policy eval: unknown phase %q: use list, call, result or app\n", *phase)
		return exitUsage
	}
	switch *expect {
	case "", policies.EffectAllow, policies.EffectDeny, policies.EffectAsk:
	default:
		fmt.Fprintf(e.stderr, "mcphost policy eval: unknown -expect %q: use allow, deny or ask\n", *expect)
		return exitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(e.stderr, "mcphost policy eval: name one input file (or - for stdin)")
		fs.Usage()
		return exitUsage
	}
	data, err := e.readInput(fs.Arg(0), policies.MaxInputBytes)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost policy eval: %v\n", err)
		return exitFailure
	}
	in, err := policies.DecodeInput(data)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost policy eval: %s: %v\n", fs.Arg(0), err)
		return exitUsage
	}
	cfg, ok := e.loadPart(*configPath)
	if !ok {
		return exitUsage
	}
	// Only the policies need their values; a server's secrets do not.
	unset := cfg.UnsetIn("policies", "")
	for _, p := range cfg.Policies {
		unset = append(unset, cfg.UnsetIn("policy", p.Name)...)
	}
	if len(unset) > 0 || cfg.PolicySet == nil {
		return e.refuseUnset("policy eval", "the policy set", unset)
	}
	// The first evaluation in a process pays for one-time set-up; a daemon
	// pays that once, so the time printed is of a second, warm evaluation.
	cold := cfg.PolicySet.Decide(ctx, *phase, in)
	in, _ = policies.DecodeInput(data)
	d := cfg.PolicySet.Decide(ctx, *phase, in)
	where := ""
	if d.Rule != "" {
		for _, p := range cfg.Policies {
			if p.Name == d.Rule {
				where = fmt.Sprintf("%s:%d", p.DeclRange.Filename, p.DeclRange.Start.Line)
			}
		}
	}
	if *asJSON {
		writeJSON(e.stdout, struct {
			Phase     string   `json:"phase"`
			Effect    string   `json:"effect"`
			Rule      string   `json:"rule"`
			Where     string   `json:"where,omitempty"`
			Message   string   `json:"message,omitempty"`
			Approvers []string `json:"approvers,omitempty"`
			Reason    string   `json:"reason"`
			Error     bool     `json:"error"`
			Micros    float64  `json:"micros"`
			Cold      float64  `json:"coldMicros"`
			NumRules  int      `json:"rules"`
		}{d.Phase, d.Effect, d.Rule, where, d.Message, d.Approvers, d.Reason, d.Error, float64(d.Duration.Nanoseconds()) / 1000,
			float64(cold.Duration.Nanoseconds()) / 1000, cfg.PolicySet.Rules()})
	} else {
		rule := "(none: the default decided)"
		if d.Rule != "" {
			rule = d.Rule
			if where != "" {
				rule += " (" + where + ")"
			}
		}
		fmt.Fprintf(e.stdout, "decision: %s\n", d.Effect)
		fmt.Fprintf(e.stdout, "phase:    %s\n", d.Phase)
		fmt.Fprintf(e.stdout, "rule:     %s\n", rule)
		if d.Message != "" && d.Effect != policies.EffectAllow {
			fmt.Fprintf(e.stdout, "message:  %s\n", d.Message)
		}
		if d.Effect == policies.EffectAsk {
			approvers := "(none named: the caller approves)"
			if len(d.Approvers) > 0 {
				approvers = strings.Join(d.Approvers, ", ")
			}
			fmt.Fprintf(e.stdout, "approvers: %s\n", approvers)
		}
		fmt.Fprintf(e.stdout, "reason:   %s\n", d.Reason)
		fmt.Fprintf(e.stdout, "time:     %s (the first evaluation in this process: %s)\n",
			d.Duration.Round(100*time.Nanosecond), cold.Duration.Round(time.Microsecond))
	}
	if *expect != "" && d.Effect != *expect {
		fmt.Fprintf(e.stderr, "mcphost policy eval: the effect is %s, expected %s\n", d.Effect, *expect)
		return exitFailure
	}
	return exitOK
}

// readInput reads a file, or stdin for "-", up to limit bytes.
func (e *env) readInput(name string, limit int64) ([]byte, error) {
	var r io.Reader = e.stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, limit)
	}
	return data, nil
}
