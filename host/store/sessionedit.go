package store

import (
	"context"
	"fmt"
	"strings"
)

// RenameSession sets the title of principal's session id (cleaned as
// CreateSession cleans it) and returns the session; ErrNotFound for a
// session that is not principal's.
func (s *Store) RenameSession(ctx context.Context, principal, id, title string) (Session, error) {
	sess, err := s.Session(ctx, principal, id)
	if err != nil {
		return Session{}, err
	}
	sess.Title = cleanTitle(title, sess.CreatedAt)
	res, err := s.w.ExecContext(ctx, `UPDATE sessions SET title = ? WHERE id = ? AND principal = ?`, sess.Title, id, principal)
	if err != nil {
		return Session{}, fmt.Errorf("store: rename session %q: %w", id, diskFull(err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Session{}, ErrNotFound // deleted meanwhile
	}
	return sess, nil
}

// DeleteSession deletes principal's session id with all its entries, in
// one transaction, and returns how many entries went with it; ErrNotFound
// for a session that is not principal's. The audit log keeps its records
// of the session's calls: it is the record of what was decided, not part
// of the transcript.
func (s *Store) DeleteSession(ctx context.Context, principal, id string) (entries int, err error) {
	// No entry may be logged for the session while it goes (entrylog.go).
	release, err := s.holdLog(ctx)
	if err != nil {
		return 0, err
	}
	defer release(id)
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("store: delete session %q: %w", id, err)
	}
	defer tx.Rollback()
	var owner string
	if err := tx.QueryRowContext(ctx, `SELECT principal FROM sessions WHERE id = ?`+s.d.forUpdate, id).Scan(&owner); err != nil || owner != principal {
		return 0, ErrNotFound
	}
	// What the session's Apps gave for the model goes with their entries.
	if _, err := tx.ExecContext(ctx, `DELETE FROM app_contexts WHERE entry_id IN (SELECT id FROM entries WHERE session_id = ?)`, id); err != nil {
		return 0, fmt.Errorf("store: delete the App contexts of session %q: %w", id, diskFull(err))
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM entries WHERE session_id = ?`, id)
	if err != nil {
		return 0, fmt.Errorf("store: delete the entries of session %q: %w", id, diskFull(err))
	}
	n, _ := res.RowsAffected()
	if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id); err != nil {
		return 0, fmt.Errorf("store: delete session %q: %w", id, diskFull(err))
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("store: delete session %q: %w", id, diskFull(err))
	}
	return int(n), nil
}

// maxSearchResults bounds a search.
const maxSearchResults = 100

// SearchSessions returns principal's sessions whose title, or the server
// or tool of one of whose calls, contains every word of q (case-insensitive),
// most recently updated first, at most 100.
func (s *Store) SearchSessions(ctx context.Context, principal, q string) ([]Session, error) {
	if err := s.settle(ctx); err != nil {
		return nil, err
	}
	words := strings.Fields(strings.ToLower(q))
	if len(words) > 8 {
		words = words[:8]
	}
	query := `SELECT ` + sessionCols + ` FROM sessions WHERE principal = ?`
	args := []any{principal}
	for _, w := range words {
		pat := "%" + likeEscape(w) + "%"
		query += ` AND (lower(title) LIKE ? ESCAPE '\' OR EXISTS (SELECT 1 FROM entries e WHERE e.session_id = sessions.id
			AND (lower(e.tool) LIKE ? ESCAPE '\' OR lower(e.server) LIKE ? ESCAPE '\')))`
		args = append(args, pat, pat, pat)
	}
	query += ` ORDER BY updated_at DESC, id LIMIT ?`
	args = append(args, maxSearchResults)
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: search sessions: %w", err)
	}
	defer rows.Close()
	out := []Session{}
	for rows.Next() {
		sess, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("store: search sessions: %w", err)
		}
		out = append(out, sess)
	}
	return out, rows.Err()
}

// likeEscape escapes LIKE's wildcards in s (with ESCAPE '\').
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
