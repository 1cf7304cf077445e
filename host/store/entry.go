package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Entry statuses.
const (
	StatusOK        = "ok"         // the tool answered; Result holds it
	StatusToolError = "tool_error" // the tool answered with isError: true; Result holds it
	StatusError     = "error"      // no result: the server failed, timed out or died; Error says why
	StatusCancelled = "cancelled"  // the caller cancelled the call
	StatusDenied    = "denied"     // a policy refused the call or withheld its result; Error holds the rule's message
)

// Entry kinds.
const (
	KindCall       = "call"        // a tool call (the default)
	KindAppMessage = "app_message" // a ui/message an App sent; Message holds it
	// KindRead is a resources/read: Tool holds the resource's URI,
	// Arguments {"uri": …}, Result the ReadResourceResult.
	KindRead = "resource_read"
	// KindPrompt is a prompts/get: Tool holds the prompt's name,
	// Arguments its arguments, Result the GetPromptResult.
	KindPrompt = "prompt_get"
)

// Entries limits.
const (
	defaultLimit = 100
	maxLimit     = 500
)

// Entry is one record of a session's transcript: a tool call, a resource
// read, a prompt got, or an App's message (Kind). The JSON
// fields are the fields of the HTTP API's Entry.
type Entry struct {
	ID              string          `json:"id"`
	SessionID       string          `json:"sessionId"`
	Seq             int64           `json:"seq"`
	CallID          string          `json:"callId"`
	Principal       string          `json:"principal"`
	Origin          string          `json:"origin"`
	Server          string          `json:"server"`
	Tool            string          `json:"tool"`
	Arguments       json.RawMessage `json:"arguments"`
	Status          string          `json:"status"` // ok | tool_error | error | cancelled
	Result          json.RawMessage `json:"result"` // CallToolResult JSON or null
	Error           string          `json:"error,omitempty"`
	Era             string          `json:"era,omitempty"`
	ProtocolVersion string          `json:"protocolVersion,omitempty"`
	StartedAt       time.Time       `json:"startedAt"`
	DurationMs      float64         `json:"durationMs"`
	Display         json.RawMessage `json:"display"` // null until MCP Apps; stored as-is
	Trail           json.RawMessage `json:"trail"`   // policy decisions and plugin outcomes (host.Trail), or null
	// Kind is KindCall (the default), KindAppMessage, KindRead or
	// KindPrompt.
	Kind string `json:"kind"`
	// AppEntryID is the entry whose MCP App made this call or sent this
	// message (Origin "app"); "" otherwise.
	AppEntryID string `json:"appEntryId,omitempty"`
	// Message is an App message's content (KindAppMessage); nil otherwise.
	Message json.RawMessage `json:"message,omitempty"`
	// ErrorCode and ErrorData are the code and data of the JSON-RPC error
	// the server answered the call with (Status error), such as -32042,
	// URL elicitation required, whose data lists the URLs to open first.
	// They are in the call's answer and its event only, not stored: the
	// transcript keeps Error.
	ErrorCode int64           `json:"errorCode,omitempty"`
	ErrorData json.RawMessage `json:"errorData,omitempty"`
	// Audit are policy decisions to add to the audit log in the entry's
	// transaction; their session, entry and principal are the entry's.
	// Not part of the entry itself.
	Audit []Audit `json:"-"`
}

// AppendEntry stores e at the end of its session's transcript in one
// transaction, and returns only after that transaction has committed to
// stable storage; on SQLite with [SyncNormal], only after its record is in
// the entry log, from which the store writes it to the database right
// after (entrylog.go; every read waits for it, and the next open replays
// the log). It sets e.ID ("e_" and 16 hex digits) and e.Seq (one more
// than the session's last entry) and bumps the session's UpdatedAt and entry
// count; on error e is unchanged and nothing is stored.
//
// JSON fields (Arguments, Result, Display, Trail) are stored byte for byte;
// nil or empty ones are stored as null, and invalid JSON is an error. Status
// must be one of the Status constants. The session must exist and belong to
// e.Principal, else the error is [ErrNotFound].
//
// Concurrent appends are written in groups, one transaction and one fsync
// per group (see commit.go); each caller still returns only once its own
// entry has committed, and an entry that fails alone does not fail the
// others of its group.
//
// AppendEntry obeys ctx while its entry waits to be written; once the entry
// is being written it waits for the outcome, so an error always means the
// entry is not stored. To record a call whose request was cancelled, pass a
// context without that cancellation (context.WithoutCancel).
func (s *Store) AppendEntry(ctx context.Context, e *Entry) error {
	if e == nil {
		return errors.New("store: append entry: nil entry")
	}
	if err := e.check(); err != nil {
		return fmt.Errorf("store: append entry: %w", err)
	}
	id := "e_" + randomHex(8)
	kind := e.Kind
	if kind == "" {
		kind = KindCall
	}
	// Everything derived from the entry is worked out here, before it is
	// queued, not in the open transaction of its group, which every append
	// in the group waits on.
	size := len(e.Arguments) + len(e.Result) + len(e.Display) + len(e.Trail) + len(e.Message)
	r := &appendReq{id: id, kind: kind, e: e, size: size, htmlBytes: htmlBytes(e.Display)}
	var seq int64
	var err error
	if l := s.elog; l != nil {
		now := s.now()
		r.e, r.at = ownCopy(e, now), now.UnixNano()
		seq, err = s.appendLogged(ctx, l, r)
	} else {
		r.done = make(chan struct{})
		seq, err = s.enqueue(ctx, r)
	}
	if errors.Is(err, ErrNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("store: append entry to session %q: %w", e.SessionID, diskFull(err))
	}
	e.ID, e.Seq, e.Kind = id, seq, kind
	return nil
}

