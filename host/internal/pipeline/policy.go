package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcphost/mcphost/apps"
	"github.com/mcphost/mcphost/host/internal/generation"
	"github.com/mcphost/mcphost/host/internal/identity"
	"github.com/mcphost/mcphost/host/internal/upstream"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/policies"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Trail is what the policies and plugins did to one call; it is stored as
// the entry's trail and shown in the WebShell next to the call.
type Trail struct {
	// Decisions are the policy decisions a rule made, and those of the
	// default when it did not allow, in the order they were made.
	Decisions []TrailDecision `json:"decisions,omitempty"`
	// Approval is how an `ask` ended: approved, denied, expired or
	// cancelled.
	Approval string `json:"approval,omitempty"`
	// Plugins are the plugin runs, result stage then display stage.
	Plugins []plugins.Outcome `json:"plugins,omitempty"`
	// Input is what the server asked while the call ran (elicitation,
	// roots, sampling) and how each ended, never a secret value
	// (elicit.go).
	Input []InputAsk `json:"input,omitempty"`
}

// TrailDecision is one policy decision of a call.
type TrailDecision struct {
	Phase   string  `json:"phase"`
	Rule    string  `json:"rule,omitempty"` // "" when the default decided
	Effect  string  `json:"effect"`
	Message string  `json:"message,omitempty"`
	Reason  string  `json:"reason"`
	Error   bool    `json:"error,omitempty"` // an evaluation error forced the deny
	Micros  float64 `json:"micros"`          // evaluation time, input conversion included
}

func (t *Trail) Empty() bool {
	return len(t.Decisions) == 0 && t.Approval == "" && len(t.Plugins) == 0 && len(t.Input) == 0
}

// Raw encodes the trail, or returns nil when nothing happened.
func (t *Trail) Raw() json.RawMessage {
	if t.Empty() {
		return nil
	}
	b, err := json.Marshal(t)
	if err != nil {
		return nil
	}
	return b
}

// PolicyError is a call a policy refused, or whose result or App it
// withheld. The API answers it with 403, the rule's name and its message.
type PolicyError struct {
	Phase   string
	Rule    string // "" when the default decided
	Message string
	// Entry is the recorded transcript entry (status denied), when the call
	// was made in a session.
	Entry *store.Entry
}

func (e *PolicyError) Error() string {
	if e.Rule == "" {
		return fmt.Sprintf("denied by the default policy (%s phase): %s", e.Phase, e.Message)
	}
	return fmt.Sprintf("denied by policy %q (%s phase): %s", e.Rule, e.Phase, e.Message)
}

// Policy holds the policy facts of one call: its input, converted once
// and shared by every phase, and the decisions made so far.
type Policy struct {
	set     *policies.Set // nil: no policies, everything allowed, nothing recorded
	plugins *plugins.Set  // the same generation's plugins; nil: none
	In      *policies.Input
	trail   *Trail
	Audit   []store.Audit
	CallID  string
	// always records every decision in the audit log, the default's too:
	// an operation other than a tool call has no transcript entry to show
	// that it happened (operations.go).
	always bool
}

// NewPolicy builds the input of a call of tool on c by p, under the
// policies and plugins of generation g. decoded is the arguments object
// when the schema check already decoded it, else nil (the policies then
// decode args only if a rule reads them).
func NewPolicy(g *generation.Gen, p identity.Principal, c *upstream.Conn, tool *mcp.Tool, origin string, args json.RawMessage, decoded any, trail *Trail) *Policy {
	r := &Policy{set: g.Policies, plugins: g.Plugins, trail: trail}
	if r.set == nil {
		return r
	}
	r.In = PolicyInput(p, c, tool, origin)
	r.In.Args, r.In.RawArgs = decoded, args
	return r
}

// PolicyInput is what every phase sees of a call of tool on c by p.
func PolicyInput(p identity.Principal, c *upstream.Conn, tool *mcp.Tool, origin string) *policies.Input {
	return &policies.Input{
		Server:    c.Cfg.Name,
		Era:       c.Era(),
		Origin:    origin,
		Principal: policies.Principal{Name: p.Name, Groups: p.Groups},
		Tool:      policies.ToolFromMCP(tool),
	}
}

