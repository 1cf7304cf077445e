package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcphost/mcphost/oauth"
)

// The store keeps OAuth credentials for package oauth (migration 7). The
// secrets arrive sealed and leave sealed.
var _ oauth.Store = (*Store)(nil)

func unixOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UTC().UnixNano()
}

func timeOrZero(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

const selectCredential = `
SELECT t.server, t.principal, t.issuer, t.resource, t.scopes, t.access_token, t.refresh_token,
       t.token_type, t.expiry, t.generation, t.updated_at,
       c.client_id, c.client_secret, c.auth_style, c.registration, c.token_url, c.revocation_url
FROM oauth_tokens t JOIN oauth_clients c ON c.server = t.server AND c.principal = t.principal`

func scanCredential(row interface{ Scan(...any) error }) (*oauth.Record, error) {
	var (
		r                       oauth.Record
		scopes                  string
		expiry, updated         int64
		access, refresh, secret []byte
	)
	if err := row.Scan(&r.Server, &r.Principal, &r.Issuer, &r.Resource, &scopes, &access, &refresh,
		&r.TokenType, &expiry, &r.Generation, &updated,
		&r.ClientID, &secret, &r.AuthStyle, &r.Registration, &r.TokenURL, &r.RevocationURL); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(scopes), &r.Scopes); err != nil {
		return nil, fmt.Errorf("scopes of %q: %w", r.Server, err)
	}
	r.AccessToken, r.RefreshToken, r.ClientSecret = access, refresh, secret
	r.Expiry, r.UpdatedAt = timeOrZero(expiry), timeOrZero(updated)
	return &r, nil
}

// LoadCredential implements oauth.Store.
func (s *Store) LoadCredential(ctx context.Context, server, principal string) (*oauth.Record, error) {
	r, err := scanCredential(s.r.QueryRowContext(ctx, selectCredential+` WHERE t.server = ? AND t.principal = ?`, server, principal))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: load credential: %w", err)
	}
	return r, nil
}

// ListCredentials implements oauth.Store.
func (s *Store) ListCredentials(ctx context.Context, server string) ([]oauth.Record, error) {
	rows, err := s.r.QueryContext(ctx, selectCredential+` WHERE ? = '' OR t.server = ? ORDER BY t.server, t.principal`, server, server)
	if err != nil {
		return nil, fmt.Errorf("store: list credentials: %w", err)
	}
	defer rows.Close()
	var out []oauth.Record
	for rows.Next() {
		r, err := scanCredential(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list credentials: %w", err)
		}
		out = append(out, *r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list credentials: %w", err)
	}
	return out, nil
}

// SaveCredential implements oauth.Store: the client row and the token row
// in one transaction, the token row only when its generation is the
// stored one plus one.
func (s *Store) SaveCredential(ctx context.Context, r *oauth.Record) (err error) {
	scopes, err := json.Marshal(r.Scopes)
	if err != nil {
		return fmt.Errorf("store: save credential: %w", err)
	}
	if r.Scopes == nil {
		scopes = []byte("[]")
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: save credential: %w", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	var gen int64
	err = tx.QueryRowContext(ctx, `SELECT generation FROM oauth_tokens WHERE server = ? AND principal = ?`+s.d.forUpdate, r.Server, r.Principal).Scan(&gen)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("store: save credential: %w", err)
	}
	if r.Generation != gen+1 {
		return oauth.ErrConflict
	}
	now := s.now().UTC().UnixNano()
	if _, err = tx.ExecContext(ctx, `
INSERT INTO oauth_clients (server, principal, issuer, client_id, client_secret, auth_style, registration, token_url, revocation_url, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (server, principal) DO UPDATE SET issuer = excluded.issuer, client_id = excluded.client_id,
	client_secret = excluded.client_secret, auth_style = excluded.auth_style, registration = excluded.registration,
	token_url = excluded.token_url, revocation_url = excluded.revocation_url, updated_at = excluded.updated_at`,
		r.Server, r.Principal, r.Issuer, r.ClientID, r.ClientSecret, r.AuthStyle, r.Registration, r.TokenURL, r.RevocationURL, now); err != nil {
		return fmt.Errorf("store: save credential: %w", err)
	}
	res, err := tx.ExecContext(ctx, `
INSERT INTO oauth_tokens (server, principal, issuer, resource, scopes, access_token, refresh_token, token_type, expiry, generation, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (server, principal) DO UPDATE SET issuer = excluded.issuer, resource = excluded.resource,
	scopes = excluded.scopes, access_token = excluded.access_token, refresh_token = excluded.refresh_token,
	token_type = excluded.token_type, expiry = excluded.expiry, generation = excluded.generation, updated_at = excluded.updated_at
WHERE oauth_tokens.generation = excluded.generation - 1`,
		r.Server, r.Principal, r.Issuer, r.Resource, string(scopes), r.AccessToken, r.RefreshToken, r.TokenType,
		unixOrZero(r.Expiry), r.Generation, unixOrZero(r.UpdatedAt))
	if err != nil {
		return fmt.Errorf("store: save credential: %w", err)
	}
	// A first save that raced another first save (no row to lock on
	// PostgreSQL) changes nothing here: the guard above refused it.
	if n, _ := res.RowsAffected(); n == 0 {
		err = oauth.ErrConflict
		return err
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("store: save credential: %w", err)
	}
	return nil
}

// DeleteCredential implements oauth.Store.
func (s *Store) DeleteCredential(ctx context.Context, server, principal string) (err error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: delete credential: %w", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	for _, table := range []string{"oauth_tokens", "oauth_clients"} {
		// table is one of two constants.
		if _, err = tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE server = ? AND principal = ?`, server, principal); err != nil {
			return fmt.Errorf("store: delete credential: %w", err)
		}
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("store: delete credential: %w", err)
	}
	return nil
}
