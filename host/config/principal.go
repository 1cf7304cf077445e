package config

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
)

// decodePrincipals reads the top-level rate limits (the owner's, and the
// default of every principal block without its own), then checks every
// `principal` block and that their names and tokens are unique.
func (l *loader) decodePrincipals(cfg *Config, f *fileSchema) {
	names := map[string]hcl.Range{}
	type tokenOwner struct {
		name string
		rng  hcl.Range
	}
	tokens := map[string]tokenOwner{}
	topLimit, topSet := l.decodeRateLimits(f.RateLimit, "The configuration")
	if topSet {
		cfg.OwnerRateLimit = topLimit
	} else {
		topLimit = DefaultRateLimit
	}
	for _, b := range f.Principals {
		p, tokenOK := l.decodePrincipal(b, topLimit)
		if first, dup := names[p.Name]; dup {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Duplicate principal name",
				Detail: fmt.Sprintf("A principal named %q is already defined at %s. Principal names must be unique; rename or remove one of the blocks.",
					p.Name, fileLine(first)),
				Subject: b.NameRange.Ptr(),
			})
		} else {
			names[p.Name] = b.NameRange
		}
		if tokenOK {
			if first, dup := tokens[p.Token]; dup {
				l.add(&hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Duplicate token",
					Detail: fmt.Sprintf("Principal %q uses the same token as principal %q (%s). Each principal needs its own token, or the host cannot tell them apart; give one of them a new token.",
						p.Name, first.name, fileLine(first.rng)),
					Subject: b.TokenRange.Ptr(),
				})
			} else {
				tokens[p.Token] = tokenOwner{name: p.Name, rng: b.TokenRange}
			}
		}
		cfg.Principals = append(cfg.Principals, p)
	}
}

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
			if IsExampleToken(token) {
				l.add(&hcl.Diagnostic{
					Severity: hcl.DiagWarning,
					Summary:  "Example token",
					Detail: fmt.Sprintf("The token of principal %q is a placeholder from mcphost's shipped examples, which anyone can read; `mcphost serve` refuses it. Set the environment variable the config reads, or give %q a token of its own (`openssl rand -hex 32`), and drop the placeholder from env().",
						b.Name, b.Name),
					Subject: b.TokenRange.Ptr(),
				})
			}
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

// exampleTokens are the placeholder tokens of the shipped examples
// (examples/hcl, the README and docs): they let an example validate on a fresh
// checkout, and anyone can read them (TestExampleTokensAreKnown keeps
// this list whole).
var exampleTokens = []string{
	"placeholder-agent-token-replace-me",
	"placeholder-alice-token-replace-me",
	"placeholder-bob-token-replace-me",
	"placeholder-ci-token-replace-me",
}

// IsExampleToken reports whether tok is the placeholder token of one of
// mcphost's shipped examples: a daemon must not accept it.
func IsExampleToken(tok string) bool { return slices.Contains(exampleTokens, tok) }