// Decide evaluates one phase and records the decision in the trail and the
// audit log when a rule made it or the default did not allow.
func (r *Policy) Decide(ctx context.Context, phase string) policies.Decision {
	var d policies.Decision
	switch {
	case r.set != nil:
		d = r.set.Decide(ctx, phase, r.In)
	case r.always:
		d = policies.Decision{Phase: phase, Effect: policies.EffectAllow, Reason: "no policies: allow"}
	default:
		return policies.Decision{Phase: phase, Effect: policies.EffectAllow}
	}
	if d.Rule == "" && d.Effect == policies.EffectAllow && !d.Error && !r.always {
		return d
	}
	micros := float64(d.Duration.Nanoseconds()) / 1000
	r.trail.Decisions = append(r.trail.Decisions, TrailDecision{
		Phase: d.Phase, Rule: d.Rule, Effect: d.Effect, Message: d.Message, Reason: d.Reason, Error: d.Error, Micros: micros,
	})
	r.Audit = append(r.Audit, store.Audit{
		At: time.Now().UTC(), CallID: r.CallID, Origin: r.In.Origin, Server: r.In.Server, Op: r.In.Op, Tool: r.In.Tool.Name,
		Phase: d.Phase, Rule: d.Rule, Effect: d.Effect, Reason: d.Reason, Error: d.Error, DurationUs: micros,
	})
	return d
}

// Denied returns the PolicyError of a decision that did not allow.
func Denied(d policies.Decision) *PolicyError {
	msg := d.Message
	if msg == "" {
		msg = "denied by policy"
	}
	return &PolicyError{Phase: d.Phase, Rule: d.Rule, Message: msg}
}

// Hidden reports whether d is a list rule hiding the tool from a call: the
// caller is then answered exactly as for a tool that does not exist.
func Hidden(d policies.Decision) bool {
	return d.Phase == policies.PhaseList && !d.Allowed()
}

// ResultStage runs the result plugins and then the result policies on res.
// It returns the result to show (nil when a plugin failed or a policy
// withheld it) and, when it is nil, the status and error to record.
func (pol *Policy) ResultStage(ctx context.Context, p identity.Principal, c *upstream.Conn, cat *upstream.Catalog, tool *mcp.Tool, args json.RawMessage, res *mcp.CallToolResult) (_ *mcp.CallToolResult, _ string, err error) {
	ctx, span := StartStage(ctx, "result stage")
	defer func() { upstream.EndSpan(span, err) }()
	trail := pol.trail
	if pol.plugins != nil && pol.plugins.Has(plugins.StageResult, c.Cfg.Name, tool.Name) {
		out, outcomes, err := pol.plugins.RunResult(ctx, plugins.ResultInput{
			Server: c.Cfg.Name, Tool: tool.Name, Arguments: args,
			Principal:          plugins.Principal{Name: p.Name, Groups: p.Groups},
			Result:             res,
			ValidateStructured: cat.OutputValidator(tool),
		})
		trail.Plugins = append(trail.Plugins, outcomes...)
		if err != nil {
			// A failed plugin (on_error = "fail") must not leak the result
			// it was meant to process: nothing of it is shown or stored.
			return nil, store.StatusError, err
		}
		res = out
	}
	if pol.set != nil {
		if pol.set.Uses(policies.PhaseResult, "result") { // else no rule reads it: skip the conversion
			pol.In.Result = policies.ResultFromMCP(res)
		}
		if d := pol.Decide(ctx, policies.PhaseResult); !d.Allowed() {
			return nil, store.StatusDenied, Denied(d)
		}
	}
	return res, "", nil
}

