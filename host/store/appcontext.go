package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// MaxAppContextBytes bounds the context one App gives for the model.
const MaxAppContextBytes = 64 << 10

// AppContext is what the MCP App of an entry last gave for the model
// (ui/update-model-context): its params as JSON, and when.
type AppContext struct {
	EntryID   string          `json:"entryId"`
	Context   json.RawMessage `json:"context"`
	UpdatedAt time.Time       `json:"updatedAt"`
}

// SetAppContext replaces the model context of the App of one of
// principal's entries. ctxJSON must be valid JSON of at most
// MaxAppContextBytes; the entry must exist.
func (s *Store) SetAppContext(ctx context.Context, principal, entryID string, ctxJSON json.RawMessage, at time.Time) error {
	if err := s.settle(ctx); err != nil {
		return err
	}
	if !json.Valid(ctxJSON) {
		return errors.New("store: set App context: not valid JSON")
	}
	if len(ctxJSON) > MaxAppContextBytes {
		return fmt.Errorf("store: set App context: %d bytes, limit %d", len(ctxJSON), MaxAppContextBytes)
	}
	if _, err := s.Entry(ctx, principal, entryID); err != nil {
		return err
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO app_contexts (entry_id, principal, context, updated_at) VALUES (?, ?, ?, ?)
ON CONFLICT (entry_id) DO UPDATE SET context = excluded.context, updated_at = excluded.updated_at`,
		entryID, principal, string(ctxJSON), at.UTC().UnixNano())
	if err != nil {
		return fmt.Errorf("store: set App context: %w", err)
	}
	s.appContexts.Add(1)
	if s.Clustered() {
		// The other replicas' gateways read App contexts anew too.
		if err := s.Poke(ctx, Poke{Kind: PokeAppContext, ID: entryID, Principal: principal}); err != nil {
			s.logger.Warn("telling the other replicas of an App context", "error", err)
		}
	}
	return nil
}

// AppContextVersion changes whenever an App context is set (on a
// clustered store, by any replica: see [PokeAppContext]): equal versions
// mean no App gave context in between.
func (s *Store) AppContextVersion() uint64 { return s.appContexts.Load() }

// AppContextOf returns the model context the App of one of principal's
// entries gave last, or ErrNotFound when it gave none.
func (s *Store) AppContextOf(ctx context.Context, principal, entryID string) (AppContext, error) {
	if err := s.settle(ctx); err != nil {
		return AppContext{}, err
	}
	var raw string
	var at int64
	err := s.r.QueryRowContext(ctx, `SELECT context, updated_at FROM app_contexts WHERE entry_id = ? AND principal = ?`, entryID, principal).Scan(&raw, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return AppContext{}, ErrNotFound
	}
	if err != nil {
		return AppContext{}, fmt.Errorf("store: App context: %w", err)
	}
	return AppContext{EntryID: entryID, Context: json.RawMessage(raw), UpdatedAt: time.Unix(0, at).UTC()}, nil
}

// SessionAppContext is the model context an App of a session's entry
// gave, with the call it belongs to.
type SessionAppContext struct {
	AppContext
	Server string `json:"server"`
	Tool   string `json:"tool"`
}

// maxSessionAppContexts bounds one SessionAppContexts answer.
const maxSessionAppContexts = 16

// SessionAppContexts returns the model contexts the Apps of principal's
// session gave after since, oldest first, at most 16.
func (s *Store) SessionAppContexts(ctx context.Context, principal, sessionID string, since time.Time) ([]SessionAppContext, error) {
	if err := s.settle(ctx); err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT c.entry_id, c.context, c.updated_at, e.server, e.tool
		FROM app_contexts c JOIN entries e ON e.id = c.entry_id
		WHERE e.session_id = ? AND c.principal = ? AND c.updated_at > ?
		ORDER BY c.updated_at, c.entry_id LIMIT ?`, sessionID, principal, since.UTC().UnixNano(), maxSessionAppContexts)
	if err != nil {
		return nil, fmt.Errorf("store: App contexts of session %q: %w", sessionID, err)
	}
	defer rows.Close()
	var out []SessionAppContext
	for rows.Next() {
		var c SessionAppContext
		var raw string
		var at int64
		if err := rows.Scan(&c.EntryID, &raw, &at, &c.Server, &c.Tool); err != nil {
			return nil, fmt.Errorf("store: App contexts of session %q: %w", sessionID, err)
		}
		c.Context, c.UpdatedAt = json.RawMessage(raw), time.Unix(0, at).UTC()
		out = append(out, c)
	}
	return out, rows.Err()
}
