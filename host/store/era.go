package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// EraVerdict returns the stored negotiation verdict for a server
// configuration key, as the JSON it was stored with; ok is false when none
// is stored. The store does not interpret verdicts: expiry is the
// negotiator's rule.
func (s *Store) EraVerdict(ctx context.Context, key string) (verdict json.RawMessage, ok bool, err error) {
	var text string
	err = s.r.QueryRowContext(ctx, `SELECT verdict FROM era_cache WHERE key = ?`, key).Scan(&text)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("store: era verdict: %w", err)
	}
	return json.RawMessage(text), true, nil
}

// PutEraVerdict stores (or replaces) the verdict for key. verdict must be
// valid JSON.
func (s *Store) PutEraVerdict(ctx context.Context, key string, verdict json.RawMessage) error {
	if !json.Valid(verdict) {
		return errors.New("store: put era verdict: not valid JSON")
	}
	_, err := s.w.ExecContext(ctx,
		`INSERT INTO era_cache (key, verdict, updated_at) VALUES (?, ?, ?)
		 ON CONFLICT (key) DO UPDATE SET verdict = excluded.verdict, updated_at = excluded.updated_at`,
		key, string(verdict), s.now().UTC().UnixNano())
	if err != nil {
		return fmt.Errorf("store: put era verdict: %w", err)
	}
	return nil
}

// DeleteEraVerdict removes the verdict for key; a missing key is no error.
func (s *Store) DeleteEraVerdict(ctx context.Context, key string) error {
	if _, err := s.w.ExecContext(ctx, `DELETE FROM era_cache WHERE key = ?`, key); err != nil {
		return fmt.Errorf("store: delete era verdict: %w", err)
	}
	return nil
}
