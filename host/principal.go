package host

import (
	"crypto/sha256"
	"crypto/subtle"
)

// Principal is an authenticated caller: a `principal` block of the config or
// the daemon's generated owner.
type Principal struct {
	Name   string   `json:"name"`
	Groups []string `json:"groups"`
}

// principalToken is a principal with the hash of its token. Tokens are
// compared as SHA-256 digests in constant time, so neither the comparison
// nor the token's length leaks through timing.
type principalToken struct {
	principal Principal
	digest    [sha256.Size]byte
}

// Authenticate returns the principal whose token equals token. Every
// configured token is compared, in constant time, whatever matches first.
func (h *Host) Authenticate(token string) (Principal, bool) {
	if token == "" {
		return Principal{}, false
	}
	d := sha256.Sum256([]byte(token))
	var found Principal
	ok := 0
	for _, p := range h.gen().principals {
		if subtle.ConstantTimeCompare(d[:], p.digest[:]) == 1 {
			found = p.principal
			ok = 1
		}
	}
	return found, ok == 1
}

// HasPrincipals reports whether any principal can authenticate.
func (h *Host) HasPrincipals() bool { return len(h.gen().principals) > 0 }
