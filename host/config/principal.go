package config

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
)

// decodePrincipal validates one principal block. ok reports whether the
// token is usable, for the duplicate check.
func (l *loader) decodePrincipal(b *principalBlock, limit RateLimit) (p Principal, ok bool) {
	p = Principal{Name: b.Name, RateLimit: limit, NameRange: b.NameRange, DeclRange: b.DeclRange}
	if strings.TrimSpace(b.Name) == "" {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid principal name",
			Detail:   "The principal name is empty. Give the principal a name, such as principal \"alice\".",
			Subject:  b.NameRange.Ptr(),
		})
	}

	switch token, st := l.evalString(b.Token, "token"); st {
	case absent:
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Missing required argument",
			Detail:   fmt.Sprintf("The argument \"token\" is required, but principal %q has none. Set token = env(\"NAME\") to read the bearer token from the environment.", b.Name),
			Subject:  b.DeclRange.Ptr(),
		})
	case valid:
		if n := utf8.RuneCountInString(token); n < MinTokenLength {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Token too short",
				Detail: fmt.Sprintf("The token of principal %q has %d characters; at least %d are required. It is a bearer credential: anyone who has it acts as %q, so it must be hard to guess. Generate one with `openssl rand -hex 32`.",
					b.Name, n, MinTokenLength, b.Name),
				Subject: b.TokenRange.Ptr(),
			})
		} else {
			p.Token, ok = token, true
		}
	}

	if groups, st := l.evalStringList(b.Groups, "groups"); st == valid {
		p.Groups = groups
	}
	if v, st := l.evalBool(b.WebShell, "webshell"); st == valid {
		p.APIOnly = !v
	}
	if r, set := l.decodeRateLimits(b.RateLimit, fmt.Sprintf("Principal %q", b.Name)); set {
		p.RateLimit = r
	}
	return p, ok
}