// ownCopy is the entry the entry log's applier writes after AppendEntry
// has returned, when the caller may change its own (the host clears
// Audit): a copy of e whose audit records are its own, with now as the
// time of those that have none (the time of the decision, not of the
// applying). The JSON fields are shared: callers never change their bytes.
func ownCopy(e *Entry, now time.Time) *Entry {
	c := *e
	c.Audit = slices.Clone(e.Audit)
	for i := range c.Audit {
		if c.Audit[i].At.IsZero() {
			c.Audit[i].At = now
		}
	}
	return &c
}

func (e *Entry) check() error {
	switch e.Status {
	case StatusOK, StatusToolError, StatusError, StatusCancelled, StatusDenied:
	default:
		return fmt.Errorf("unknown status %q", e.Status)
	}
	switch e.Kind {
	case "", KindCall, KindAppMessage, KindRead, KindPrompt:
	default:
		return fmt.Errorf("unknown kind %q", e.Kind)
	}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"arguments", e.Arguments}, {"result", e.Result}, {"display", e.Display}, {"trail", e.Trail}, {"message", e.Message}} {
		if len(f.raw) > 0 && !json.Valid(f.raw) {
			return fmt.Errorf("%s is not valid JSON", f.name)
		}
	}
	return nil
}

// insertEntry writes r's entry, and its audit records, in the committer's
// group transaction on c and returns its seq; [ErrNotFound], with nothing
// written, when its session is missing or someone else's. The session's
// counters are the group's to bump (touchSessions), once per session.
func (s *Store) insertEntry(ctx context.Context, c *writerConn, r *appendReq) (seq int64, err error) {
	e := r.e
	var started any // NULL for a zero time
	if !e.StartedAt.IsZero() {
		started = e.StartedAt.UnixNano()
	}
	seq, ok, err := c.queryInt64(ctx, stInsertEntry,
		r.id, e.CallID, e.Origin, e.Server, e.Tool,
		jsonBytes(e.Arguments), e.Status, jsonBytes(e.Result), e.Error, e.Era, e.ProtocolVersion,
		started, e.DurationMs, jsonBytes(e.Display), jsonBytes(e.Trail),
		r.kind, e.AppEntryID, jsonBytes(e.Message), r.htmlBytes,
		e.SessionID, e.Principal)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, ErrNotFound
	}
	for _, a := range e.Audit {
		a.SessionID, a.EntryID, a.Principal = e.SessionID, r.id, e.Principal
		at, reason := s.auditValues(a)
		if err = c.exec(ctx, stInsertAudit, auditArgs(a, at, reason)...); err != nil {
			return 0, err
		}
	}
	return seq, nil
}

// sqliteInsertEntry appends an entry to its session, the one statement of
// an entry without audit records: the session must be the principal's (a
// missing one or someone else's selects no row, so nothing is inserted
// and nothing returned), and the seq is one more than the session's last,
// read in the (session_id, seq) index. SQLite applies a statement whole or
// not at all, so such an entry needs no savepoint of its own in a group.
//
// The JSON fields are bound as []byte and cast to TEXT (see jsonBytes).
const sqliteInsertEntry = `INSERT INTO entries (id, session_id, seq, call_id, principal, origin, server, tool,
	arguments, status, result, error, era, protocol_version, started_at, duration_ms, display, trail,
	kind, app_entry_id, message, app_html_bytes)
SELECT ?, id, (SELECT coalesce(max(seq), 0) + 1 FROM entries WHERE session_id = sessions.id), ?, principal, ?, ?, ?,
	CAST(? AS TEXT), ?, CAST(? AS TEXT), ?, ?, ?, ?, ?, CAST(? AS TEXT), CAST(? AS TEXT),
	?, ?, CAST(? AS TEXT), ?
FROM sessions WHERE id = ? AND principal = ?
RETURNING seq`

// nullJSON is what a nil or empty JSON field is stored as.
var nullJSON = []byte("null")

