package host

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcphost/mcphost/host/internal/generation"
	"github.com/mcphost/mcphost/host/internal/pipeline"
	"github.com/mcphost/mcphost/host/internal/questions"
	"github.com/mcphost/mcphost/host/internal/upstream"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/resultjson"
	"github.com/mcphost/mcphost/policies"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callRun is one tool call on its way through the stages of the pipeline
// (pipeline.go lists them in order): what each stage found out, for the
// stages after it.
type callRun struct {
	h   *Host
	req SessionCall
	d   door

	g       *generation.Gen
	t       upstream.Target
	tool    *mcp.Tool
	args    json.RawMessage
	decoded any // the arguments as the schema check decoded them, or nil

	origin string
	callID string
	ctx    context.Context // the call's own: cancelled by CancelCall
	entry  *store.Entry
	trail  *pipeline.Trail
	pol    *pipeline.Policy
	out    *callOutcome

	res        *mcp.CallToolResult
	needsInput bool // the server asks for input: no result yet

	// What the stages set up, undone in reverse when the call ends
	// (cleanup); fields, not a list of closures: a call allocates none.
	release, admitted, appDone, cancel, clientRelease func()
	running                                           string       // the key in the running calls, once added
	rc                                                *runningCall // the call among the running calls
}

// cleanup undoes what the stages set up, last first.
func (r *callRun) cleanup() {
	for _, f := range [...]func(){r.clientRelease} {
		if f != nil {
			f()
		}
	}
	if r.running != "" {
		r.h.pipe.calls.remove(r.running)
	}
	for _, f := range [...]func(){r.cancel, r.appDone, r.admitted, r.release} {
		if f != nil {
			f()
		}
	}
}

// admit refuses a call while draining, in a session that is not the
// caller's, or past the caller's rate limit; it holds the generation the
// call runs in.
func (r *callRun) admit(ctx context.Context) error {
	h := r.h
	if err := h.refuseIfDraining(); err != nil {
		return err
	}
	if r.d.record {
		if err := h.checkSession(ctx, r.req.Principal.Name, r.req.SessionID); err != nil {
			return err
		}
	}
	r.g = h.acquire()
	r.release = r.g.Release
	done, err := h.pipe.limiter.Admit(r.req.Principal.Name, r.g.RateLimitOf(r.req.Principal.Name))
	if err != nil {
		return err
	}
	r.admitted = done
	return nil
}

// resolve finds the caller's session of the server, the tool, and checks
// the arguments: an object whose keys every parser reads alike, matching
// the tool's input schema.
func (r *callRun) resolve(ctx context.Context) error {
	t, err := r.g.Target(ctx, r.req.Principal.Name, r.req.Server)
	if err != nil {
		return err
	}
	r.t = t
	tool, ok := t.Catalog.ToolIndex[r.req.Tool]
	if !ok {
		return unknownTool(r.req.Server, r.req.Tool, t.Catalog)
	}
	r.tool = tool
	if r.args, err = pipeline.ObjectArguments(r.req.Arguments); err != nil {
		return err
	}
	if err := pipeline.CheckArgumentKeys(r.args, tool); err != nil {
		return err
	}
	r.decoded, err = t.Catalog.Validate(tool, r.args)
	return err
}

// start settles the call's origin (an App's call passes the App gate),
// its id and its place among the running calls, and opens its entry.
func (r *callRun) start(ctx context.Context) error {
	req := r.req
	origin, appDone, err := r.h.callOrigin(ctx, req)
	if err != nil {
		return err
	}
	r.appDone = appDone
	r.origin = origin
	r.callID = req.CallID
	if r.callID == "" {
		r.callID = "c_" + randomHex(8)
	} else if !validCallID(r.callID) {
		return &RequestError{Reason: "callId must be 1 to 128 letters, digits, '.', '_' or '-'"}
	}
	cctx, cancel := context.WithCancel(ctx)
	r.ctx = cctx
	r.cancel = cancel
	key := runningKey(req.Principal.Name, r.callID)
	r.rc = &runningCall{principal: req.Principal.Name, sessionID: req.SessionID, cancel: cancel}
	if err := r.h.pipe.calls.add(key, r.rc); err != nil {
		return err
	}
	r.running = key

	era, version := r.t.Conn.Protocol()
	r.entry = &store.Entry{
		SessionID: req.SessionID, CallID: r.callID, Principal: req.Principal.Name, Origin: origin,
		Server: req.Server, Tool: req.Tool, AppEntryID: req.AppEntryID, Arguments: r.args,
		Era: era, ProtocolVersion: version, StartedAt: time.Now().UTC(),
	}
	r.out = &callOutcome{entry: r.entry}
	r.trail = &pipeline.Trail{}
	r.pol = pipeline.NewPolicy(r.g, req.Principal, r.t.Conn, r.tool, origin, r.args, r.decoded, r.trail)
	r.pol.CallID = r.callID
	if r.pol.In != nil {
		r.pol.In.Client = policies.Client(req.Client)
	}
	return nil
}

