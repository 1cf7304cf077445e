package host

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/mcphost/mcphost/apps"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/generation"
	"github.com/mcphost/mcphost/host/internal/pipeline"
	"github.com/mcphost/mcphost/host/internal/questions"
	"github.com/mcphost/mcphost/host/internal/upstream"
	"github.com/mcphost/mcphost/internal/jsonkeys"
	"github.com/mcphost/mcphost/policies"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"
)

// The operations besides tool calls: reading a resource, getting a prompt,
// completing an argument, subscribing to a resource and ending that. Every
// door (the API and WebShell, the CLI, the gateway) asks them through the
// methods below, and each runs the same stages as a tool call
// (architecture.md, "The pipeline"), one line each in operate: the drain
// check, the session owner, the caller's rate limit, the span, the
// caller's own session of the server (upstream.Target), the `list` rules
// of what the operation is about and the `call` rules that govern the
// operation (an `ask` waits for an answer in the WebShell), the upstream
// request within the server's call_timeout, and the record: a read or a
// prompt made in a transcript session is an entry of it (KindRead,
// KindPrompt) with its audit records; every other operation leaves its
// audit record only.

// operation is one request of a caller other than a tool call.
type operation struct {
	op     string // policies.OpReadRes, …
	server string
	// session is the caller's transcript session the operation is
	// recorded in ("": none; only reads and prompts are recorded).
	session string
	// uri is the resource read or subscribed to, or the resource template
	// a completion is for.
	uri string
	// prompt is the prompt got, or the prompt a completion is for.
	prompt string
	// args are a prompt's arguments, or a completion's argument with its
	// context: what the policies see as args.
	args map[string]string
	// do makes the upstream request on the caller's session of the server,
	// and returns its result (for the record).
	do func(ctx context.Context, t upstream.Target) (any, error)
	// hidden: a list rule hides what the operation is about (it is
	// answered as not found, and recorded in the audit log only).
	hidden bool
}

// operate runs op for c through the stages, in order.
func (h *Host) operate(ctx context.Context, c Caller, op *operation) (err error) {
	ctx = upstream.RelayAs(ctx, c.Name) // a singleton relay names the caller to the holder
	ctx, span := startOpSpan(ctx, c, op)
	defer func() { upstream.EndSpan(span, err) }()
	if err := h.refuseIfDraining(); err != nil {
		return err
	}
	if err := h.opSession(ctx, c, op); err != nil {
		return err
	}
	g := h.acquire()
	defer g.Release()
	done, err := h.pipe.limiter.Admit(c.Name, g.RateLimitOf(c.Name))
	if err != nil {
		return err
	}
	defer done()
	t, err := g.VisibleTarget(ctx, c, op.server)
	if err != nil {
		return err
	}
	if err := op.checkArgumentKeys(t.Catalog); err != nil {
		return err
	}
	pol := newOpPolicy(g, c, t, op)
	rec := newOpRecord(c, t, op)
	callerCtx := ctx // the caller's: cancelled when the caller goes away
	defer func() { err = h.recordOp(callerCtx, c, op, pol, rec, err) }()
	if err := h.decideOp(ctx, c, t, op, pol); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, t.Conn.Cfg.CallTimeout)
	defer cancel()
	var result any
	result, err = op.do(ctx, t)
	rec.answered(result)
	t.Conn.CallFailed(err) // an authorization failure: the session waits for a sign-in
	return err
}

// opSession checks that the session op is to be recorded in is the
// caller's (ErrNotFound otherwise, as for a tool call). Only reads and
// prompts are recorded; a host without a store records nothing.
func (h *Host) opSession(ctx context.Context, c Caller, op *operation) error {
	if op.op != policies.OpReadRes && op.op != policies.OpGetPrompt {
		op.session = ""
	}
	if op.session == "" {
		return nil
	}
	if h.store == nil {
		return ErrNoStore
	}
	return h.checkSession(ctx, c.Name, op.session)
}

// startOpSpan starts the span of one operation, named as OpenTelemetry's
// MCP conventions name it ("resources/read", "prompts/get NAME").
func startOpSpan(ctx context.Context, c Caller, op *operation) (context.Context, trace.Span) {
	if !upstream.Tracing() {
		return ctx, upstream.NoSpan
	}
	name := op.op
	if op.prompt != "" {
		name += " " + op.prompt
	}
	ctx, span := upstream.StartSpan(ctx, name)
	if span.IsRecording() {
		span.SetAttributes(upstream.AttrMCPMethod.String(op.op), upstream.AttrServer.String(op.server),
			upstream.AttrPrincipal.String(c.Name), upstream.AttrOrigin.String(c.Origin))
		if op.uri != "" {
			span.SetAttributes(upstream.AttrResourceURI.String(op.uri))
		}
	}
	return ctx, span
}

// newOpPolicy builds what the policies see of op by c on t.
func newOpPolicy(g *generation.Gen, c Caller, t upstream.Target, op *operation) *pipeline.Policy {
	in := listInput(c, t.Conn)
	in.Op = op.op
	if op.uri != "" {
		in.Resource = resourceInput(t.Catalog, op.uri)
	}
	if op.prompt != "" {
		in.Prompt = promptInput(t.Catalog, op.prompt)
	}
	if op.args != nil {
		args := make(map[string]any, len(op.args))
		for k, v := range op.args {
			args[k] = v
		}
		in.Args = args
	}
	return pipeline.NewOpPolicy(g, in)
}

