package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// CallEntry returns the entry of the call callID in principal's session
// sessionID (the latest, should a client have reused the id), or
// ErrNotFound: for a session that is not principal's too.
func (s *Store) CallEntry(ctx context.Context, principal, sessionID, callID string) (Entry, error) {
	if err := s.settle(ctx); err != nil {
		return Entry{}, err
	}
	if _, err := s.Session(ctx, principal, sessionID); err != nil {
		return Entry{}, err
	}
	row := s.r.QueryRowContext(ctx,
		`SELECT `+entryColumns+`
		 FROM entries WHERE session_id = ? AND call_id = ? ORDER BY seq DESC LIMIT 1`,
		sessionID, callID)
	e, err := scanEntry(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Entry{}, ErrNotFound
	}
	if err != nil {
		return Entry{}, fmt.Errorf("store: the entry of call %q: %w", callID, err)
	}
	return e, nil
}