// decide runs the `call` phase (list rules first: a hidden tool is
// answered as one that does not exist, and only the audit log knows); an
// `ask` goes to the door. A refusal is a *PolicyError for the record; an
// error stops the call unrecorded.
func (r *callRun) decide(ctx context.Context) (*PolicyError, error) {
	h, req := r.h, r.req
	pctx, pspan := pipeline.StartStage(r.ctx, "policy call")
	dec := r.pol.Decide(pctx, policies.PhaseCall)
	if pspan.IsRecording() {
		pspan.SetAttributes(upstream.AttrEffect.String(string(dec.Effect)), upstream.AttrRule.String(dec.Rule))
	}
	pspan.End()
	if pipeline.Hidden(dec) {
		h.appendAudit(ctx, req.Principal.Name, req.SessionID, r.pol.Audit)
		return nil, unknownTool(req.Server, req.Tool, r.t.Catalog)
	}
	if dec.Effect == policies.EffectAsk {
		if r.d.ask == nil {
			dec.Effect = policies.EffectDeny
			dec.Message = "needs approval, which only the WebShell can give: " + dec.Message
		} else {
			outcome, err := r.d.ask(r.ctx, req.Principal, Approval{
				SessionID: req.SessionID, CallID: r.callID, Server: req.Server, Tool: req.Tool, Arguments: r.args,
				Origin: r.origin, Client: req.Client.Name, Rule: dec.Rule, Message: dec.Message, Approvers: dec.Approvers,
			})
			if err != nil {
				h.appendAudit(ctx, req.Principal.Name, req.SessionID, r.pol.Audit) // the ask decision, though nobody was asked
				return nil, err
			}
			r.trail.Approval = outcome
			if outcome != ApprovalApproved {
				dec.Effect = policies.EffectDeny
				dec.Message = "not approved: " + questions.ApprovalText(outcome, h.approvalTimeout(r.g))
			}
		}
	}
	if dec.Effect == policies.EffectDeny {
		perr := pipeline.Denied(dec)
		r.entry.Status = store.StatusDenied
		r.entry.Error = perr.Message
		return perr, nil
	}
	return nil, nil
}

// progress is where the call's progress goes: the door's listener and,
// for a recorded call, the caller's event streams.
func (r *callRun) progress() func(Progress) {
	h, req, d, callID := r.h, r.req, r.d, r.callID
	if !d.record {
		return d.onProgress
	}
	h.publishShared(Event{Type: eventCallStarted, Principal: req.Principal.Name,
		Data: CallStarted{CallID: callID, SessionID: req.SessionID, Server: req.Server, Tool: req.Tool}}, pokeCallStarted, callID)
	rc := r.rc
	return func(p Progress) {
		rc.progress.Store(&p)
		h.publishShared(Event{Type: eventProgress, Principal: req.Principal.Name,
			Data: callProgress{CallID: callID, SessionID: req.SessionID, Progress: p}}, pokeProgress, callID)
		if d.onProgress != nil {
			d.onProgress(p)
		}
	}
}

// upstream makes the call on the server. The call is in flight on its
// connection while it runs, so that a legacy server's elicitation/create
// finds it (upstream/inflight.go); a gateway client's call to a per-client server
// goes on the client's own upstream session (upstream/perclient.go); an
// input_required answer is relayed as it is (past the result and App
// stages: the answer to the last round goes through them), or answered
// here, round by round.
func (r *callRun) upstream() {
	req, c, cctx := r.req, r.t.Conn, r.ctx
	progress := r.progress()
	cctx = withQuestions(cctx, r.d.elicit)
	inflight := &upstream.Call{Principal: req.Principal.Name, SessionID: req.SessionID, CallID: r.callID,
		Server: req.Server, Tool: req.Tool, Ctx: cctx, Log: req.OnLog}
	removeInflight := c.Track(inflight)
	// The requests made for the call carry it: a relayed tools/call names
	// it, and what the server sends on its event stream is its own.
	cctx = context.WithValue(cctx, upstream.RelayCallKey{}, inflight)
	callCS := r.t.Session
	var err error
	if c.PerClient(req.Relay, r.t.Session) {
		pcs, release, perr := c.ClientSession(cctx, req.Relay, inflight)
		switch {
		case perr != nil:
			err = perr
		case pcs != nil:
			callCS = pcs
			r.clientRelease = release
		}
	}
	var res *mcp.CallToolResult
	if err == nil {
		res, err = c.CallTool(cctx, callCS, req.Tool, r.args, req.Input, progress)
	}
	c.CallFailed(err) // an authorization failure: the session waits for a sign-in
	if err == nil && res.NeedsInput() && !r.d.relayInput {
		res, err = r.h.answerRounds(cctx, c, callCS, inflight, req.Tool, r.args, res, progress)
	}
	removeInflight()
	r.trail.Input = questionsOf(inflight).asks.list()
	r.settle(res, err)
}