// DisplayStage runs the display plugins and then the app policies on the
// display record d of a successful call, whose final result is res. A
// failed plugin or a refusing policy turns d into its text form: no App,
// the ordinary text with a warning.
func (pol *Policy) DisplayStage(ctx context.Context, p identity.Principal, c *upstream.Conn, tool *mcp.Tool, args json.RawMessage, res *mcp.CallToolResult, d *apps.Display) {
	trail := pol.trail
	if d == nil || d.HTML == "" {
		return
	}
	ctx, span := StartStage(ctx, "display stage")
	defer span.End()
	if pol.plugins != nil && pol.plugins.Has(plugins.StageDisplay, c.Cfg.Name, tool.Name) {
		out, outcomes, err := pol.plugins.RunDisplay(ctx, plugins.DisplayInput{
			Server: c.Cfg.Name, Tool: tool.Name, Arguments: args,
			Principal: plugins.Principal{Name: p.Name, Groups: p.Groups},
			Result:    res,
			Display:   pluginDisplay(d),
		})
		trail.Plugins = append(trail.Plugins, outcomes...)
		if err != nil {
			WithholdApp(d, res, fmt.Sprintf("a display plugin failed: %v", err))
			return
		}
		d.HTML, d.FallbackText, d.Permissions = out.HTML, out.FallbackText, out.Permissions
		d.CSP = out.CSP
		d.UnsafeEval = d.UnsafeEval && d.HTML != "" // a plugin never adds it
	}
	if pol.set != nil {
		if pol.set.Uses(policies.PhaseApp, "app") {
			pol.In.App = PolicyApp(d)
		}
		if dec := pol.Decide(ctx, policies.PhaseApp); !dec.Allowed() {
			name := "the default policy"
			if dec.Rule != "" {
				name = fmt.Sprintf("policy %q", dec.Rule)
			}
			WithholdApp(d, res, fmt.Sprintf("the App was not rendered: %s refused it (%s)", name, dec.Message))
		}
	}
}

// WithholdApp turns d into the text form of a display record with warning.
func WithholdApp(d *apps.Display, res *mcp.CallToolResult, warning string) {
	d.HTML = ""
	d.CSP = nil
	d.Permissions = nil
	d.PrefersBorder = nil
	d.UnsafeEval = false
	d.Warning = warning
	d.FallbackText = "Warning: " + warning + "\n\n" + apps.FallbackText(res)
}

func pluginDisplay(d *apps.Display) plugins.Display {
	return plugins.Display{Type: d.Type, ResourceURI: d.ResourceURI, HTML: d.HTML, CSP: d.CSP, Permissions: d.Permissions, FallbackText: d.FallbackText}
}

// PolicyApp is what the app phase sees of a display record.
func PolicyApp(d *apps.Display) *policies.App {
	a := &policies.App{ResourceURI: d.ResourceURI, HTMLSize: len(d.HTML), Permissions: []string{}}
	if d.CSP != nil {
		a.CSP = *d.CSP
	}
	for name := range d.Permissions {
		a.Permissions = append(a.Permissions, name)
	}
	return a
}

// NewOpPolicy is the policy run of an operation other than a tool call,
// whose input in is ready: every decision is audited, the default's too
// (an operation has no transcript entry to show that it happened).
func NewOpPolicy(g *generation.Gen, in *policies.Input) *Policy {
	return &Policy{set: g.Policies, plugins: g.Plugins, trail: &Trail{}, always: true, In: in}
}

// NoteOutcome adds the answer to an `ask` to the decision's audit record
// and the trail.
func (r *Policy) NoteOutcome(outcome string) {
	if n := len(r.Audit); n > 0 {
		r.Audit[n-1].Reason += "; " + outcome
	}
	r.trail.Approval = outcome
}

// Trail returns what the policies decided so far, for the record.
func (r *Policy) Trail() *Trail { return r.trail }

// OpAudit returns the audit records of an operation: its decision, naming
// what it was about (subject), and the upstream failure when there was one.
func (r *Policy) OpAudit(subject string, err error) []store.Audit {
	for i := range r.Audit {
		r.Audit[i].Tool = subject
		if err != nil && r.Audit[i].Effect == policies.EffectAllow {
			r.Audit[i].Reason += "; failed: " + err.Error()
		}
	}
	return r.Audit
}