// jsonBytes is the value bound for a JSON field: its bytes, or "null" for
// nil or empty. They are bound as []byte, which the driver copies straight
// into SQLite's memory (a string would first be copied on the Go heap:
// the largest allocation of an append), and the statement casts them to
// TEXT, so SQLite stores TEXT rather than a BLOB (which its JSON functions
// would read as JSONB, and a STRICT table refuses).
func jsonBytes(raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return nullJSON
	}
	return raw
}

// Entries returns up to limit entries of principal's session sessionID whose
// Seq is greater than after, oldest first, and the cursor for the next page:
// the last Seq returned when more entries exist, else 0. A limit of 0 or
// less means 100; limits above 500 are cut to 500. The session must belong
// to principal, else the error is [ErrNotFound]; a session with no entries
// after the cursor gives an empty, non-nil slice.
func (s *Store) Entries(ctx context.Context, principal, sessionID string, after int64, limit int) ([]Entry, int64, error) {
	limit = clampLimit(limit)
	if _, err := s.Session(ctx, principal, sessionID); err != nil {
		return nil, 0, err
	}
	rows, err := s.r.QueryContext(ctx,
		`SELECT `+entryColumns+`
		 FROM entries WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
		sessionID, max(after, 0), limit+1)
	if err != nil {
		return nil, 0, fmt.Errorf("store: entries of session %q: %w", sessionID, err)
	}
	defer rows.Close()
	out := make([]Entry, 0, min(limit, 16))
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("store: entries of session %q: %w", sessionID, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("store: entries of session %q: %w", sessionID, err)
	}
	var next int64
	if len(out) > limit {
		out = out[:limit]
		next = out[limit-1].Seq
	}
	return out, next, nil
}

// entryColumns are the columns scanEntry reads, in its order.
const entryColumns = `id, session_id, seq, call_id, principal, origin, server, tool, arguments, status,
	result, error, era, protocol_version, started_at, duration_ms, display, trail,
	kind, app_entry_id, message`

// scanEntry reads one row of entryColumns.
func scanEntry(row interface{ Scan(...any) error }) (Entry, error) {
	var e Entry
	var started sql.NullInt64
	var args, result, display, trail, message string
	if err := row.Scan(&e.ID, &e.SessionID, &e.Seq, &e.CallID, &e.Principal, &e.Origin, &e.Server,
		&e.Tool, &args, &e.Status, &result, &e.Error, &e.Era, &e.ProtocolVersion, &started,
		&e.DurationMs, &display, &trail, &e.Kind, &e.AppEntryID, &message); err != nil {
		return Entry{}, err
	}
	e.Arguments = json.RawMessage(args)
	e.Result = json.RawMessage(result)
	e.Display = json.RawMessage(display)
	e.Trail = json.RawMessage(trail)
	if message != "null" {
		e.Message = json.RawMessage(message)
	}
	if started.Valid {
		e.StartedAt = fromNanos(started.Int64)
	}
	return e, nil
}

// Entry returns one of principal's entries by id; [ErrNotFound] when there
// is no such entry or it belongs to someone else.
func (s *Store) Entry(ctx context.Context, principal, entryID string) (Entry, error) {
	if err := s.settle(ctx); err != nil {
		return Entry{}, err
	}
	row := s.r.QueryRowContext(ctx, `SELECT `+entryColumns+` FROM entries WHERE id = ? AND principal = ?`, entryID, principal)
	e, err := scanEntry(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Entry{}, ErrNotFound
	}
	if err != nil {
		return Entry{}, fmt.Errorf("store: entry %q: %w", entryID, err)
	}
	return e, nil
}

// htmlBytes is the byte length of a display record's "html" string: what
// app_html_bytes holds. It is 0 for null, a record without html, or
// anything that does not decode.
func htmlBytes(display json.RawMessage) int64 {
	if len(display) == 0 || !bytes.Contains(display, []byte(`"html"`)) {
		return 0
	}
	var d struct {
		HTML string `json:"html"`
	}
	if json.Unmarshal(display, &d) != nil {
		return 0
	}
	return int64(len(d.HTML))
}

func clampLimit(limit int) int {
	switch {
	case limit <= 0:
		return defaultLimit
	case limit > maxLimit:
		return maxLimit
	}
	return limit
}

// SetDisplay replaces the display record of one of principal's entries (the
// host compacts App records this way). display must be valid JSON; the rest
// of the entry never changes once stored.
func (s *Store) SetDisplay(ctx context.Context, principal, entryID string, display json.RawMessage) error {
	if err := s.settle(ctx); err != nil {
		return err
	}
	if !json.Valid(display) {
		return errors.New("store: set display: not valid JSON")
	}
	res, err := s.w.ExecContext(ctx, `UPDATE entries SET display = ?, app_html_bytes = ? WHERE id = ? AND principal = ?`,
		string(display), htmlBytes(display), entryID, principal)
	if err != nil {
		return fmt.Errorf("store: set display: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}
