package host

import (
	"github.com/mcphost/mcphost/host/internal/identity"
)

// Who is calling: package identity. The doors name these through host.

// Principal is an authenticated caller: a `principal` block of the config
// or the daemon's generated owner.
type Principal = identity.Principal

// Caller is an authenticated request: its principal, the origin its
// credential implies, and whether the principal is an admin.
type Caller = identity.Caller

// ClientInfo is an MCP client as it names itself (its clientInfo): what
// policies see as `client`. It is the client's claim, not a proof.
type ClientInfo = identity.ClientInfo

// OwnerName is the principal of the daemon's generated owner token.
const OwnerName = identity.OwnerName

// Call origins.
const (
	OriginUser    = identity.OriginUser    // a person, through the WebShell
	OriginAPI     = identity.OriginAPI     // any other API client
	OriginApp     = identity.OriginApp     // an MCP App, through the WebShell
	OriginGateway = identity.OriginGateway // an MCP client through the gateway
)

// ErrNoWebShell is returned by WebShellSignIn for a principal whose block
// says `webshell = false`.
var ErrNoWebShell = identity.ErrNoWebShell

// Authenticate returns the caller whose credential is token: a principal's
// token (origin OriginAPI) or a WebShell credential (OriginUser).
func (h *Host) Authenticate(token string) (Caller, bool) {
	return h.gen().Principals.Authenticate(token)
}

// WebShellSignIn exchanges a principal's token for its WebShell
// credential, with which requests have the origin OriginUser. The
// credential is valid while the token is: a reload that rotates or removes
// the token revokes it.
func (h *Host) WebShellSignIn(token string) (string, Caller, error) {
	return h.gen().Principals.SignIn(token)
}

// StillValid reports whether c's credential still authenticates the same
// caller (same principal, groups and admin rights) under the current
// config. A long-lived request (an event stream) checks it from time to
// time; a reload ends the streams for which it is false. A caller built
// in-process, without a credential, stays valid.
func (h *Host) StillValid(c Caller) bool { return h.gen().Principals.StillValid(c) }
