package host

// Elicitation: a server that asks the user something while a call runs,
// either on a legacy session (an elicitation/create request on the shared
// session, attributed to a call by the connection's in-flight calls,
// inflight.go) or on a 2026-07-28 session (an input_required round the
// pipeline answers itself, rounds.go). Both end in answerElicitation, which
// checks the request, asks through the call's door (the WebShell and the
// API: the broker below; the CLI: a terminal prompt or a decline) and
// records what was asked in the call's trail.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcphost/mcphost/host/internal/pipeline"
	"github.com/mcphost/mcphost/host/internal/questions"
	"github.com/mcphost/mcphost/host/internal/upstream"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EventElicitation is published when a call waits for its principal to
// answer a server's question (Data: Elicitation), and
// EventElicitationDone when it no longer does (Data: ElicitationDone).
const (
	eventElicitation     = "elicitation"
	eventElicitationDone = "elicitation_done"
)

// errTooManyElicitations is returned when a principal already has
// maxPendingElicitations questions open.
var errTooManyElicitations = errors.New("too many questions are waiting for an answer")

// elicitFunc asks the principal of a call: how a door answers a server's
// question. A nil one declines.
type elicitFunc func(ctx context.Context, principal string, e Elicitation, schema *jsonschema.Resolved) (ElicitationAnswer, error)

// callAsks is the state a running call keeps about what its server asked:
// the count (for MaxElicitationsPerCall) and the trail records.
type callAsks struct {
	mu    sync.Mutex
	count int
	asks  []pipeline.InputAsk
}

func (a *callAsks) add(r pipeline.InputAsk) {
	a.mu.Lock()
	a.asks = append(a.asks, r)
	a.mu.Unlock()
}

func (a *callAsks) list() []pipeline.InputAsk {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.asks)
}

// callQuestions is what a running call keeps about what its server asks:
// how its door answers (nil: nobody can, it declines) and the trail's
// records. It travels in the call's context (upstream.Call.Ctx), which
// the host makes: the connection only carries it.
type callQuestions struct {
	elicit elicitFunc
	asks   callAsks
}

type callQuestionsKey struct{}

// withQuestions returns ctx carrying a call's questions.
func withQuestions(ctx context.Context, elicit elicitFunc) context.Context {
	return context.WithValue(ctx, callQuestionsKey{}, &callQuestions{elicit: elicit})
}

// questionsOf returns the questions of call; a call made without them
// gets ones nobody answers and nobody records.
func questionsOf(call *upstream.Call) *callQuestions {
	if call.Ctx != nil {
		if q, ok := call.Ctx.Value(callQuestionsKey{}).(*callQuestions); ok {
			return q
		}
	}
	return &callQuestions{}
}

