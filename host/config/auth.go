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

// decodeAuth decodes the server's auth blocks (at most one) into s.Auth:
// where the block may be, its mode, its client and the admins, each in a
// method of authDecoder, in the order they depend on each other (the
// client checks need the type). s.Auth stays nil when any reported an
// error.
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
	d := &authDecoder{l: l, b: b, ab: ab, ok: true,
		a: &Auth{Type: AuthOAuth, Tokens: TokensPrincipal, DeclRange: ab.DeclRange}}
	d.checkPlace(s.Transport, headers)
	d.decodeMode()
	d.a.Admins, _ = l.evalStringList(ab.Admins, "admins")
	d.readClient()
	d.checkClient()
	d.checkClientCredentials()
	d.warnAdmins()
	if d.ok {
		s.Auth = d.a
	}
}

// authDecoder decodes the first auth block of a server.
type authDecoder struct {
	l  *loader
	b  *serverBlock
	ab *authBlock
	a  *Auth
	ok bool // no error reported yet

	// What readClient read, for the checks after it.
	idSt, secretSt, issuerSt, cimdSt valState
	issuer, cimd                     string
}

// bad reports an error in the auth block, which is then not used.
func (d *authDecoder) bad(summary, detail string, rng hcl.Range) {
	d.l.add(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: rng.Ptr()})
	d.ok = false
}

// checkPlace reports an auth block on a server that cannot use one: a
// stdio server, or one that sends its own Authorization header.
func (d *authDecoder) checkPlace(transport string, headers map[string]string) {
	switch transport {
	case TransportStdio:
		d.bad("Auth on a stdio server", fmt.Sprintf("Server %q runs a local command; OAuth applies only to remote (url) servers. A stdio server takes its credentials from env; remove the auth block.", d.b.Name), d.ab.DeclRange)
	case TransportWasm:
		d.bad("Auth on a WebAssembly server", fmt.Sprintf("Server %q runs a WebAssembly module inside mcphost; OAuth applies only to remote (url) servers. A module takes its credentials from env; remove the auth block.", d.b.Name), d.ab.DeclRange)
	}
	for k := range headers {
		if strings.EqualFold(k, "Authorization") {
			d.bad("Conflicting authorization", fmt.Sprintf("Server %q sets an Authorization header and an auth block; mcphost would not know which to send. Remove one of them.", d.b.Name), d.ab.DeclRange)
		}
	}
}

// decodeMode reads `type` and `tokens`.
func (d *authDecoder) decodeMode() {
	if v, st := d.l.evalString(d.ab.Type, "type"); st == valid {
		switch v {
		case AuthOAuth, AuthClientCredentials:
			d.a.Type = v
		default:
			d.bad("Invalid auth type", fmt.Sprintf("The auth type %q is not known. Use %q (the default: users sign in) or %q (machine to machine, with client_id and client_secret).", v, AuthOAuth, AuthClientCredentials), d.ab.TypeRange)
		}
	}
	if v, st := d.l.evalString(d.ab.Tokens, "tokens"); st == valid {
		switch v {
		case TokensPrincipal, TokensShared:
			d.a.Tokens = v
		default:
			d.bad("Invalid tokens", fmt.Sprintf("tokens = %q is not known. Use %q (the default: each principal signs in for itself) or %q (one sign-in for everyone, managed by admins).", v, TokensPrincipal, TokensShared), d.ab.TokensRange)
		}
	}
}

// readClient evaluates the attributes of the client mcphost signs in as,
// and scopes; checkClient checks them.
func (d *authDecoder) readClient() {
	l, ab := d.l, d.ab
	d.a.ClientID, d.idSt = l.evalString(ab.ClientID, "client_id")
	d.a.ClientSecret, d.secretSt = l.evalString(ab.ClientSecret, "client_secret")
	d.issuer, d.issuerSt = l.evalString(ab.ClientIssuer, "client_issuer")
	d.cimd, d.cimdSt = l.evalString(ab.ClientMetadataURL, "client_metadata_url")
	d.a.Scopes, _ = l.evalStringList(ab.Scopes, "scopes")
}

// checkClient checks the client: a pre-registered one (client_id, with
// client_secret and client_issuer) or a client ID metadata document.
func (d *authDecoder) checkClient() {
	name, ab := d.b.Name, d.ab
	if d.idSt == valid && strings.TrimSpace(d.a.ClientID) == "" {
		d.bad("Empty client_id", fmt.Sprintf("The client_id of server %q is empty. Give the client ID registered with the authorization server, or remove it to let mcphost register a client.", name), ab.ClientIDRange)
	}
	if d.secretSt != absent && d.idSt == absent {
		d.bad("Client secret without client_id", fmt.Sprintf("Server %q sets client_secret but no client_id; a secret belongs to a pre-registered client. Add its client_id.", name), ab.ClientSecretRange)
	}
	if d.idSt != absent && d.cimdSt != absent {
		d.bad("Conflicting client registrations", fmt.Sprintf("Server %q sets both client_id and client_metadata_url. Use a pre-registered client or a client ID metadata document, not both.", name), ab.ClientMetadataURLRange)
	}
	if d.cimdSt == valid {
		if u, err := url.Parse(d.cimd); err != nil || u.Scheme != "https" || u.Host == "" || strings.Trim(u.Path, "/") == "" {
			d.bad("Invalid client metadata URL", fmt.Sprintf("The client_metadata_url of server %q must be an https URL with a path, such as \"https://example.com/mcphost/client.json\".", name), ab.ClientMetadataURLRange)
		} else {
			d.a.ClientMetadataURL = d.cimd
		}
	}
	if d.issuerSt == valid {
		if err := checkURL(d.issuer); err != nil {
			d.bad("Invalid client issuer", fmt.Sprintf("The client_issuer of server %q must be the authorization server's issuer URL, such as \"https://auth.example.com\".", name), ab.ClientIssuerRange)
		} else {
			d.a.ClientIssuer = d.issuer
		}
	}
}

// checkClientCredentials checks that type "client_credentials" has a
// client with a secret; its credential is always shared.
func (d *authDecoder) checkClientCredentials() {
	if d.a.Type != AuthClientCredentials {
		return
	}
	if d.idSt == absent || d.secretSt == absent {
		d.bad("Missing client credentials", fmt.Sprintf("Server %q uses type = %q, which needs client_id and client_secret of a client registered for the client credentials grant.", d.b.Name, AuthClientCredentials), d.ab.DeclRange)
	}
	d.a.Tokens = TokensShared
}

// warnAdmins warns when admins and a shared credential do not go together.
func (d *authDecoder) warnAdmins() {
	a := d.a
	if a.Tokens == TokensShared && a.Type == AuthOAuth && len(a.Admins) == 0 {
		d.l.add(&hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Shared credential without admins",
			Detail:  fmt.Sprintf("Server %q shares one sign-in among all principals but names no admins, so only the owner may sign it in or out. Add admins = [\"GROUP\"] to let others.", d.b.Name),
			Subject: d.ab.DeclRange.Ptr()})
	}
	if len(a.Admins) > 0 && a.Tokens != TokensShared {
		d.l.add(&hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Admins without a shared credential",
			Detail:  fmt.Sprintf("Server %q names admins, but each principal signs in for itself (tokens = %q); admins only matter with tokens = %q.", d.b.Name, TokensPrincipal, TokensShared),
			Subject: d.ab.AdminsRange.Ptr()})
	}
}
