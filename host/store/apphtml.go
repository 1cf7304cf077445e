package store

import (
	"context"
	"fmt"
	"time"
)

// AppHTML is one entry whose display record still holds MCP App HTML: what
// the host's compaction pass looks at.
type AppHTML struct {
	EntryID   string
	SessionID string
	Principal string
	Seq       int64
	StartedAt time.Time // zero when the entry has none
	Bytes     int64     // the byte length of the record's html
}

// SessionAppHTML is a session's total App HTML.
type SessionAppHTML struct {
	SessionID string
	Principal string
	Bytes     int64
}

// AppHTMLStartedBefore returns up to limit entries, of any principal, whose
// display record holds App HTML and which started before t, oldest first
// (limit <= 0 means 100; at most 500). Entries without a start time are
// never returned.
func (s *Store) AppHTMLStartedBefore(ctx context.Context, t time.Time, limit int) ([]AppHTML, error) {
	if err := s.settle(ctx); err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx,
		`SELECT id, session_id, principal, seq, started_at, app_html_bytes FROM entries
		 WHERE app_html_bytes > 0 AND started_at < ? ORDER BY started_at LIMIT ?`,
		t.UnixNano(), clampLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("store: App HTML by age: %w", err)
	}
	defer rows.Close()
	var out []AppHTML
	for rows.Next() {
		var a AppHTML
		var started int64
		if err := rows.Scan(&a.EntryID, &a.SessionID, &a.Principal, &a.Seq, &started, &a.Bytes); err != nil {
			return nil, fmt.Errorf("store: App HTML by age: %w", err)
		}
		a.StartedAt = fromNanos(started)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: App HTML by age: %w", err)
	}
	return out, nil
}

// SessionsOverAppHTML returns the sessions whose entries' App HTML adds up
// to more than bound bytes, largest first.
func (s *Store) SessionsOverAppHTML(ctx context.Context, bound int64) ([]SessionAppHTML, error) {
	if err := s.settle(ctx); err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx,
		`SELECT e.session_id, s.principal, CAST(sum(e.app_html_bytes) AS BIGINT) AS total
		 FROM entries e JOIN sessions s ON s.id = e.session_id
		 WHERE e.app_html_bytes > 0
		 GROUP BY e.session_id, s.principal HAVING sum(e.app_html_bytes) > ? ORDER BY total DESC, e.session_id`, bound)
	if err != nil {
		return nil, fmt.Errorf("store: App HTML by session: %w", err)
	}
	defer rows.Close()
	var out []SessionAppHTML
	for rows.Next() {
		var a SessionAppHTML
		if err := rows.Scan(&a.SessionID, &a.Principal, &a.Bytes); err != nil {
			return nil, fmt.Errorf("store: App HTML by session: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: App HTML by session: %w", err)
	}
	return out, nil
}

// AppHTMLOfSession returns a session's entries whose display record holds
// App HTML, oldest (lowest seq) first.
func (s *Store) AppHTMLOfSession(ctx context.Context, sessionID string) ([]AppHTML, error) {
	if err := s.settle(ctx); err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx,
		`SELECT id, session_id, principal, seq, coalesce(started_at, 0), app_html_bytes FROM entries
		 WHERE session_id = ? AND app_html_bytes > 0 ORDER BY seq`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("store: App HTML of session %q: %w", sessionID, err)
	}
	defer rows.Close()
	var out []AppHTML
	for rows.Next() {
		var a AppHTML
		var started int64
		if err := rows.Scan(&a.EntryID, &a.SessionID, &a.Principal, &a.Seq, &started, &a.Bytes); err != nil {
			return nil, fmt.Errorf("store: App HTML of session %q: %w", sessionID, err)
		}
		if started != 0 {
			a.StartedAt = fromNanos(started)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: App HTML of session %q: %w", sessionID, err)
	}
	return out, nil
}