// answerElicitation checks a server's elicitation request, asks the
// call's principal through the door, and records what happened. A request
// mcphost refuses is an *upstream.ElicitRefusal; the result is otherwise the
// answer to send (a decline when nobody can answer).
func (h *Host) answerElicitation(ctx context.Context, call *upstream.Call, round int, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if call.PassBack != nil && p != nil {
		res, err := call.PassBack(ctx, p)
		if err != nil {
			return upstream.Declined("the replica that made the call did not answer: " + err.Error()), nil
		}
		return res, nil
	}
	rec := pipeline.InputAsk{Round: round, Kind: "elicitation"}
	if p != nil {
		rec.Mode, rec.Message = p.Mode, questions.Truncate(p.Message, 512)
	}
	if res := h.overElicitationLimit(call, rec); res != nil {
		return res, nil
	}
	e, schema, err := questions.CheckElicitation(p)
	var ue *questions.URLError
	switch {
	case errors.As(err, &ue):
		// A URL mcphost will not show (a javascript: one, say) is
		// declined, with the reason, in both eras.
		reason := "mcphost declined the url: " + err.Error()
		rec.Mode, rec.Outcome, rec.Reason = ElicitURL, ElicitDecline, reason
		questionsOf(call).asks.add(rec)
		h.opts.Logger.Warn("elicitation declined: its url", "server", call.Server, "tool", call.Tool, "principal", call.Principal, "err", err)
		return upstream.Declined(reason), nil
	case err != nil:
		rec.Outcome, rec.Reason = questions.ElicitRefused, err.Error()
		questionsOf(call).asks.add(rec)
		return nil, &upstream.ElicitRefusal{Reason: err.Error()}
	}
	rec.Mode, rec.URL = e.Mode, questions.TrailURL(e.URL)
	rec.Fields = questions.SchemaFields(e.RequestedSchema)
	e.SessionID, e.CallID, e.Server, e.Tool = call.SessionID, call.CallID, call.Server, call.Tool
	if questionsOf(call).elicit == nil {
		reason := "nobody can answer here (this door of mcphost has no user to ask)"
		rec.Outcome, rec.Reason = ElicitDecline, reason
		questionsOf(call).asks.add(rec)
		return upstream.Declined(reason), nil
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(call.Ctx, cancel)
	defer stop()
	ans, err := questionsOf(call).elicit(actx, call.Principal, e, schema)
	if err != nil {
		rec.Outcome, rec.Reason = ElicitDecline, err.Error()
		questionsOf(call).asks.add(rec)
		return upstream.Declined(err.Error()), nil
	}
	return h.elicitResult(call, rec, e, schema, ans), nil
}

// overElicitationLimit counts one more question of call. Past
// MaxElicitationsPerCall it records rec as declined and returns the
// decline to send; otherwise it returns nil.
func (h *Host) overElicitationLimit(call *upstream.Call, rec pipeline.InputAsk) *mcp.ElicitResult {
	questionsOf(call).asks.mu.Lock()
	questionsOf(call).asks.count++
	n := questionsOf(call).asks.count
	questionsOf(call).asks.mu.Unlock()
	if n <= questions.MaxElicitationsPerCall {
		return nil
	}
	reason := fmt.Sprintf("the server asked more than %d questions in one call", questions.MaxElicitationsPerCall)
	rec.Outcome, rec.Reason = ElicitDecline, reason
	questionsOf(call).asks.add(rec)
	h.opts.Logger.Warn("elicitation declined: too many in one call", "server", call.Server, "tool", call.Tool, "principal", call.Principal, "count", n)
	return upstream.Declined(reason)
}

// elicitResult turns the principal's answer to e into the result the
// server gets, and records rec with its outcome: an accepted form whose
// content the schema refuses is declined, an expired or cancelled
// question is a cancel, an unknown action a decline, and accepted content
// gets the schema's defaults (the trail keeps it with secrets redacted).
func (h *Host) elicitResult(call *upstream.Call, rec pipeline.InputAsk, e Elicitation, schema *jsonschema.Resolved, ans ElicitationAnswer) *mcp.ElicitResult {
	if ans.Action == ElicitAccept && e.Mode == questions.ElicitForm {
		if verr := questions.CheckAnswer(ans, schema); verr != nil {
			// A programmatic door (the CLI, an embedder) answered
			// something the schema refuses: the server never gets it.
			rec.Outcome, rec.Reason = ElicitDecline, verr.Error()
			questionsOf(call).asks.add(rec)
			return upstream.Declined(verr.Error())
		}
	}
	switch ans.Action {
	case ElicitAccept, ElicitDecline, ElicitCancel:
		rec.Outcome = ans.Action
	case questions.ElicitExpired, questions.ElicitCancelled:
		rec.Outcome = ans.Action
		ans = ElicitationAnswer{Action: ElicitCancel}
	default:
		rec.Outcome, rec.Reason = ElicitDecline, fmt.Sprintf("unknown action %q", ans.Action)
		ans = ElicitationAnswer{Action: ElicitDecline}
	}
	res := &mcp.ElicitResult{Action: ans.Action}
	if ans.Action == ElicitAccept && e.Mode == questions.ElicitForm {
		res.Content = maps.Clone(ans.Content)
		if res.Content == nil {
			res.Content = map[string]any{}
		}
		// A field the user left out gets the schema's default (SEP-1034).
		if err := schema.ApplyDefaults(&res.Content); err != nil {
			h.opts.Logger.Warn("applying the elicitation schema's defaults", "server", call.Server, "err", err)
		}
		rec.Content = questions.RedactSecrets(res.Content, e.RequestedSchema)
	}
	questionsOf(call).asks.add(rec)
	return res
}
