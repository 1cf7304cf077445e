package oauth

import (
	"context"
	"io"
	"net/http"
	"time"

	"golang.org/x/oauth2"
)

// Prompt is an interactive sign-in a call asks for: its caller opens
// Flow.LaunchURL (the user does) and the call continues once signed in.
type Prompt struct {
	Server string
	Flow   Flow
	Reason string
	Scopes []string
}

// Prompter is told of a sign-in a call waits for.
type Prompter func(ctx context.Context, p Prompt)

type prompterKey struct{}

// WithPrompter marks ctx as a call whose caller can sign in now: a
// challenge that a refresh cannot answer starts a sign-in (bounded by
// wait) instead of failing at once with auth_required.
func WithPrompter(ctx context.Context, p Prompter, wait time.Duration) context.Context {
	return context.WithValue(ctx, prompterKey{}, prompterValue{p, wait})
}

type prompterValue struct {
	p    Prompter
	wait time.Duration
}

// Transport returns the round tripper of the HTTP client of one upstream
// session: it sends the credential of (server, principal) — principal is
// ignored for a shared credential — refreshes it once on a 401, checks the
// issuer, runs a sign-in when the call's context has a prompter, and
// otherwise fails the request with an *AuthRequiredError (or *AuthError).
func (m *Manager) Transport(server, principal string, base http.RoundTripper) http.RoundTripper {
	return &transport{m: m, server: server, principal: principal, base: base}
}

type transport struct {
	m                 *Manager
	server, principal string
	base              http.RoundTripper
}

func (t *transport) send(req *http.Request, tok *oauth2.Token) (*http.Response, error) {
	r := req.Clone(req.Context())
	if req.Body != nil && req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = body
	}
	if tok != nil {
		r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	}
	return t.base.RoundTrip(r)
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.roundTrip(req)
	if err != nil {
		switch err.(type) {
		case *AuthRequiredError, *AuthError:
			t.m.noteFailure(t.server, t.principal, err)
		}
	}
	return resp, err
}

func (t *transport) roundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	s, ok := t.m.server(t.server)
	if !ok {
		return t.base.RoundTrip(req)
	}
	c := t.m.credential(t.server, principalKey(s, t.principal))
	tok, err := c.token(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := t.send(req, tok)
	if err != nil || !challenged(resp) {
		return resp, err
	}
	ch := newChallenge(req, resp)
	drain(resp)
	c.noteChallenge(ch)

	if resp.StatusCode == http.StatusUnauthorized && tok != nil {
		// A refused token: is the authorization server still the same
		// (SEP-2352)? Then refresh once and try again.
		if d, err := c.discover(ctx, s, ch); err == nil {
			c.checkIssuer(ctx, d)
		}
		if c.forceRefresh(ctx, tok) {
			if tok2, err := c.token(ctx); err == nil && tok2 != nil {
				resp, err = t.send(req, tok2)
				if err != nil || !challenged(resp) {
					return resp, err
				}
				ch = newChallenge(req, resp)
				drain(resp)
				c.noteChallenge(ch)
			}
		}
	}
	if s.Type == TypeClientCredentials {
		if err := c.authorize(ctx, s, ch, "", nil); err != nil {
			return nil, err
		}
		return t.retry(ctx, c, req)
	}
	pv, _ := ctx.Value(prompterKey{}).(prompterValue)
	// A shared credential is signed in by its admins only, never from
	// someone's call.
	if pv.p != nil && c.principal != "" && c.principal != SharedPrincipal {
		aerr := c.required(ch)
		if _, ok := aerr.(*AuthRequiredError); !ok {
			return nil, aerr
		}
		wctx, cancel := context.WithTimeout(ctx, pv.wait)
		defer cancel()
		code, scopes, _ := ch.params()
		reason := "not signed in"
		if code == "insufficient_scope" {
			reason = "insufficient_scope"
		}
		err := c.authorize(wctx, s, ch, t.principal, func(f Flow) {
			pv.p(ctx, Prompt{Server: t.server, Flow: f, Reason: reason, Scopes: scopes})
		})
		if err != nil {
			return nil, err
		}
		return t.retry(ctx, c, req)
	}
	return nil, c.required(ch)
}

// retry sends the request once more with the new token; a second
// challenge is an error, never a loop.
func (t *transport) retry(ctx context.Context, c *Credential, req *http.Request) (*http.Response, error) {
	tok, err := c.token(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := t.send(req, tok)
	if err != nil || !challenged(resp) {
		return resp, err
	}
	ch := newChallenge(req, resp)
	drain(resp)
	c.noteChallenge(ch)
	return nil, c.required(ch)
}

// challenged reports whether a response asks for (other) authorization:
// any 401, or a 403 with a Bearer insufficient_scope challenge.
func challenged(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		return true
	case http.StatusForbidden:
		return isInsufficientScope(&challenge{header: resp.Header})
	}
	return false
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
}
