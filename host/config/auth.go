package config

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// Values of an auth block's `type` and `tokens`.
const (
	AuthOAuth             = "oauth"              // authorization code with PKCE (default)
	AuthClientCredentials = "client_credentials" // machine to machine
	TokensPrincipal       = "principal"          // one credential per principal (default)
	TokensShared          = "shared"             // one credential for everyone, managed by admins
)

// authBlock is a server's `auth` block: how mcphost signs in to a remote
// server that asks for OAuth.
type authBlock struct {
	DeclRange hcl.Range `hcl:",def_range"`

	// type: "oauth" (default: the authorization code flow, signed in by a
	// user) | "client_credentials" (machine to machine; needs client_id
	// and client_secret; the credential is shared).
	Type      hcl.Expression `hcl:"type,optional"`
	TypeRange hcl.Range      `hcl:"type,attr_value_range"`
	// tokens: "principal" (default: each principal signs in for itself) |
	// "shared" (one sign-in for every principal, by an admin).
	Tokens      hcl.Expression `hcl:"tokens,optional"`
	TokensRange hcl.Range      `hcl:"tokens,attr_value_range"`
	// admins: principal or group names that may sign a shared credential
	// in or out (the owner always may).
	Admins      hcl.Expression `hcl:"admins,optional"`
	AdminsRange hcl.Range      `hcl:"admins,attr_value_range"`
	// client_id, client_secret: a client registered with the server's
	// authorization server beforehand (else mcphost registers one itself,
	// or uses client_metadata_url). Prefer env() or file() for the secret.
	ClientID          hcl.Expression `hcl:"client_id,optional"`
	ClientIDRange     hcl.Range      `hcl:"client_id,attr_value_range"`
	ClientSecret      hcl.Expression `hcl:"client_secret,optional"`
	ClientSecretRange hcl.Range      `hcl:"client_secret,attr_value_range"`
	// client_issuer: the authorization server the pre-registered client
	// belongs to; mcphost refuses to show it to another one.
	ClientIssuer      hcl.Expression `hcl:"client_issuer,optional"`
	ClientIssuerRange hcl.Range      `hcl:"client_issuer,attr_value_range"`
	// client_metadata_url: a client ID metadata document (an https URL with
	// a path) used when the authorization server supports them.
	ClientMetadataURL      hcl.Expression `hcl:"client_metadata_url,optional"`
	ClientMetadataURLRange hcl.Range      `hcl:"client_metadata_url,attr_value_range"`
	// scopes: the scopes to ask for, instead of those the server names.
	Scopes hcl.Expression `hcl:"scopes,optional"`
}

// Auth is a server's `auth` block, decoded.
type Auth struct {
	Type              string // AuthOAuth | AuthClientCredentials
	Tokens            string // TokensPrincipal | TokensShared
	Admins            []string
	ClientID          string
	ClientSecret      string
	ClientIssuer      string
	ClientMetadataURL string
	Scopes            []string
	DeclRange         hcl.Range
}

