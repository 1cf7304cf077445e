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
}

// MemoryStore is a [Store] in memory.
type MemoryStore struct {
	mu   sync.Mutex
	rows map[[2]string]Record
}

// NewMemoryStore returns an empty in-memory store.
func NewMemoryStore() *MemoryStore { return &MemoryStore{rows: map[[2]string]Record{}} }

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
