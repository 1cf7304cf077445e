package host

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

// Caller is an authenticated request: its principal, the origin its
// credential implies, and whether the principal is an admin. The origin is
// decided here, from the kind of credential, never from what the client
// says: a principal's token is OriginAPI, the WebShell credential it was
// exchanged for (see [Host.WebShellSignIn]) is OriginUser.
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

// principalToken is a principal with the hashes of its credentials. Tokens
// are compared as SHA-256 digests in constant time, so neither the
// comparison nor the token's length leaks through timing.
type principalToken struct {
	principal Principal
	digest    [sha256.Size]byte // of the token
	// webShell is the SHA-256 of the principal's WebShell credential; zero
	// when the principal may not use the WebShell (`webshell = false`).
	webShell [sha256.Size]byte
	admin    bool
	limit    config.RateLimit
}

// newCredentialKey returns the key WebShell credentials are derived with:
// the given one, or a fresh random one (credentials then last as long as
// the process).
func newCredentialKey(key []byte) []byte {
	if len(key) > 0 {
		return slices.Clone(key)
	}
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return k
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

// principalTokens builds the credentials of cfg's principals (and of the
// owner, when the config declares none).
func (h *Host) principalTokens(cfg *config.Config) []principalToken {
	admin := func(p config.Principal) bool {
		return slices.ContainsFunc(cfg.Admins, func(n string) bool { return n == p.Name || slices.Contains(p.Groups, n) })
	}
	var out []principalToken
	add := func(p Principal, token string, webShell, isAdmin bool, limit config.RateLimit) {
		pt := principalToken{principal: p, digest: sha256.Sum256([]byte(token)), admin: isAdmin, limit: limit}
		if webShell {
			pt.webShell = sha256.Sum256([]byte(webShellCredential(h.credKey, pt.digest)))
		}
		out = append(out, pt)
	}
	for _, p := range cfg.Principals {
		add(Principal{Name: p.Name, Groups: append([]string{}, p.Groups...)}, p.Token, !p.APIOnly, admin(p), p.RateLimit)
	}
	if h.opts.OwnerToken != "" && len(cfg.Principals) == 0 {
		add(Principal{Name: OwnerName, Groups: []string{}}, h.opts.OwnerToken, true, true, cfg.OwnerRateLimit)
	}
	return out
}

// Authenticate returns the caller whose credential is token: a principal's
// token (origin OriginAPI) or a WebShell credential (OriginUser). Every
// configured credential is compared, in constant time, whatever matches
// first.
func (h *Host) Authenticate(token string) (Caller, bool) {
	if token == "" {
		return Caller{}, false
	}
	c, p := h.gen().authenticate(sha256.Sum256([]byte(token)))
	return c, p != nil
}

// authenticate returns the caller whose credential has digest d and its
// principal's entry, or nil when none has.
func (g *generation) authenticate(d [sha256.Size]byte) (Caller, *principalToken) {
	var (
		found Caller
		entry *principalToken
	)
	for i := range g.principals {
		p := &g.principals[i]
		api := subtle.ConstantTimeCompare(d[:], p.digest[:])
		ws := subtle.ConstantTimeCompare(d[:], p.webShell[:])
		if api|ws == 1 {
			found = Caller{Principal: p.principal, Origin: OriginAPI, Admin: p.admin, digest: d}
			if ws == 1 {
				found.Origin = OriginUser
			}
			entry = p
		}
	}
	return found, entry
}

// ErrNoWebShell is returned by WebShellSignIn for a principal whose block
// says `webshell = false`.
var ErrNoWebShell = errors.New("this principal may not sign in to the WebShell (webshell = false in its principal block); use its token with the API")

// errNotAToken is returned by WebShellSignIn for a credential that is not a
// principal's token (a WebShell credential, or one that is not accepted).
var errNotAToken = errors.New("only a principal's token can be exchanged for a WebShell credential")

// WebShellSignIn exchanges a principal's token for its WebShell
// credential, with which requests have the origin OriginUser. The
// credential is valid while the token is: a reload that rotates or removes
// the token revokes it.
func (h *Host) WebShellSignIn(token string) (string, Caller, error) {
	c, p := h.gen().authenticate(sha256.Sum256([]byte(token)))
	switch {
	case p == nil || c.Origin != OriginAPI:
		return "", Caller{}, errNotAToken
	case p.webShell == [sha256.Size]byte{}:
		return "", Caller{}, ErrNoWebShell
	}
	cred := webShellCredential(h.credKey, c.digest)
	c.Origin, c.digest = OriginUser, sha256.Sum256([]byte(cred))
	return cred, c, nil
}

// StillValid reports whether c's credential still authenticates the same
// caller (same principal, groups and admin rights) under the current
// config. A long-lived request (an event stream) checks it from time to
// time; a reload ends the streams for which it is false. A caller built
// in-process, without a credential, stays valid.
func (h *Host) StillValid(c Caller) bool { return h.gen().stillValid(c) }

func (g *generation) stillValid(c Caller) bool {
	if c.digest == ([sha256.Size]byte{}) {
		return true
	}
	now, p := g.authenticate(c.digest)
	return p != nil && now.Name == c.Name && (now.Origin == c.Origin || c.Origin == OriginGateway && now.Origin == OriginAPI) && now.Admin == c.Admin && slices.Equal(now.Groups, c.Groups)
}

// HasPrincipals reports whether any principal can authenticate.
func (h *Host) HasPrincipals() bool { return len(h.gen().principals) > 0 }

// rateLimitOf returns the call limits of the principal named name in g
// (none for a principal the generation does not know: an in-process caller).
func (g *generation) rateLimitOf(name string) config.RateLimit {
	for _, p := range g.principals {
		if p.principal.Name == name {
			return p.limit
		}
	}
	return config.RateLimit{}
}
