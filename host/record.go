package host

import (
	"context"
	"fmt"
	"time"

	"github.com/mcphost/mcphost/host/internal/pipeline"
	"github.com/mcphost/mcphost/host/internal/upstream"
	"github.com/mcphost/mcphost/host/store"
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