// decideOp runs the `call` phase for op (the `list` rules of what it is
// about first): a hidden resource or prompt is answered as one that does
// not exist, an `ask` waits for an answer in the WebShell (denied when
// nobody can answer: a one-shot CLI command), a refusal is a *PolicyError.
func (h *Host) decideOp(ctx context.Context, c Caller, t upstream.Target, op *operation, pol *pipeline.Policy) error {
	pctx, pspan := pipeline.StartStage(ctx, "policy call")
	dec := pol.Decide(pctx, policies.PhaseCall)
	if pspan.IsRecording() {
		pspan.SetAttributes(upstream.AttrEffect.String(dec.Effect), upstream.AttrRule.String(dec.Rule))
	}
	pspan.End()
	if pipeline.Hidden(dec) {
		op.hidden = true
		return op.notFound()
	}
	if dec.Effect == policies.EffectAsk {
		if h.store == nil {
			dec.Effect = policies.EffectDeny
			dec.Message = "needs approval, which only the WebShell can give: " + dec.Message
		} else {
			outcome, err := h.ask(ctx, c.Principal, Approval{Op: op.op, Server: op.server, Tool: op.subject(),
				Arguments: mustJSON(op.args), Origin: c.Origin, Client: c.Client.Name, Rule: dec.Rule, Message: dec.Message, Approvers: dec.Approvers})
			if err != nil {
				return err
			}
			pol.NoteOutcome(outcome)
			if outcome != ApprovalApproved {
				dec.Effect = policies.EffectDeny
				dec.Message = "not approved: " + questions.ApprovalText(outcome, h.approvalTimeout(h.gen()))
			}
		}
	}
	if dec.Effect == policies.EffectDeny {
		return pipeline.Denied(dec)
	}
	return nil
}

// subject is what op is about: the prompt's name, else the resource's URI.
func (op *operation) subject() string {
	if op.prompt != "" {
		return op.prompt
	}
	return op.uri
}

// notFound is the answer for what a list rule hides from the caller: the
// one a server gives for a resource or prompt it does not have.
func (op *operation) notFound() error {
	if op.prompt != "" {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", op.prompt)}
	}
	return &jsonrpc.Error{Code: codeResourceNotFound, Message: "Resource not found", Data: mustJSON(map[string]string{"uri": op.uri})}
}

// codeResourceNotFound is MCP's JSON-RPC error code for a resource that
// does not exist.
const codeResourceNotFound = -32002

// resourceInput is what the policies see of the resource uri: its name and
// type when the server lists it.
func resourceInput(cat *upstream.Catalog, uri string) *policies.Resource {
	out := &policies.Resource{URI: uri}
	for _, r := range cat.Resources {
		if r != nil && r.URI == uri {
			out.Name, out.MIMEType = r.Name, r.MIMEType
			break
		}
	}
	return out
}

// checkArgumentKeys refuses a prompt's arguments with two names equal
// under case folding, unless the prompt lists each of them: the policies
// read args by exact name, and a server that binds them regardless of case
// would act on a value no rule saw (checkArgumentKeys in call.go says more).
// A name given twice never gets here: go-sdk (the gateway) and
// encoding/json (the API) decode the arguments into a map, keeping the
// last, and that map is both what the policies see and what the server
// gets. A completion's arguments are not checked: a completion acts on
// nothing.
func (op *operation) checkArgumentKeys(cat *upstream.Catalog) error {
	if op.op != policies.OpGetPrompt || len(op.args) < 2 {
		return nil
	}
	var clashes []jsonkeys.Clash
	for _, keys := range jsonkeys.Clashes(slices.Sorted(maps.Keys(op.args))) {
		if !promptLists(cat, op.prompt, keys) {
			clashes = append(clashes, jsonkeys.Clash{Keys: keys})
		}
	}
	if len(clashes) > 0 {
		return &upstream.ArgumentsError{Reason: pipeline.ClashReason(clashes)}
	}
	return nil
}

// promptLists reports whether the prompt name lists every one of args
// among its arguments.
func promptLists(cat *upstream.Catalog, name string, args []string) bool {
	for _, p := range cat.Prompts {
		if p == nil || p.Name != name {
			continue
		}
		return !slices.ContainsFunc(args, func(a string) bool {
			return !slices.ContainsFunc(p.Arguments, func(pa *mcp.PromptArgument) bool { return pa != nil && pa.Name == a })
		})
	}
	return false
}

// promptInput is what the policies see of the prompt name.
func promptInput(cat *upstream.Catalog, name string) *policies.Prompt {
	out := &policies.Prompt{Name: name}
	for _, p := range cat.Prompts {
		if p != nil && p.Name == name {
			out.Title = p.Title
			break
		}
	}
	return out
}

