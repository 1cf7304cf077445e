package oauth

import (
	"context"
	"sync"
	"time"
)

// Tables named in the sealed values' additional data.
const (
	tableTokens  = "oauth_tokens"
	tableClients = "oauth_clients"
)

// SharedPrincipal is the principal key of a `tokens = "shared"` credential.
const SharedPrincipal = "*"

// Record is one stored credential: the client registration it was issued
// to and the tokens. Secret fields hold sealed bytes ([Sealer]); the store
// never sees them in the clear.
type Record struct {
	Server    string
	Principal string // a principal name, or SharedPrincipal
	Issuer    string // the authorization server that issued the tokens
	Resource  string // the resource indicator sent with every token request
	TokenURL  string
	// RevocationURL is the authorization server's revocation endpoint
	// (RFC 7009), "" when it advertises none.
	RevocationURL string

	ClientID     string
	ClientSecret []byte // sealed
	AuthStyle    int    // oauth2.AuthStyle
	Registration string // "dcr", "cimd", "pre" or "client_credentials"

	AccessToken  []byte // sealed
	RefreshToken []byte // sealed
	TokenType    string
	Expiry       time.Time
	Scopes       []string // granted (or, when the server said nothing, requested)
	// Generation counts the saves of this row; a save whose generation is
	// not the stored one plus one fails with ErrConflict (another writer
	// refreshed first).
	Generation int64
	UpdatedAt  time.Time
}

// Store keeps credentials. host implements it over its database; an
// in-memory one ([NewMemoryStore]) serves tests and hosts without a
// database.
type Store interface {
	// LoadCredential returns the stored credential, or nil when there is
	// none.
	LoadCredential(ctx context.Context, server, principal string) (*Record, error)
	// SaveCredential stores r, whose Generation must be the stored one
	// plus one (1 for a new row), else it returns ErrConflict.
	SaveCredential(ctx context.Context, r *Record) error
	// DeleteCredential removes the credential; a missing one is no error.
	DeleteCredential(ctx context.Context, server, principal string) error
	// ListCredentials returns the stored credentials of a server ("" for
	// every server), secrets included (sealed).
	ListCredentials(ctx context.Context, server string) ([]Record, error)
	// RefreshCredential is the single flight of a refresh across every
	// holder of the store (replicas of one database): it locks the stored
	// credential of (server, principal) against every other
	// RefreshCredential of it, reads it, calls fn with it (nil when there
	// is none) and writes what fn returns before it unlocks:
	//
	//   - cur itself (the same pointer): nothing is written;
	//   - another record: it is saved, its Generation must be cur's plus one;
	//   - nil: the credential is deleted.
	//
	// An error from fn writes nothing and is returned as it is. It
	// returns the record stored when it unlocked (nil when none). A write
	// that finds the row changed since it was read (a store whose lock
	// does not reach every writer) returns ErrConflict and writes nothing.
	// fn may make network calls (the refresh itself) but must not use the
	// store.
	RefreshCredential(ctx context.Context, server, principal string, fn func(cur *Record) (*Record, error)) (*Record, error)
}

// MemoryStore is a [Store] in memory.
type MemoryStore struct {
	mu    sync.Mutex
	rows  map[[2]string]Record
	locks map[[2]string]*sync.Mutex // RefreshCredential's, one per credential
}

// NewMemoryStore returns an empty in-memory store.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{rows: map[[2]string]Record{}, locks: map[[2]string]*sync.Mutex{}}
}

// LoadCredential implements [Store].
func (s *MemoryStore) LoadCredential(_ context.Context, server, principal string) (*Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.rows[[2]string{server, principal}]
	if !ok {
		return nil, nil
	}
	return &r, nil
}

// SaveCredential implements [Store].
func (s *MemoryStore) SaveCredential(_ context.Context, r *Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := [2]string{r.Server, r.Principal}
	if r.Generation != s.rows[k].Generation+1 {
		return ErrConflict
	}
	s.rows[k] = *r
	return nil
}

// DeleteCredential implements [Store].
func (s *MemoryStore) DeleteCredential(_ context.Context, server, principal string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.rows, [2]string{server, principal})
	return nil
}

// ListCredentials implements [Store].
func (s *MemoryStore) ListCredentials(_ context.Context, server string) ([]Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Record
	for k, r := range s.rows {
		if server == "" || k[0] == server {
			out = append(out, r)
		}
	}
	return out, nil
}

// RefreshCredential implements [Store]: the lock is a mutex per
// credential.
func (s *MemoryStore) RefreshCredential(ctx context.Context, server, principal string, fn func(cur *Record) (*Record, error)) (*Record, error) {
	k := [2]string{server, principal}
	s.mu.Lock()
	l := s.locks[k]
	if l == nil {
		l = &sync.Mutex{}
		s.locks[k] = l
	}
	s.mu.Unlock()
	l.Lock()
	defer l.Unlock()
	cur, _ := s.LoadCredential(ctx, server, principal)
	next, err := fn(cur)
	switch {
	case err != nil:
		return nil, err
	case next == cur:
		return cur, nil
	case next == nil:
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.rows[k].Generation != cur.Generation {
			return nil, ErrConflict
		}
		delete(s.rows, k)
		return nil, nil
	}
	if err := s.SaveCredential(ctx, next); err != nil {
		return nil, err
	}
	return next, nil
}
