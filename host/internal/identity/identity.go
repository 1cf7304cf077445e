package identity

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"slices"
	"strings"

	"github.com/mcphost/mcphost/host/config"
)

// Principal is an authenticated caller: a `principal` block of the config or
// the daemon's generated owner.
type Principal struct {
	Name   string   `json:"name"`
	Groups []string `json:"groups"`
}

// OwnerName is the principal of the daemon's generated owner token.
const OwnerName = "owner"

// Origins: the door a request came through, as its credential says.
const (
	OriginUser    = "user"    // a person, through the WebShell
	OriginAPI     = "api"     // any other API client
	OriginApp     = "app"     // an MCP App, through the WebShell
	OriginGateway = "gateway" // an MCP client of the gateway
)

// ClientInfo is an MCP client as it names itself (its clientInfo): what
// policies see as `client`. It is the client's claim, not a proof.
type ClientInfo struct {
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
}

// Caller is an authenticated request: its principal, the origin its
// credential implies, and whether the principal is an admin. The origin is
// decided here, from the kind of credential, never from what the client
// says: a principal's token is OriginAPI, the WebShell credential it was
// exchanged for (see [Table.SignIn]) is OriginUser.
type Caller struct {
	Principal
	Origin string `json:"origin"`
	// Admin callers see every server with its process details, every
	// principal's figures and the metrics (config `admins`; the owner).
	Admin bool `json:"admin"`
	// Client is the MCP client a gateway caller uses (OriginGateway only).
	Client ClientInfo `json:"client,omitzero"`

	// digest is the SHA-256 of the credential the caller authenticated
	// with; zero for a caller built in-process (tests, one-shot commands),
	// which no reload revokes.
	digest [sha256.Size]byte
}

// webShellPrefix starts every WebShell credential, so the WebShell can tell
// a credential it holds from a token it still has to exchange.
const webShellPrefix = "mcphost-ws-"

// IsWebShellCredential reports whether s has the form of a WebShell
// credential (not whether it is valid).
func IsWebShellCredential(s string) bool { return strings.HasPrefix(s, webShellPrefix) }

// ErrNoWebShell is returned by SignIn for a principal whose block says
// `webshell = false`.
var ErrNoWebShell = errors.New("this principal may not sign in to the WebShell (webshell = false in its principal block); use its token with the API")

// ErrNotAToken is returned by SignIn for a credential that is not a
// principal's token (a WebShell credential, or one that is not accepted).
var ErrNotAToken = errors.New("only a principal's token can be exchanged for a WebShell credential")

// entry is a principal with the digests of its credentials. Tokens are
// compared as SHA-256 digests in constant time, so neither the comparison
// nor the token's length leaks through timing.
type entry struct {
	principal Principal
	digest    [sha256.Size]byte // of the token
	// webShell is the SHA-256 of the principal's WebShell credential; zero
	// when the principal may not use the WebShell (`webshell = false`).
	webShell [sha256.Size]byte
	admin    bool
	limit    config.RateLimit
}

// Table is the credentials of one config's principals: immutable, safe
// for concurrent use.
type Table struct {
	key     []byte
	entries []entry
}

// NewKey returns the key WebShell credentials are derived with: the given
// one, or a fresh random one (credentials then last as long as the
// process).
func NewKey(key []byte) []byte {
	if len(key) > 0 {
		return slices.Clone(key)
	}
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return k
}

// NewTable builds the credentials of cfg's principals, and of the owner
// (with ownerToken) when the config declares none; key derives the
// WebShell credentials.
func NewTable(cfg *config.Config, key []byte, ownerToken string) *Table {
	admin := func(p config.Principal) bool {
		return slices.ContainsFunc(cfg.Admins, func(n string) bool { return n == p.Name || slices.Contains(p.Groups, n) })
	}
	t := &Table{key: key}
	add := func(p Principal, token string, webShell, isAdmin bool, limit config.RateLimit) {
		e := entry{principal: p, digest: sha256.Sum256([]byte(token)), admin: isAdmin, limit: limit}
		if webShell {
			e.webShell = sha256.Sum256([]byte(webShellCredential(key, e.digest)))
		}
		t.entries = append(t.entries, e)
	}
	for _, p := range cfg.Principals {
		add(Principal{Name: p.Name, Groups: append([]string{}, p.Groups...)}, p.Token, !p.APIOnly, admin(p), p.RateLimit)
	}
	if ownerToken != "" && len(cfg.Principals) == 0 {
		add(Principal{Name: OwnerName, Groups: []string{}}, ownerToken, true, true, cfg.OwnerRateLimit)
	}
	return t
}

// webShellCredential derives the WebShell credential of the token whose
// digest is d: an HMAC, so the daemon keeps no table of them, and a rotated
// or removed token takes its credential with it.
func webShellCredential(key []byte, d [sha256.Size]byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("mcphost webshell credential\x00"))
	m.Write(d[:])
	return webShellPrefix + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Authenticate returns the caller whose credential is token: a
// principal's token (origin OriginAPI) or a WebShell credential
// (OriginUser). Every configured credential is compared, in constant time,
// whatever matches first.
func (t *Table) Authenticate(token string) (Caller, bool) {
	if token == "" {
		return Caller{}, false
	}
	c, e := t.lookup(sha256.Sum256([]byte(token)))
	return c, e != nil
}

// lookup returns the caller whose credential has digest d and its entry,
// or nil when none has.
func (t *Table) lookup(d [sha256.Size]byte) (Caller, *entry) {
	var (
		found Caller
		match *entry
	)
	for i := range t.entries {
		e := &t.entries[i]
		api := subtle.ConstantTimeCompare(d[:], e.digest[:])
		ws := subtle.ConstantTimeCompare(d[:], e.webShell[:])
		if api|ws == 1 {
			found = Caller{Principal: e.principal, Origin: OriginAPI, Admin: e.admin, digest: d}
			if ws == 1 {
				found.Origin = OriginUser
			}
			match = e
		}
	}
	return found, match
}

// SignIn exchanges a principal's token for its WebShell credential, with
// which requests have the origin OriginUser. The credential is valid while
// the token is: a reload that rotates or removes the token revokes it.
func (t *Table) SignIn(token string) (string, Caller, error) {
	c, e := t.lookup(sha256.Sum256([]byte(token)))
	switch {
	case e == nil || c.Origin != OriginAPI:
		return "", Caller{}, ErrNotAToken
	case e.webShell == [sha256.Size]byte{}:
		return "", Caller{}, ErrNoWebShell
	}
	cred := webShellCredential(t.key, c.digest)
	c.Origin, c.digest = OriginUser, sha256.Sum256([]byte(cred))
	return cred, c, nil
}

// StillValid reports whether c's credential still authenticates the same
// caller (same principal, groups and admin rights) under this table. A
// caller built in-process, without a credential, stays valid.
func (t *Table) StillValid(c Caller) bool {
	if c.digest == ([sha256.Size]byte{}) {
		return true
	}
	now, e := t.lookup(c.digest)
	return e != nil && now.Name == c.Name && (now.Origin == c.Origin || c.Origin == OriginGateway && now.Origin == OriginAPI) &&
		now.Admin == c.Admin && slices.Equal(now.Groups, c.Groups)
}

// Len is the number of credentials that can authenticate.
func (t *Table) Len() int { return len(t.entries) }

// RateLimitOf returns the limits of the principal named name (none for a
// principal the table does not know: an in-process caller).
func (t *Table) RateLimitOf(name string) config.RateLimit {
	for _, e := range t.entries {
		if e.principal.Name == name {
			return e.limit
		}
	}
	return config.RateLimit{}
}