// ReadResource reads uri from server for c, through the host cache (what
// the server allows to be cached is cached). A ui:// resource that one of
// the server's tools links as its MCP App is served as the WebShell would
// render it: validated, after the `display` plugins and the `app` phase of
// the policies, or refused with an *AppResourceError. An input_required
// answer is returned as it came (never cached); the retry (in, see
// [CallInput]) goes to the server directly, past the cache. With a
// sessionID (one of c's transcript sessions) the read is an entry of that
// session; "" records only its audit record.
func (h *Host) ReadResource(ctx context.Context, c Caller, sessionID, server, uri string, in *CallInput) (res *mcp.ReadResourceResult, err error) {
	err = h.operate(ctx, c, &operation{op: policies.OpReadRes, server: server, session: sessionID, uri: uri,
		do: func(ctx context.Context, t upstream.Target) (any, error) {
			res, err = h.readResource(ctx, c, t, uri, in)
			return res, err
		}})
	return res, err
}

// readResource is ReadResource's upstream request.
func (h *Host) readResource(ctx context.Context, c Caller, t upstream.Target, uri string, in *CallInput) (*mcp.ReadResourceResult, error) {
	if in.Retry() {
		p := &mcp.ReadResourceParams{URI: uri}
		p.Meta, p.InputResponses, p.RequestState = in.Relay(t.Session, nil)
		return t.Session.ReadResource(ctx, p)
	}
	if t.Conn.Cfg.Apps != config.AppsOff {
		for _, tool := range t.Catalog.Tools {
			if link, ok := apps.ToolLink(tool); ok && link.ResourceURI == uri {
				return h.gatewayApp(ctx, c, t.Conn, t.Session, t.Catalog, tool)
			}
		}
	}
	return upstream.SessionReader{Conn: t.Conn, Session: t.Session}.ReadResource(ctx, uri)
}

// GetPrompt gets a prompt of server for c, with what a gateway client
// relays for input requests (in; see [CallInput]). An error of the server
// is returned as it came, and so is an input_required answer (NeedsInput),
// for the client to answer. A sessionID records it as ReadResource does.
func (h *Host) GetPrompt(ctx context.Context, c Caller, sessionID, server string, params *mcp.GetPromptParams, in *CallInput) (res *mcp.GetPromptResult, err error) {
	err = h.operate(ctx, c, &operation{op: policies.OpGetPrompt, server: server, session: sessionID, prompt: params.Name, args: params.Arguments,
		do: func(ctx context.Context, t upstream.Target) (any, error) {
			p := *params
			p.Meta, p.InputResponses, p.RequestState = in.Relay(t.Session, params.Meta)
			res, err = t.Session.GetPrompt(ctx, &p)
			return res, err
		}})
	return res, err
}

// Complete asks server for completions of a prompt's or a resource
// template's argument for c.
func (h *Host) Complete(ctx context.Context, c Caller, server string, params *mcp.CompleteParams) (res *mcp.CompleteResult, err error) {
	op := &operation{op: policies.OpComplete, server: server, args: map[string]string{}}
	if params.Ref != nil {
		switch params.Ref.Type {
		case "ref/prompt":
			op.prompt = params.Ref.Name
		default:
			op.uri = params.Ref.URI
		}
	}
	if params.Context != nil {
		for k, v := range params.Context.Arguments {
			op.args[k] = v
		}
	}
	op.args[params.Argument.Name] = params.Argument.Value
	op.do = func(ctx context.Context, t upstream.Target) (any, error) {
		res, err = t.Session.Complete(ctx, params)
		return res, err
	}
	err = h.operate(ctx, c, op)
	return res, err
}

// SubscribeResource subscribes c to updates of the resource uri of server: the
// first subscription to a URI is made on the server's session
// (resources/subscribe, or a listen stream on a 2026-07-28 session), later
// ones are counted; every new session of the server subscribes again.
// Updates reach WatchResourceUpdates. The server's error (it supports no
// subscriptions, say) is returned as it came.
func (h *Host) SubscribeResource(ctx context.Context, c Caller, server, uri string) error {
	return h.operate(ctx, c, &operation{op: policies.OpSubscribe, server: server, uri: uri,
		do: func(ctx context.Context, t upstream.Target) (any, error) {
			return nil, t.Conn.Subscribe(ctx, t.Session, subOwner(c), uri)
		}})
}

// UnsubscribeResource ends one of c's subscriptions to uri: only c's own (another
// caller's are not c's to end); the last one of the URI is ended on the
// server's session too. A client that goes away without unsubscribing
// leaves its count behind, so the server's subscription lasts until that
// session ends: the gateway drops updates nobody subscribed to.
func (h *Host) UnsubscribeResource(ctx context.Context, c Caller, server, uri string) error {
	return h.operate(ctx, c, &operation{op: policies.OpUnsubscribe, server: server, uri: uri,
		do: func(ctx context.Context, t upstream.Target) (any, error) {
			return nil, t.Conn.Unsubscribe(ctx, t.Session, subOwner(c), uri)
		}})
}

// subOwner is whom a subscription belongs to.
func subOwner(c Caller) string { return "principal " + c.Name }

// mustJSON encodes v, which cannot fail to encode.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
