package oauth

import (
	"errors"
	"fmt"
	"strings"
)

// ErrConflict is returned by [Store.SaveCredential] when the stored
// generation moved on.
var ErrConflict = errors.New("oauth: credential changed concurrently")

// AuthRequiredError says a server needs a (new) sign-in of a principal
// before it answers: it challenged the request and no stored credential,
// refresh or interactive sign-in could answer it. Its text is meant for
// the user and holds no secret.
type AuthRequiredError struct {
	Server string
	// Principal is whose sign-in is needed (SharedPrincipal for a shared
	// credential).
	Principal string
	// Reason says why: "not signed in", "the refresh token was refused",
	// "insufficient_scope", ...
	Reason string
	// Scopes are the scopes the server asked for, when it said.
	Scopes []string
}

// Code is the machine-readable kind of the error.
const CodeAuthRequired = "auth_required"

func (e *AuthRequiredError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "auth_required: server %q needs you to sign in (%s)", e.Server, e.Reason)
	if len(e.Scopes) > 0 {
		fmt.Fprintf(&b, " with scopes %s", strings.Join(e.Scopes, " "))
	}
	fmt.Fprintf(&b, "; run `mcphost auth login %s` or use Sign in on its card in the WebShell", e.Server)
	return b.String()
}

// AuthError is an authorization failure that signing in again will not
// fix as it is: the server's metadata is inconsistent (a resource or
// issuer mismatch), the authorization server refuses the client, a stored
// row does not open. The server's state is auth_error.
type AuthError struct {
	Server string
	Err    error
}

func (e *AuthError) Error() string {
	return fmt.Sprintf("auth_error: server %q: %v", e.Server, e.Err)
}

func (e *AuthError) Unwrap() error { return e.Err }