// settle records what became of the upstream call in the entry.
func (r *callRun) settle(res *mcp.CallToolResult, err error) {
	e := r.entry
	took := time.Since(e.StartedAt)
	r.res = res
	r.needsInput = err == nil && res.NeedsInput()
	r.out.upstream = err
	switch {
	case err != nil && r.ctx.Err() != nil:
		e.Status, e.Error = store.StatusCancelled, err.Error()
	case err != nil:
		e.Status, e.Error = store.StatusError, err.Error()
		e.ErrorCode, e.ErrorData = upstream.RPCError(err)
	case res.IsError:
		e.Status = statusToolError
	default:
		e.Status = store.StatusOK
	}
	r.h.pipe.metrics.observeCall(r.req.Server, e.Status, took)
}

// result runs the result plugins, then the `result` phase, on the
// result, and puts what is left of it in the outcome and the entry. It
// returns the refusal of a result rule.
func (r *callRun) result() *PolicyError {
	var perr *PolicyError
	if r.res != nil && !r.needsInput {
		shown, status, serr := r.pol.ResultStage(r.ctx, r.req.Principal, r.t.Conn, r.t.Catalog, r.tool, r.args, r.res)
		if serr != nil {
			r.out.stage = serr
			r.entry.Status = status
			r.entry.Error = serr.Error()
			if pe, ok := serr.(*PolicyError); ok {
				perr = pe
				r.entry.Error = pe.Message
			}
		}
		r.res = shown
	}
	r.out.result = r.res
	if r.res != nil {
		raw, err := resultjson.Marshal(r.res)
		if err != nil {
			r.entry.Status = store.StatusError
			r.entry.Error = fmt.Sprintf("encoding the result: %v", err)
		} else {
			r.entry.Result = raw
		}
	}
	return perr
}

// app resolves the App the tool links, after a successful call only, with
// its own deadline, from the result the plugins left; it never changes
// the entry's result. An App's own calls get none: their result goes to
// the App only. Then the display plugins and the `app` phase.
func (r *callRun) app() {
	if r.entry.Status != store.StatusOK || r.origin == OriginApp || r.needsInput {
		return
	}
	// A singleton's relay reads the App for the call's principal, as the
	// call itself went.
	actx := upstream.RelayAs(r.ctx, r.req.Principal.Name)
	if disp := r.h.resolveApp(actx, r.t.Conn, r.t.Session, r.t.Catalog, r.tool, r.args, r.res); disp != nil {
		r.pol.DisplayStage(r.ctx, r.req.Principal, r.t.Conn, r.tool, r.args, r.res, disp)
		r.entry.Display = encodeDisplay(r.t.Conn, r.tool, disp)
	}
}

// finish records the entry (a recording door) or keeps its trail in it,
// and returns the outcome with perr, a refusal by a policy.
func (r *callRun) finish(ctx context.Context, perr *PolicyError) (*callOutcome, error) {
	e := r.entry
	e.DurationMs = float64(time.Since(e.StartedAt).Microseconds()) / 1000
	if r.d.record {
		recorded, err := r.h.record(ctx, r.req.Principal.Name, e, r.trail, r.pol.Audit)
		if err != nil {
			return nil, err
		}
		r.out.entry = recorded
	} else {
		e.Trail = r.trail.Raw()
	}
	if perr != nil {
		perr.Entry = r.out.entry
		return r.out, perr
	}
	return r.out, nil
}

func unknownTool(server, tool string, cat *upstream.Catalog) error {
	known := make([]string, 0, len(cat.Tools))
	for _, t := range cat.Tools {
		known = append(known, t.Name)
	}
	return &UnknownToolError{Server: server, Tool: tool, Known: upstream.SortedCopy(known)}
}