// decodeAuth decodes the server's auth blocks (at most one) into s.Auth.
func (l *loader) decodeAuth(b *serverBlock, s *Server, headers map[string]string) {
	if len(b.Auth) == 0 {
		return
	}
	for _, dup := range b.Auth[1:] {
		l.add(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Duplicate auth block",
			Detail:  fmt.Sprintf("Server %q has more than one auth block; the first is at %s. Keep one.", b.Name, b.Auth[0].DeclRange),
			Subject: dup.DeclRange.Ptr()})
	}
	ab := b.Auth[0]
	a := &Auth{Type: AuthOAuth, Tokens: TokensPrincipal, DeclRange: ab.DeclRange}
	ok := true
	bad := func(summary, detail string, rng hcl.Range) {
		l.add(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: rng.Ptr()})
		ok = false
	}
	if s.Transport == TransportStdio {
		bad("Auth on a stdio server", fmt.Sprintf("Server %q runs a local command; OAuth applies only to remote (url) servers. A stdio server takes its credentials from env; remove the auth block.", b.Name), ab.DeclRange)
	}
	for k := range headers {
		if strings.EqualFold(k, "Authorization") {
			bad("Conflicting authorization", fmt.Sprintf("Server %q sets an Authorization header and an auth block; mcphost would not know which to send. Remove one of them.", b.Name), ab.DeclRange)
		}
	}
	if v, st := l.evalString(ab.Type, "type"); st == valid {
		switch v {
		case AuthOAuth, AuthClientCredentials:
			a.Type = v
		default:
			bad("Invalid auth type", fmt.Sprintf("The auth type %q is not known. Use %q (the default: users sign in) or %q (machine to machine, with client_id and client_secret).", v, AuthOAuth, AuthClientCredentials), ab.TypeRange)
		}
	}
	if v, st := l.evalString(ab.Tokens, "tokens"); st == valid {
		switch v {
		case TokensPrincipal, TokensShared:
			a.Tokens = v
		default:
			bad("Invalid tokens", fmt.Sprintf("tokens = %q is not known. Use %q (the default: each principal signs in for itself) or %q (one sign-in for everyone, managed by admins).", v, TokensPrincipal, TokensShared), ab.TokensRange)
		}
	}
	admins, _ := l.evalStringList(ab.Admins, "admins")
	a.Admins = admins
	idSt, secretSt := absent, absent
	a.ClientID, idSt = l.evalString(ab.ClientID, "client_id")
	a.ClientSecret, secretSt = l.evalString(ab.ClientSecret, "client_secret")
	issuer, issuerSt := l.evalString(ab.ClientIssuer, "client_issuer")
	cimd, cimdSt := l.evalString(ab.ClientMetadataURL, "client_metadata_url")
	a.Scopes, _ = l.evalStringList(ab.Scopes, "scopes")
	if idSt == valid && strings.TrimSpace(a.ClientID) == "" {
		bad("Empty client_id", fmt.Sprintf("The client_id of server %q is empty. Give the client ID registered with the authorization server, or remove it to let mcphost register a client.", b.Name), ab.ClientIDRange)
	}
	if secretSt != absent && idSt == absent {
		bad("Client secret without client_id", fmt.Sprintf("Server %q sets client_secret but no client_id; a secret belongs to a pre-registered client. Add its client_id.", b.Name), ab.ClientSecretRange)
	}
	if idSt != absent && cimdSt != absent {
		bad("Conflicting client registrations", fmt.Sprintf("Server %q sets both client_id and client_metadata_url. Use a pre-registered client or a client ID metadata document, not both.", b.Name), ab.ClientMetadataURLRange)
	}
	if cimdSt == valid {
		if u, err := url.Parse(cimd); err != nil || u.Scheme != "https" || u.Host == "" || strings.Trim(u.Path, "/") == "" {
			bad("Invalid client metadata URL", fmt.Sprintf("The client_metadata_url of server %q must be an https URL with a path, such as \"https://example.com/mcphost/client.json\".", b.Name), ab.ClientMetadataURLRange)
		} else {
			a.ClientMetadataURL = cimd
		}
	}
	if issuerSt == valid {
		if err := checkURL(issuer); err != nil {
			bad("Invalid client issuer", fmt.Sprintf("The client_issuer of server %q must be the authorization server's issuer URL, such as \"https://auth.example.com\".", b.Name), ab.ClientIssuerRange)
		} else {
			a.ClientIssuer = issuer
		}
	}
	if a.Type == AuthClientCredentials {
		if idSt == absent || secretSt == absent {
			bad("Missing client credentials", fmt.Sprintf("Server %q uses type = %q, which needs client_id and client_secret of a client registered for the client credentials grant.", b.Name, AuthClientCredentials), ab.DeclRange)
		}
		a.Tokens = TokensShared
	}
	if a.Tokens == TokensShared && a.Type == AuthOAuth && len(a.Admins) == 0 {
		l.add(&hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Shared credential without admins",
			Detail:  fmt.Sprintf("Server %q shares one sign-in among all principals but names no admins, so only the owner may sign it in or out. Add admins = [\"GROUP\"] to let others.", b.Name),
			Subject: ab.DeclRange.Ptr()})
	}
	if len(a.Admins) > 0 && a.Tokens != TokensShared {
		l.add(&hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Admins without a shared credential",
			Detail:  fmt.Sprintf("Server %q names admins, but each principal signs in for itself (tokens = %q); admins only matter with tokens = %q.", b.Name, TokensPrincipal, TokensShared),
			Subject: ab.AdminsRange.Ptr()})
	}
	if ok {
		s.Auth = a
	}
}
