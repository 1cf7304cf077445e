package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcphost/mcphost/host/internal/pipeline"
	"github.com/mcphost/mcphost/host/internal/upstream"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/policies"
)

// The record: what the pipeline leaves in the transcript and the audit log.

// record appends entry with its trail and audit records to the transcript
// and publishes it. The entry is recorded even when the caller went away:
// the call happened, and the transcript must say so.
func (h *Host) record(ctx context.Context, principal string, entry *store.Entry, trail *pipeline.Trail, audit []store.Audit) (_ *store.Entry, err error) {
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
	h.publish(Event{Type: eventEntry, Principal: principal, Data: entry})
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

// opRecord is the entry an operation made in a transcript session will
// leave: nil for one that is not recorded.
type opRecord struct {
	entry  *store.Entry
	result any // what the server answered, set by the upstream stage
}

// answered keeps the server's answer for the entry (a no-op for an
// operation that is not recorded).
func (r *opRecord) answered(result any) {
	if r != nil {
		r.result = result
	}
}

// newOpRecord opens the entry of op, a read or a prompt made in one of
// c's sessions on t; nil otherwise.
func newOpRecord(c Caller, t upstream.Target, op *operation) *opRecord {
	if op.session == "" {
		return nil
	}
	era, version := t.Conn.Protocol()
	e := &store.Entry{SessionID: op.session, CallID: "o_" + randomHex(8), Principal: c.Name, Origin: c.Origin,
		Server: op.server, Era: era, ProtocolVersion: version, StartedAt: time.Now().UTC()}
	if op.op == policies.OpGetPrompt {
		e.Kind, e.Tool, e.Arguments = store.KindPrompt, op.prompt, mustJSON(op.args)
		if op.args == nil {
			e.Arguments = json.RawMessage(`{}`)
		}
	} else {
		e.Kind, e.Tool, e.Arguments = store.KindRead, op.uri, mustJSON(map[string]string{"uri": op.uri})
	}
	return &opRecord{entry: e}
}

// recordOp is an operation's record stage: for a recorded one its entry
// (the server's answer, or why there is none: denied, failed, cancelled)
// with its audit records, otherwise the audit records alone. An operation
// hidden by a list rule, or answered with input_required (the retry is
// recorded), leaves its audit record only. It returns err, or the failure
// to record an operation that succeeded.
func (h *Host) recordOp(ctx context.Context, c Caller, op *operation, pol *pipeline.Policy, rec *opRecord, err error) error {
	audit := pol.OpAudit(op.subject(), err)
	if rec == nil || op.hidden || err == nil && needsInput(rec.result) {
		h.appendAudit(ctx, c.Name, op.session, audit)
		return err
	}
	e := rec.entry
	e.DurationMs = float64(time.Since(e.StartedAt).Microseconds()) / 1000
	var perr *PolicyError
	switch {
	case err == nil:
		e.Status = store.StatusOK
		raw, jerr := json.Marshal(rec.result)
		if jerr != nil {
			e.Status, e.Error = store.StatusError, fmt.Sprintf("encoding the result: %v", jerr)
		} else {
			e.Result = raw
		}
	case errors.As(err, &perr):
		e.Status, e.Error = store.StatusDenied, perr.Message
	case ctx.Err() != nil:
		e.Status, e.Error = store.StatusCancelled, err.Error()
	default:
		e.Status, e.Error = store.StatusError, err.Error()
	}
	recorded, rerr := h.record(ctx, c.Name, e, pol.Trail(), audit)
	if rerr != nil && err == nil {
		return rerr
	}
	if perr != nil {
		perr.Entry = recorded
	}
	return err
}

// needsInput reports whether a server answered with input_required.
func needsInput(result any) bool {
	n, ok := result.(interface{ NeedsInput() bool })
	return ok && n.NeedsInput()
}
