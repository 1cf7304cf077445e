package store

import (
	"context"
	"fmt"
	"time"
)

// Audit is one policy decision in the audit log.
type Audit struct {
	ID        int64     `json:"id"`
	At        time.Time `json:"at"`
	Principal string    `json:"principal"`
	SessionID string    `json:"sessionId,omitempty"`
	EntryID   string    `json:"entryId,omitempty"`
	CallID    string    `json:"callId,omitempty"`
	Origin    string    `json:"origin"`
	Server    string    `json:"server"`
	// Op is the operation (resources/read, prompts/get, …); empty for a
	// tool call. For an operation on a resource Tool is its URI, for one
	// on a prompt the prompt's name.
	Op         string  `json:"op,omitempty"`
	Tool       string  `json:"tool"`
	Phase      string  `json:"phase"`
	Rule       string  `json:"rule"` // "" when the default decided
	Effect     string  `json:"effect"`
	Reason     string  `json:"reason"`
	Error      bool    `json:"error"`
	DurationUs float64 `json:"durationUs"`
}

// maxAuditReason bounds the stored reason (a CEL error can quote input).
const maxAuditReason = 1024

// auditValues are a's time (now when it has none) in Unix nanoseconds and
// its reason, cut to maxAuditReason bytes.
func (s *Store) auditValues(a Audit) (at int64, reason string) {
	t := a.At
	if t.IsZero() {
		t = s.now()
	}
	reason = a.Reason
	if len(reason) > maxAuditReason {
		reason = reason[:maxAuditReason]
	}
	return t.UnixNano(), reason
}

// insertAuditSQL adds one audit record (both backends; rebound on
// PostgreSQL); its arguments are auditArgs.
const insertAuditSQL = `INSERT INTO audit (at, principal, session_id, entry_id, call_id, origin, server, op, tool, phase, rule, effect, reason, error, duration_us)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// auditArgs are the arguments of insertAuditSQL for a, with its time
// and reason from auditValues.
func auditArgs(a Audit, at int64, reason string) []any {
	return []any{at, a.Principal, a.SessionID, a.EntryID, a.CallID, a.Origin, a.Server, a.Op, a.Tool,
		a.Phase, a.Rule, a.Effect, reason, a.Error, a.DurationUs}
}

func (s *Store) insertAudit(ctx context.Context, tx sqlTx, a Audit) error {
	at, reason := s.auditValues(a)
	_, err := tx.ExecContext(ctx, insertAuditSQL, auditArgs(a, at, reason)...)
	return err
}

// AppendAudit adds decisions that belong to no entry (a call refused
// before it was recorded) to the audit log, in one transaction.
func (s *Store) AppendAudit(ctx context.Context, records ...Audit) error {
	if len(records) == 0 {
		return nil
	}
	if err := s.settle(ctx); err != nil { // after the entries logged before: ids keep the order
		return err
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: append audit: %w", diskFull(err))
	}
	for _, a := range records {
		if err := s.insertAudit(ctx, tx, a); err != nil {
			tx.Rollback()
			return fmt.Errorf("store: append audit: %w", diskFull(err))
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: append audit: %w", diskFull(err))
	}
	return nil
}

// AuditLog returns up to limit of principal's audit records, newest first,
// older than the record id before (0: from the newest). A limit of 0 or less
// means 100; limits above 500 are cut to 500.
func (s *Store) AuditLog(ctx context.Context, principal string, before int64, limit int) ([]Audit, error) {
	return s.auditLog(ctx, "principal = ? AND ", []any{principal}, before, limit)
}

// AuditLogAll is AuditLog of every principal: for admins.
func (s *Store) AuditLogAll(ctx context.Context, before int64, limit int) ([]Audit, error) {
	return s.auditLog(ctx, "", nil, before, limit)
}

// auditLog reads a page of records matching where (a condition followed
// by "AND ", or "") with its arguments.
func (s *Store) auditLog(ctx context.Context, where string, args []any, before int64, limit int) ([]Audit, error) {
	if err := s.settle(ctx); err != nil {
		return nil, err
	}
	limit = clampLimit(limit)
	if before <= 0 {
		before = 1<<63 - 1
	}
	rows, err := s.r.QueryContext(ctx,
		`SELECT id, at, principal, session_id, entry_id, call_id, origin, server, op, tool, phase, rule, effect, reason, error, duration_us
		 FROM audit WHERE `+where+`id < ? ORDER BY id DESC LIMIT ?`, append(args, before, limit)...)
	if err != nil {
		return nil, fmt.Errorf("store: audit log: %w", err)
	}
	defer rows.Close()
	out := []Audit{}
	for rows.Next() {
		var a Audit
		var at int64
		if err := rows.Scan(&a.ID, &at, &a.Principal, &a.SessionID, &a.EntryID, &a.CallID, &a.Origin, &a.Server, &a.Op, &a.Tool,
			&a.Phase, &a.Rule, &a.Effect, &a.Reason, &a.Error, &a.DurationUs); err != nil {
			return nil, fmt.Errorf("store: audit log: %w", err)
		}
		a.At = time.Unix(0, at).UTC()
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: audit log: %w", err)
	}
	return out, nil
}
