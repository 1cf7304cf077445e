package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host/internal/pipeline"
	"github.com/mcphost/mcphost/host/internal/questions"
	"github.com/mcphost/mcphost/host/internal/upstream"
	"github.com/mcphost/mcphost/host/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Entry statuses (the store's).
const (
	StatusOK        = store.StatusOK
	statusToolError = store.StatusToolError
	StatusError     = store.StatusError
	StatusCancelled = store.StatusCancelled
	StatusDenied    = store.StatusDenied
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

// ErrCallIDInUse is returned when a running call already has the callId.
var ErrCallIDInUse = errors.New("a call with this callId is already running")

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

// runningCall is a call that can be cancelled through CancelCall.
type runningCall struct {
	principal string
	sessionID string
	cancel    context.CancelFunc
}

// calls tracks the running calls by callId.
type calls struct {
	mu      sync.Mutex
	running map[string]*runningCall
	wg      sync.WaitGroup
	idleCh  chan struct{} // closed when running becomes empty (idle)
}

// CreateSession starts a new transcript for principal.
func (h *Host) CreateSession(ctx context.Context, p Principal, title string) (store.Session, error) {
	if h.store == nil {
		return store.Session{}, ErrNoStore
	}
	return h.store.CreateSession(ctx, p.Name, title)
}

// Sessions lists principal's sessions, most recently updated first.
func (h *Host) Sessions(ctx context.Context, p Principal) ([]store.Session, error) {
	if h.store == nil {
		return nil, ErrNoStore
	}
	return h.store.Sessions(ctx, p.Name)
}

// Entries returns a page of a session's transcript (see store.Entries).
func (h *Host) Entries(ctx context.Context, p Principal, sessionID string, after int64, limit int) ([]store.Entry, int64, error) {
	if h.store == nil {
		return nil, 0, ErrNoStore
	}
	if _, err := h.store.Session(ctx, p.Name, sessionID); err != nil {
		return nil, 0, mapStoreErr(err)
	}
	return h.store.Entries(ctx, p.Name, sessionID, after, limit)
}

// checkSession fails with ErrNotFound unless the session exists and belongs
// to principal. Ownership never changes, so a confirmed pair is remembered
// and later calls in the session skip the database read.
func (h *Host) checkSession(ctx context.Context, principal, sessionID string) error {
	key := principal + "\x00" + sessionID
	if _, ok := h.pipe.owned.Load(key); ok {
		return nil
	}
	if _, err := h.store.Session(ctx, principal, sessionID); err != nil {
		return mapStoreErr(err)
	}
	h.pipe.owned.Store(key, struct{}{})
	return nil
}

func mapStoreErr(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return ErrNotFound
	}
	return err
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

// record appends entry with its trail and audit records to the transcript
// and publishes it. The entry is recorded even when the caller went away:
// the call happened, and the transcript must say so.
func (h *Host) record(ctx context.Context, principal string, entry *store.Entry, trail *Trail, audit []store.Audit) (_ *store.Entry, err error) {
	ctx, span := pipeline.StartStage(ctx, "store record")
	defer func() { upstream.EndSpan(span, err) }()
	entry.Trail = trail.Raw()
	entry.Audit = audit
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer scancel()
	if err := h.store.AppendEntry(sctx, entry); err != nil {
		return nil, fmt.Errorf("host: recording the transcript entry: %w", err)
	}
	entry.Audit = nil
	h.publish(Event{Type: EventEntry, Principal: principal, Data: entry})
	return entry, nil
}

// appendAudit records decisions that belong to no entry; a failure is
// logged, since the caller's answer does not depend on it.
func (h *Host) appendAudit(ctx context.Context, principal, sessionID string, audit []store.Audit) {
	if h.store == nil || len(audit) == 0 {
		return
	}
	for i := range audit {
		audit[i].Principal, audit[i].SessionID = principal, sessionID
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := h.store.AppendAudit(sctx, audit...); err != nil {
		h.opts.Logger.Warn("recording policy decisions", "principal", principal, "err", err)
	}
}

// CancelCall cancels a running call of principal's session. It returns
// ErrNotFound when no such call is running (or it belongs to someone else).
func (h *Host) CancelCall(p Principal, sessionID, callID string) error {
	h.pipe.calls.mu.Lock()
	defer h.pipe.calls.mu.Unlock()
	rc, ok := h.pipe.calls.running[runningKey(p.Name, callID)]
	if !ok || rc.principal != p.Name || rc.sessionID != sessionID {
		return ErrNotFound
	}
	rc.cancel()
	return nil
}

// runningKey scopes a callId to its principal: one principal can neither
// see nor block another's call ids.
func runningKey(principal, callID string) string { return principal + "\x00" + callID }

// validCallID accepts ids that fit in a URL path segment unescaped.
func validCallID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
		default:
			return false
		}
	}
	return true
}

// RequestError is a request the host refuses for its form, not its
// arguments (a malformed callId).
type RequestError struct{ Reason string }

func (e *RequestError) Error() string { return "bad request: " + e.Reason }

func (cs *calls) add(id string, rc *runningCall) error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.running == nil {
		cs.running = map[string]*runningCall{}
	}
	if _, dup := cs.running[id]; dup {
		return ErrCallIDInUse
	}
	cs.running[id] = rc
	cs.wg.Add(1)
	return nil
}

func (cs *calls) remove(id string) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	delete(cs.running, id)
	if len(cs.running) == 0 && cs.idleCh != nil {
		close(cs.idleCh)
		cs.idleCh = nil
	}
	cs.wg.Done()
}

// cancelAll cancels every running call (at shutdown, after the grace period).
func (cs *calls) cancelAll() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, rc := range cs.running {
		rc.cancel()
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func unknownTool(server, tool string, cat *upstream.Catalog) error {
	known := make([]string, 0, len(cat.Tools))
	for _, t := range cat.Tools {
		known = append(known, t.Name)
	}
	return &UnknownToolError{Server: server, Tool: tool, Known: upstream.SortedCopy(known)}
}
