package host

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mcphost/mcphost/host/internal/questions"
	"github.com/mcphost/mcphost/host/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Entry statuses (the store's).
const (
	statusToolError = store.StatusToolError
)

// ErrNoStore is returned by session and transcript methods of a host built
// without a store (one-shot CLI commands).
var ErrNoStore = errors.New("host: no transcript store")

// ErrNotFound is returned for a session that does not exist or belongs to
// another principal, and for a call that is not running. The two cases are
// never told apart.
var ErrNotFound = questions.ErrNotFound

// ErrDiskFull is in the error of a call whose entry could not be recorded
// because the data directory is full (the call itself may have run).
var ErrDiskFull = store.ErrDiskFull

// SessionCall is one tool call made in a session by a principal: the input
// of the call pipeline (architecture.md, "The call pipeline").
type SessionCall struct {
	Principal Principal
	SessionID string
	Server    string
	Tool      string
	Arguments json.RawMessage
	// CallID identifies the running call for cancellation and progress
	// events; empty means the host picks one.
	CallID string
	// Origin is OriginUser, OriginAPI (the default) or OriginApp.
	Origin string
	// AppEntryID names the entry whose MCP App makes the call; required
	// with OriginApp and refused otherwise (apprequests.go).
	AppEntryID string
	// Client is the MCP client of a gateway call (OriginGateway).
	Client ClientInfo
	// Input is what a gateway client relays for a server that asks for
	// input (input_required, SEP-2322); nil for every other door.
	Input *CallInput
	// Relay is the gateway client on a 2025-11-25 session, which can be
	// asked what a server asks during its calls: with a server block's
	// session_mode = "per_client" the call goes on an upstream session of
	// the client's own (upstream/perclient.go). Nil for every other door.
	Relay *ClientRelay
	// OnLog hears the server's log messages that belong to this call
	// (serverlog.go says which do); nil: only the log and the server's
	// card keep them. It must not block.
	OnLog func(*mcp.LoggingMessageParams)
}

// Call runs the call pipeline for one tool call in a session (the door of
// the WebShell and the API): an `ask` waits for the user's answer in the
// WebShell, and every call that reaches the server is recorded in the
// session's transcript and published.
//
// Errors before the upstream call (ErrNotFound, UnknownServerError,
// UnknownToolError, NotReadyError, upstream.ArgumentsError, ErrCallIDInUse,
// RateLimitError) record nothing. Once the call has been made, every
// outcome — success, tool error, upstream failure, cancellation — is an
// entry, and the error is only for failing to store it. A refusal by a
// policy is a *PolicyError that carries the recorded entry.
func (h *Host) Call(ctx context.Context, req SessionCall) (*store.Entry, error) {
	if h.store == nil {
		return nil, ErrNoStore
	}
	out, err := h.pipeline(ctx, req, door{record: true, ask: h.ask, elicit: h.elicitBroker})
	if out == nil {
		return nil, err
	}
	return out.entry, err
}

// door is what tells the doors of the pipeline apart (architecture.md,
// "One pipeline, many doors"): whether the call is recorded in a session
// of the store, how an `ask` rule is answered, and who else hears of its
// progress. Everything else is the same stage code for every door.
type door struct {
	// record: the call belongs to req.SessionID, is recorded in the store
	// and published to subscribers.
	record bool
	// ask answers an `ask` rule with an Approval outcome; nil means nobody
	// can answer, and the call is denied.
	ask func(ctx context.Context, p Principal, a Approval) (string, error)
	// onProgress, when set, also receives the call's progress.
	onProgress func(Progress)
	// relayInput: a server's input_required answer is the outcome's result,
	// for the caller to answer and retry (the gateway's clients); without
	// it the pipeline answers the rounds itself (rounds.go), asking
	// through elicit.
	relayInput bool
	// elicit answers a server's elicitation (a legacy session's
	// elicitation/create, or an input_required round when the door does
	// not relay them): the WebShell and the API ask through the broker,
	// the CLI at its terminal; nil declines (elicit.go).
	elicit elicitFunc
}

// callOutcome is what the pipeline made of a call that reached its policy
// stage.
type callOutcome struct {
	entry *store.Entry // recorded when the door records
	// result is the result as the plugins and policies left it: nil when
	// the call failed or a stage withheld it.
	result *mcp.CallToolResult
	// upstream is the failure of the call itself (not a tool error, which
	// is a result with IsError): the server's call_timeout, cancellation,
	// the session ending.
	upstream error
	// stage is the failure of a stage after the call: a plugin that failed
	// or a result policy that refused (then a *PolicyError).
	stage error
}

// pipeline runs the stages of one tool call, top to bottom
// (architecture.md, "The call pipeline"): the caller's limits, the tool and
// its arguments (checked against the input schema), the origin and, for an
// App's call, the App gate; the `call` phase of the policies (an `ask`
// answered through the door); the upstream call with progress and
// cancellation; the result plugins and the `result` phase; the App and its
// display plugins and `app` phase; the record. It returns an error, and no
// outcome, for what stops a call before its policies run; a refusal by a
// `call` or `result` rule is a *PolicyError with the outcome.
func (h *Host) pipeline(ctx context.Context, req SessionCall, d door) (out *callOutcome, err error) {
	ctx, span := startCallSpan(ctx, &req)
	defer func() { endCallSpan(span, out, err) }()
	r := &callRun{h: h, req: req, d: d}
	defer r.cleanup()
	if err := r.admit(ctx); err != nil { // drain, session owner, rate limit
		return nil, err
	}
	if err := r.resolve(ctx); err != nil { // the caller's session, the tool, its arguments
		return nil, err
	}
	if err := r.start(ctx); err != nil { // origin and App gate, call id, running calls
		return nil, err
	}
	perr, err := r.decide(ctx) // policy, phase call; an ask through the door
	if err != nil {
		return nil, err
	}
	if perr == nil {
		r.upstream()      // the call: progress, per-client session, input rounds
		perr = r.result() // plugins, stage result; policy, phase result
		r.app()           // the App: plugins, stage display; policy, phase app
	}
	return r.finish(ctx, perr) // the record
}

// RequestError is a request the host refuses for its form, not its
// arguments (a malformed callId).
type RequestError struct{ Reason string }

func (e *RequestError) Error() string { return "bad request: " + e.Reason }
