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
	if err = s.saveCredentialTx(ctx, tx, r); err != nil {
		return err
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("store: save credential: %w", err)
	}
	return nil
}

// saveCredentialTx writes r in tx when the stored generation is r's minus
// one (else oauth.ErrConflict); the caller commits.
func (s *Store) saveCredentialTx(ctx context.Context, tx sqlTx, r *oauth.Record) error {
	scopes, err := json.Marshal(r.Scopes)
	if err != nil {
		return fmt.Errorf("store: save credential: %w", err)
	}
	if r.Scopes == nil {
		scopes = []byte("[]")
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
		return oauth.ErrConflict
	}
	return nil
}

// deleteCredentialTx deletes the credential in tx; with generation > 0,
// only when its token row still has that generation (else
// oauth.ErrConflict). The caller commits.
func (s *Store) deleteCredentialTx(ctx context.Context, tx sqlTx, server, principal string, generation int64) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM oauth_tokens WHERE server = ? AND principal = ? AND (? = 0 OR generation = ?)`,
		server, principal, generation, generation)
	if err != nil {
		return fmt.Errorf("store: delete credential: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 && generation > 0 {
		return oauth.ErrConflict
	}
	if _, err = tx.ExecContext(ctx, `DELETE FROM oauth_clients WHERE server = ? AND principal = ?`, server, principal); err != nil {
		return fmt.Errorf("store: delete credential: %w", err)
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
	if err = s.deleteCredentialTx(ctx, tx, server, principal, 0); err != nil {
		return err
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("store: delete credential: %w", err)
	}
	return nil
}

// refreshTxTimeout bounds a refresh's transaction on PostgreSQL once its
// row lock is held: the refresh itself (the authorization server's
// answer, 30 s at most by default) and the write. It is not the caller's
// context: a caller that gives up after the authorization server rotated
// the refresh token must not lose the new one.
const refreshTxTimeout = 2 * time.Minute

// refreshLockConns is how many of PostgreSQL's pooled connections
// refreshes may hold at once (each holds one for its network call), so
// that a wave of expiries cannot take every connection from the readers.
const refreshLockConns = pgReaders / 2

// RefreshCredential implements oauth.Store: the single flight of a
// refresh across every Store on the same database.
//
// On PostgreSQL the lock is the token row's, SELECT … FOR UPDATE in a
// transaction that stays open while fn runs (so fn's refresh holds one of
// the pooled connections, at most refreshLockConns at once): another
// replica's RefreshCredential of the same credential waits for the commit
// and then reads what this one wrote. ctx bounds the wait for the lock;
// once it is held, the transaction runs to its end within
// refreshTxTimeout even if ctx ends.
//
// On SQLite (one node) the lock is a mutex per credential in this Store:
// holding SQLite's write lock across a network call would stall every
// append. The write is still checked against the generation read, so a
// second process writing the same file meanwhile makes it ErrConflict,
// never a lost update.
func (s *Store) RefreshCredential(ctx context.Context, server, principal string, fn func(cur *oauth.Record) (*oauth.Record, error)) (*oauth.Record, error) {
	if s.pg == nil {
		unlock, err := s.locks.credential(ctx, server, principal)
		if err != nil {
			return nil, err
		}
		defer unlock()
		cur, err := s.LoadCredential(ctx, server, principal)
		if err != nil {
			return nil, err
		}
		return s.refreshWrite(context.WithoutCancel(ctx), nil, cur, fn)
	}
	release, err := s.locks.refreshConn(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	txctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTxTimeout)
	defer cancel()
	tx, err := s.w.BeginTx(txctx, nil)
	if err != nil {
		return nil, fmt.Errorf("store: refresh credential: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			tx.Rollback()
		}
	}()
	cur, err := scanCredential(tx.QueryRowContext(ctx, selectCredential+` WHERE t.server = ? AND t.principal = ? FOR UPDATE OF t`, server, principal))
	if errors.Is(err, sql.ErrNoRows) {
		cur, err = nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: refresh credential: lock: %w", err)
	}
	out, err := s.refreshWrite(txctx, &tx, cur, fn)
	if err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("store: refresh credential: %w", err)
	}
	committed = true
	return out, nil
}

// refreshWrite calls fn with cur and writes its answer: in tx when one is
// given (PostgreSQL, under the row lock; the caller commits), else in a
// transaction of its own with the generation check (SQLite).
func (s *Store) refreshWrite(ctx context.Context, tx *sqlTx, cur *oauth.Record, fn func(cur *oauth.Record) (*oauth.Record, error)) (out *oauth.Record, err error) {
	next, err := fn(cur)
	if err != nil || next == cur {
		return cur, err
	}
	if next != nil && next.Generation != generationOf(cur)+1 {
		return nil, oauth.ErrConflict
	}
	if tx == nil {
		own, err := s.w.BeginTx(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("store: refresh credential: %w", err)
		}
		defer func() {
			if err == nil {
				if err = own.Commit(); err != nil {
					err = fmt.Errorf("store: refresh credential: %w", err)
				}
			}
			if err != nil {
				own.Rollback()
				out = nil
			}
		}()
		tx = &own
	}
	if next == nil {
		return nil, s.deleteCredentialTx(ctx, *tx, cur.Server, cur.Principal, cur.Generation)
	}
	return next, s.saveCredentialTx(ctx, *tx, next)
}

func generationOf(r *oauth.Record) int64 {
	if r == nil {
		return 0
	}
	return r.Generation
}
