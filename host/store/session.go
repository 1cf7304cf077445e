package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// maxTitle is the longest session title, in runes.
const maxTitle = 200

// Session is one transcript, owned by one principal.
type Session struct {
	ID        string    `json:"id"`
	Principal string    `json:"-"`
	Title     string    `json:"title"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"` // the last append (on SQLite to within a second), or the creation
	Entries   int       `json:"entries"`
}

// sessionCols are the columns scanSession reads, from the table sessions.
// The entry count is the highest seq of the session's entries (they are
// numbered 1, 2, 3… without gaps and deleted only with their session): one
// lookup in the (session_id, seq) index. The sessions.entries column is not
// read: SQLite no longer keeps it (touchSessions).
const sessionCols = `sessions.id, sessions.principal, sessions.title, sessions.created_at, sessions.updated_at,
	(SELECT coalesce(max(e.seq), 0) FROM entries e WHERE e.session_id = sessions.id)`

// CreateSession creates an empty session owned by principal. The title is
// trimmed of surrounding white space and cut to 200 runes; an empty one
// becomes "Session 2006-01-02 15:04:05" with the creation time in UTC. It
// fails when principal is empty or the database does.
func (s *Store) CreateSession(ctx context.Context, principal, title string) (Session, error) {
	if principal == "" {
		return Session{}, errors.New("store: create session: empty principal")
	}
	now := s.now().UTC()
	sess := Session{
		ID:        "s_" + randomHex(8),
		Principal: principal,
		Title:     cleanTitle(title, now),
		CreatedAt: now,
		UpdatedAt: now,
	}
	_, err := s.w.ExecContext(ctx,
		`INSERT INTO sessions (id, principal, title, created_at, updated_at, entries) VALUES (?, ?, ?, ?, ?, 0)`,
		sess.ID, sess.Principal, sess.Title, now.UnixNano(), now.UnixNano())
	if err != nil {
		return Session{}, fmt.Errorf("store: create session: %w", diskFull(err))
	}
	return sess, nil
}

// Sessions returns principal's sessions, most recently updated first (an
// empty, non-nil slice when there are none).
func (s *Store) Sessions(ctx context.Context, principal string) ([]Session, error) {
	if err := s.settle(ctx); err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx,
		`SELECT `+sessionCols+` FROM sessions
		 WHERE principal = ? ORDER BY updated_at DESC, id`, principal)
	if err != nil {
		return nil, fmt.Errorf("store: sessions: %w", err)
	}
	defer rows.Close()
	out := []Session{}
	for rows.Next() {
		sess, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("store: sessions: %w", err)
		}
		out = append(out, sess)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: sessions: %w", err)
	}
	return out, nil
}

// Session returns principal's session id. It returns [ErrNotFound] when
// there is no such session and when another principal owns it.
func (s *Store) Session(ctx context.Context, principal, id string) (Session, error) {
	if err := s.settle(ctx); err != nil {
		return Session{}, err
	}
	row := s.r.QueryRowContext(ctx,
		`SELECT `+sessionCols+` FROM sessions
		 WHERE id = ? AND principal = ?`, id, principal)
	sess, err := scanSession(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, ErrNotFound
	}
	if err != nil {
		return Session{}, fmt.Errorf("store: session %q: %w", id, err)
	}
	return sess, nil
}

type scanner interface{ Scan(dest ...any) error }

func scanSession(r scanner) (Session, error) {
	var sess Session
	var created, updated int64
	if err := r.Scan(&sess.ID, &sess.Principal, &sess.Title, &created, &updated, &sess.Entries); err != nil {
		return Session{}, err
	}
	sess.CreatedAt = fromNanos(created)
	sess.UpdatedAt = fromNanos(updated)
	return sess, nil
}

func cleanTitle(title string, now time.Time) string {
	title = strings.TrimSpace(title)
	if utf8.RuneCountInString(title) > maxTitle {
		title = strings.TrimSpace(string([]rune(title)[:maxTitle]))
	}
	if title == "" {
		title = "Session " + now.Format(time.DateTime)
	}
	return title
}

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

// randomHex returns 2n hex digits from crypto/rand.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand crashes the program instead)
	return hex.EncodeToString(b)
}
