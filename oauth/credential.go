package oauth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/sync/singleflight"
)

// Bounds of a credential.
const (
	// startWait is how long StartSignIn waits for the launch URL.
	startWait = 15 * time.Second
	// StepUpWindow and MaxStepUps cap the authorizations for one set of
	// challenged scopes: after MaxStepUps within the window, a further
	// insufficient_scope is an auth_error, not another sign-in.
	StepUpWindow = 10 * time.Minute
	MaxStepUps   = 2
	// expiryDelta is how long before its expiry a token is refreshed; a
	// token that lives shorter than twice this is refreshed at half its life.
	expiryDelta = 10 * time.Second
)

// challenge is what a server answered an unauthorized request with.
type challenge struct {
	url    string
	status int
	header http.Header // WWW-Authenticate only
}

func newChallenge(req *http.Request, resp *http.Response) *challenge {
	return &challenge{url: req.URL.String(), status: resp.StatusCode,
		header: http.Header{"Www-Authenticate": slices.Clone(resp.Header.Values("WWW-Authenticate"))}}
}

func (ch *challenge) params() (errCode string, scopes []string, metadata string) {
	cs, err := oauthex.ParseWWWAuthenticate(ch.header.Values("WWW-Authenticate"))
	if err != nil {
		return "", nil, ""
	}
	for _, c := range cs {
		if c.Scheme != "bearer" {
			continue
		}
		if errCode == "" {
			errCode = c.Params["error"]
		}
		if scopes == nil && c.Params["scope"] != "" {
			scopes = strings.Fields(c.Params["scope"])
		}
		if metadata == "" {
			metadata = c.Params["resource_metadata"]
		}
	}
	return errCode, scopes, metadata
}

func (ch *challenge) request() *http.Request {
	req, _ := http.NewRequest(http.MethodPost, ch.url, nil)
	return req
}

func (ch *challenge) response() *http.Response {
	return &http.Response{StatusCode: ch.status, Header: ch.header.Clone(), Body: io.NopCloser(strings.NewReader(""))}
}

// Credential is the sign-in of one principal (or the shared one) to one
// server: the stored tokens, their refresh, and the authorizations that
// replace them.
type Credential struct {
	m         *Manager
	server    string
	principal string

	authz singleflight.Group

	mu        sync.Mutex // guards the fields below; held across a refresh
	loaded    bool
	rec       *Record
	tok       *oauth2.Token
	secret    string // the client secret, opened
	loadErr   error
	pending   *flow
	opened    chan struct{}          // closed when the next pending flow is set
	authzLog  map[string][]time.Time // scope set -> authorization times
	authzErrs map[string]string      // scope set -> why the cap stopped it
}

// loadLocked reads the stored credential once.
func (c *Credential) loadLocked(ctx context.Context) error {
	if c.loaded {
		return c.loadErr
	}
	c.loaded = true
	rec, err := c.m.opts.Store.LoadCredential(ctx, c.server, c.principal)
	if err != nil {
		c.loaded = false
		return fmt.Errorf("oauth: loading the credential of %q: %w", c.server, err)
	}
	if rec == nil {
		return nil
	}
	if err := c.openLocked(rec); err != nil {
		c.loadErr = &AuthError{Server: c.server, Err: err}
		c.m.opts.Logger.Error("stored OAuth credential rejected", "server", c.server, "principal", c.principal, "err", err)
		return c.loadErr
	}
	return nil
}

// openLocked makes rec the current credential, its secrets opened.
func (c *Credential) openLocked(rec *Record) error {
	tok, cs, err := c.open(rec)
	if err != nil {
		return err
	}
	c.rec = rec
	c.secret = cs
	c.tok = tok
	return nil
}

// open returns rec's tokens and client secret, opened.
func (c *Credential) open(rec *Record) (*oauth2.Token, string, error) {
	s := c.m.opts.Sealer
	at, err := s.Open(rec.AccessToken, tableTokens, rec.Server, rec.Principal, rec.Issuer)
	if err != nil {
		return nil, "", err
	}
	rt, err := s.Open(rec.RefreshToken, tableTokens, rec.Server, rec.Principal, rec.Issuer)
	if err != nil {
		return nil, "", err
	}
	cs, err := s.Open(rec.ClientSecret, tableClients, rec.Server, rec.Principal, rec.Issuer)
	if err != nil {
		return nil, "", err
	}
	return &oauth2.Token{AccessToken: at, RefreshToken: rt, TokenType: "Bearer", Expiry: rec.Expiry}, cs, nil
}

// fresh reports whether tok can be used now without a refresh.
func fresh(tok *oauth2.Token, updated, now time.Time) bool {
	if tok == nil || tok.AccessToken == "" {
		return false
	}
	if tok.Expiry.IsZero() {
		return true
	}
	delta := expiryDelta
	if life := tok.Expiry.Sub(updated); life < 2*expiryDelta {
		delta = life / 2
	}
	return now.Before(tok.Expiry.Add(-delta))
}

// token returns the access token to send, refreshing it first when it
// expired and a refresh token is held; nil when there is none to send.
func (c *Credential) token(ctx context.Context) (*oauth2.Token, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.loadLocked(ctx); err != nil {
		return nil, err
	}
	if c.tok == nil {
		return nil, nil
	}
	if fresh(c.tok, c.rec.UpdatedAt, time.Now()) {
		return c.tok, nil
	}
	if c.tok.RefreshToken == "" {
		return nil, nil // expired: the server's 401 asks for a new sign-in
	}
	if err := c.refreshLocked(ctx, false); err != nil {
		return nil, err
	}
	if c.tok == nil || !fresh(c.tok, c.rec.UpdatedAt, time.Now()) && c.tok.RefreshToken == "" {
		return nil, nil // dropped (refused), or expired with nothing to refresh it
	}
	return c.tok, nil
}

// forceRefresh refreshes once after the server refused used; it reports
// whether there is now another token to try.
func (c *Credential) forceRefresh(ctx context.Context, used *oauth2.Token) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tok == nil {
		return false
	}
	if used != nil && c.tok.AccessToken != used.AccessToken {
		return true // someone refreshed meanwhile
	}
	if c.tok.RefreshToken == "" {
		return false
	}
	held := c.tok.AccessToken
	if err := c.refreshLocked(ctx, true); err != nil {
		c.m.opts.Logger.Warn("forced OAuth refresh failed", "server", c.server, "principal", c.principal, "err", err)
		return false
	}
	return c.tok != nil && c.tok.AccessToken != held
}

// errGone says the stored credential vanished (signed out, or dropped by
// another replica) while this one still held it.
var errGone = errors.New("oauth: the stored credential is gone")

// refreshLocked brings the credential up to date, single flight across
// every replica of the store: under the store's lock on the credential
// ([Store.RefreshCredential]) it reads the stored row again; when another
// replica refreshed it meanwhile (its tokens differ from the ones held
// here) and it is fresh, that is the result and the authorization server
// is not asked. Otherwise it redeems the stored refresh token (with
// `resource`) and stores the new tokens before anyone uses them, in the
// same locked step. force refreshes even a token that looks fresh (the
// server refused it), unless another replica already replaced it.
//
// When the authorization server refuses the refresh token, the row is read
// again under the lock and deleted only when it still holds the refused
// token: a credential that another writer replaced meanwhile is kept and
// used. After a drop, c.tok is nil and the error is nil.
func (c *Credential) refreshLocked(ctx context.Context, force bool) error {
	held := *c.tok
	var (
		sent      string // the refresh token redeemed, "" when none was
		rotated   bool
		refused   error
		conflicts int
	)
again:
	rec, err := c.m.opts.Store.RefreshCredential(ctx, c.server, c.principal, func(cur *Record) (*Record, error) {
		if cur == nil {
			return nil, errGone
		}
		tok, secret, err := c.open(cur)
		if err != nil {
			return nil, &AuthError{Server: c.server, Err: err}
		}
		changed := tok.AccessToken != held.AccessToken || tok.RefreshToken != held.RefreshToken
		if fresh(tok, cur.UpdatedAt, time.Now()) && (changed || !force) {
			return cur, nil // another replica refreshed it: use theirs
		}
		if tok.RefreshToken == "" {
			return cur, nil // nothing to refresh it with
		}
		sent = tok.RefreshToken
		next, newTok, err := c.redeem(ctx, cur, tok, secret)
		if err != nil {
			return nil, err
		}
		rotated = newTok.RefreshToken != sent
		return next, nil
	})
	switch {
	case errors.Is(err, ErrConflict) && conflicts < 3:
		// The row changed under a write that the lock did not keep out
		// (another process on a SQLite file): read it again.
		conflicts++
		goto again
	case errors.Is(err, errGone):
		c.forgetLocked()
		return nil
	case err != nil:
		var te *TokenError
		if errors.As(err, &te) && te.Code != "" {
			refused = err
			break
		}
		return fmt.Errorf("oauth: refresh for %q: %w", c.server, err)
	}
	if refused != nil {
		return c.refusedLocked(ctx, sent, refused)
	}
	if rec == nil {
		c.forgetLocked()
		return nil
	}
	if err := c.openLocked(rec); err != nil {
		return &AuthError{Server: c.server, Err: err}
	}
	c.loaded, c.loadErr = true, nil
	if sent != "" {
		c.m.opts.Logger.Info("OAuth token refreshed", "server", c.server, "principal", c.principal, "rotated", rotated)
	} else {
		c.m.opts.Logger.Debug("OAuth token refreshed by another replica; using it", "server", c.server, "principal", c.principal)
	}
	return nil
}

// refusedLocked handles the authorization server's refusal of the refresh
// token sent: under the store's lock, the credential is deleted only when
// the stored row still holds that token; one that another writer replaced
// meanwhile (a replica whose refresh won) is kept and used.
func (c *Credential) refusedLocked(ctx context.Context, sent string, refused error) error {
	ctx = context.WithoutCancel(ctx)
	kept := false
	rec, err := c.m.opts.Store.RefreshCredential(ctx, c.server, c.principal, func(cur *Record) (*Record, error) {
		if cur == nil {
			return nil, nil
		}
		if tok, _, err := c.open(cur); err == nil && tok.RefreshToken != sent {
			kept = true
			return cur, nil
		}
		return nil, nil
	})
	if err != nil {
		return fmt.Errorf("oauth: refresh for %q: %w (and reading the credential again: %w)", c.server, refused, err)
	}
	if kept && rec != nil {
		c.m.opts.Logger.Warn("OAuth refresh refused, but another writer had already replaced the credential; using theirs", "server", c.server, "principal", c.principal, "err", refused)
		if err := c.openLocked(rec); err != nil {
			return &AuthError{Server: c.server, Err: err}
		}
		return nil
	}
	c.m.opts.Logger.Warn("OAuth refresh refused; the credential is dropped", "server", c.server, "principal", c.principal, "err", refused)
	c.forgetLocked()
	return nil
}

// redeem asks the authorization server of cur for new tokens with tok's
// refresh token and returns the record to store (sealed, its generation
// the next one) and the tokens.
func (c *Credential) redeem(ctx context.Context, cur *Record, tok *oauth2.Token, secret string) (*Record, *oauth2.Token, error) {
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}}
	if cur.Resource != "" {
		form.Set("resource", cur.Resource)
	}
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodPost, cur.TokenURL, nil)
	if err != nil {
		return nil, nil, err
	}
	clientAuth(req, form, cur.ClientID, secret, oauth2.AuthStyle(cur.AuthStyle))
	body := form.Encode()
	req.Body = io.NopCloser(strings.NewReader(body))
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := c.m.httpc.Do(req)
	if err != nil {
		return nil, nil, redactURLError(err)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenResponse+1))
	resp.Body.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("reading the answer: %w", err)
	}
	if len(raw) > maxTokenResponse {
		return nil, nil, fmt.Errorf("the token endpoint's answer exceeds %d bytes", maxTokenResponse)
	}
	next, scopes, err := parseTokenResponse(resp.StatusCode, raw, time.Now())
	if err != nil {
		return nil, nil, err
	}
	if next.RefreshToken == "" {
		next.RefreshToken = tok.RefreshToken // not rotated: keep the one we have
	}
	if len(scopes) == 0 {
		scopes = cur.Scopes
	}
	rec := *cur
	rec.Scopes = scopes
	if err := c.seal(&rec, next, secret); err != nil {
		return nil, nil, err
	}
	rec.Generation = cur.Generation + 1
	return &rec, next, nil
}

// redactURLError keeps a *url.Error's operation and cause but not its URL
// (a token endpoint URL is no secret, but an authorization URL would carry
// state).
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s %s: %w", ue.Op, origin(ue.URL), ue.Err)
	}
	return err
}

// seal puts tok and secret, sealed, into rec.
func (c *Credential) seal(rec *Record, tok *oauth2.Token, secret string) error {
	s := c.m.opts.Sealer
	var err error
	if rec.AccessToken, err = s.Seal(tok.AccessToken, tableTokens, rec.Server, rec.Principal, rec.Issuer); err != nil {
		return err
	}
	if rec.RefreshToken, err = s.Seal(tok.RefreshToken, tableTokens, rec.Server, rec.Principal, rec.Issuer); err != nil {
		return err
	}
	if rec.ClientSecret, err = s.Seal(secret, tableClients, rec.Server, rec.Principal, rec.Issuer); err != nil {
		return err
	}
	rec.TokenType = "Bearer"
	rec.Expiry = tok.Expiry
	rec.UpdatedAt = time.Now()
	return nil
}

// storeLocked seals and saves rec with tok, then makes it current.
func (c *Credential) storeLocked(ctx context.Context, rec *Record, tok *oauth2.Token, secret string) error {
	if err := c.seal(rec, tok, secret); err != nil {
		return err
	}
	rec.Generation = 1
	if c.rec != nil {
		rec.Generation = c.rec.Generation + 1
	}
	err := c.m.opts.Store.SaveCredential(ctx, rec)
	if errors.Is(err, ErrConflict) {
		// Another writer saved first: take what it stored.
		if cur, lerr := c.m.opts.Store.LoadCredential(ctx, c.server, c.principal); lerr == nil && cur != nil {
			if oerr := c.openLocked(cur); oerr == nil {
				return nil
			}
		}
	}
	if err != nil {
		return fmt.Errorf("oauth: saving the credential of %q: %w", c.server, err)
	}
	c.rec = rec
	c.secret = secret
	c.tok = &oauth2.Token{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken, TokenType: "Bearer", Expiry: tok.Expiry}
	c.loaded, c.loadErr = true, nil
	return nil
}

// dropLocked deletes the credential.
func (c *Credential) dropLocked(ctx context.Context) {
	if err := c.m.opts.Store.DeleteCredential(context.WithoutCancel(ctx), c.server, c.principal); err != nil {
		c.m.opts.Logger.Error("deleting an OAuth credential", "server", c.server, "principal", c.principal, "err", err)
	}
	c.forgetLocked()
}

// forgetLocked forgets the credential in memory (it is no longer stored).
func (c *Credential) forgetLocked() {
	had := c.tok != nil || c.loadErr != nil
	c.rec, c.tok, c.secret, c.loadErr = nil, nil, "", nil
	c.loaded = true
	if had {
		go c.m.changed(c.server, c.principal)
	}
}

// noteChallenge keeps the server's last challenge for the next sign-in
// (whoever makes it: the session's requests may run under the credential
// of nobody-signed-in-yet).
func (c *Credential) noteChallenge(ch *challenge) {
	c.m.mu.Lock()
	c.m.last[c.server] = ch
	c.m.mu.Unlock()
}

// discovery is what mcphost learns before it lets go-sdk authorize.
type discovery struct {
	resource, issuer, revocation string
}

// discover finds the server's authorization server the way go-sdk will,
// so that the credential can be bound to its issuer, and stops where
// go-sdk would fall back: a protected resource metadata document naming
// another resource is an auth_error (RFC 9728 §3.3), not a reason to treat
// the server root as its authorization server.
func (c *Credential) discover(ctx context.Context, s ServerConfig, ch *challenge) (discovery, error) {
	_, _, metadata := ch.params()
	root := origin(s.URL)
	type cand struct{ url, resource string }
	var cands []cand
	if metadata != "" {
		cands = append(cands, cand{metadata, s.URL})
	}
	u, err := url.Parse(s.URL)
	if err != nil {
		return discovery{}, &AuthError{Server: s.Name, Err: err}
	}
	cands = append(cands,
		cand{root + "/.well-known/oauth-protected-resource/" + strings.TrimLeft(u.Path, "/"), s.URL},
		cand{root + "/.well-known/oauth-protected-resource", root})
	d := discovery{resource: s.URL, issuer: root}
	for _, cd := range cands {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, cd.url, cd.resource, c.m.httpc)
		if err != nil {
			if strings.Contains(err.Error(), "got metadata resource") {
				// go-sdk's own words for an RFC 9728 §3.3 mismatch.
				return discovery{}, &AuthError{Server: s.Name, Err: fmt.Errorf("the server's protected resource metadata at %s names another resource than %s; no authorization server was contacted", cd.url, cd.resource)}
			}
			if ctx.Err() != nil {
				return discovery{}, ctx.Err()
			}
			continue
		}
		if len(prm.AuthorizationServers) == 0 {
			return discovery{}, &AuthError{Server: s.Name, Err: fmt.Errorf("the server's protected resource metadata at %s names no authorization server", cd.url)}
		}
		d.resource, d.issuer = prm.Resource, prm.AuthorizationServers[0]
		break
	}
	asm, err := auth.GetAuthServerMetadata(ctx, d.issuer, c.m.httpc)
	if err != nil {
		return discovery{}, &AuthError{Server: s.Name, Err: fmt.Errorf("authorization server metadata of %s: %w", d.issuer, err)}
	}
	if asm != nil {
		d.issuer, d.revocation = asm.Issuer, asm.RevocationEndpoint
	}
	return d, nil
}

// checkIssuer drops the stored credential when the server's authorization
// server is no longer the one that issued it (SEP-2352).
func (c *Credential) checkIssuer(ctx context.Context, d discovery) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.loadLocked(ctx)
	if c.rec != nil && c.rec.Issuer != d.issuer {
		c.m.opts.Logger.Warn("the server names another authorization server; its credential is dropped", "server", c.server, "principal", c.principal, "issuer", d.issuer, "was", c.rec.Issuer)
		c.dropLocked(ctx)
	}
}

// scopeKey names a set of challenged scopes for the step-up cap.
func scopeKey(scopes []string) string {
	s := slices.Clone(scopes)
	slices.Sort(s)
	return strings.Join(s, " ")
}

// capped reports whether another authorization for these scopes would
// exceed the cap, and otherwise counts one.
func (c *Credential) capped(scopes []string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.authzLog == nil {
		c.authzLog = map[string][]time.Time{}
	}
	k := scopeKey(scopes)
	now := time.Now()
	recent := slices.DeleteFunc(c.authzLog[k], func(t time.Time) bool { return now.Sub(t) > StepUpWindow })
	c.authzLog[k] = recent
	return len(recent) >= MaxStepUps
}

func (c *Credential) countAuthz(scopes []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.authzLog == nil {
		c.authzLog = map[string][]time.Time{}
	}
	k := scopeKey(scopes)
	c.authzLog[k] = append(c.authzLog[k], time.Now())
}

// required is the error for a challenge nobody answers now.
func (c *Credential) required(ch *challenge) error {
	code, scopes, _ := ch.params()
	if code == "insufficient_scope" && c.capped(scopes) {
		return &AuthError{Server: c.server, Err: fmt.Errorf("the server still refuses with insufficient_scope (%s) after %d authorizations in %s; mcphost stops asking", strings.Join(scopes, " "), MaxStepUps, StepUpWindow)}
	}
	reason := "not signed in"
	switch {
	case code == "insufficient_scope":
		reason = "insufficient_scope"
	case code == "invalid_token":
		reason = "the server refused the token"
	}
	return &AuthRequiredError{Server: c.server, Principal: c.principal, Reason: reason, Scopes: scopes}
}

// start begins an interactive sign-in of starter and returns its flow
// once the launch URL is known, with the cookie that binds it to the
// starter's browser.
func (c *Credential) start(ctx context.Context, starter string) (Flow, error) {
	f, err := c.startFlow(ctx, starter)
	if err != nil {
		return Flow{}, err
	}
	f.BrowserCookie = c.m.broker.bindStarter(f.ID)
	return f, nil
}

// takeOver gives the pending flow to starter (see Broker.rekey); false
// when no flow waits for its launch. Otherwise opened is closed when the
// next one does.
func (c *Credential) takeOver(starter string) (f Flow, ok bool, opened <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.pending; p != nil {
		if key, ok := c.m.broker.rekey(p, starter); ok {
			v := c.m.broker.viewOf(p)
			v.LaunchURL = c.m.broker.launchURL(p, key)
			return v, true, nil
		}
	}
	if c.opened == nil {
		c.opened = make(chan struct{})
	}
	return Flow{}, false, c.opened
}

func (c *Credential) startFlow(ctx context.Context, starter string) (Flow, error) {
	f, ok, opened := c.takeOver(starter)
	if ok {
		return f, nil
	}
	c.m.mu.Lock()
	ch := c.m.last[c.server]
	c.m.mu.Unlock()
	s, ok := c.m.server(c.server)
	if !ok {
		return Flow{}, fmt.Errorf("%w: %q", ErrUnknownServer, c.server)
	}
	if ch == nil || (ch.status == http.StatusForbidden && !isInsufficientScope(ch)) {
		var err error
		if ch, err = c.probe(ctx, s); err != nil {
			return Flow{}, err
		}
	}
	launched := make(chan Flow, 1)
	failed := make(chan error, 1)
	go func() {
		fctx, cancel := context.WithTimeout(c.m.ctx, FlowTTL)
		defer cancel()
		// authorize joins a sign-in already under way, and only its own
		// starter is given the launch: a start that joined one still
		// discovering takes it over once it opens (below), and one that
		// joined one already past its launch starts anew when it ends.
		for {
			delivered := false
			err := c.authorize(fctx, s, ch, starter, func(f Flow) { delivered = true; launched <- f })
			if err != nil {
				failed <- err
				return
			}
			if delivered || fctx.Err() != nil {
				return
			}
		}
	}()
	t := time.NewTimer(startWait)
	defer t.Stop()
	for {
		select {
		case f := <-launched:
			return f, nil
		case err := <-failed:
			return Flow{}, err
		case <-opened:
			f, ok, next := c.takeOver(starter)
			if ok {
				return f, nil
			}
			opened = next
		case <-t.C:
			return Flow{}, fmt.Errorf("oauth: discovering the authorization server of %q took longer than %s", c.server, startWait)
		case <-ctx.Done():
			return Flow{}, ctx.Err()
		}
	}
}

func isInsufficientScope(ch *challenge) bool {
	code, _, _ := ch.params()
	return code == "insufficient_scope"
}

// probe asks the server without a token for its challenge.
func (c *Credential) probe(ctx context.Context, s ServerConfig) (*challenge, error) {
	body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcphost","version":"auth-probe"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader([]byte(body)))
	if err != nil {
		return nil, fmt.Errorf("oauth: probing %q: %w", c.server, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := c.m.httpc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("oauth: probing %q: %w", c.server, redactURLError(err))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		return c.lazyChallenge(ctx, s, resp.StatusCode)
	}
	return newChallenge(req, resp), nil
}

// lazyChallenge is the challenge of a server that answered the probe
// without asking for a token (HTTP status): one that asks only when a tool
// is called (the lazy-auth pattern, or a step-up per tool) still publishes
// its protected resource metadata (RFC 9728) at the well-known address,
// and the sign-in starts from that as from its 401. A server that
// publishes none does not ask for authorization.
func (c *Credential) lazyChallenge(ctx context.Context, s ServerConfig, status int) (*challenge, error) {
	u, err := url.Parse(s.URL)
	if err != nil {
		return nil, &AuthError{Server: c.server, Err: err}
	}
	root := origin(s.URL)
	tried := []string{root + "/.well-known/oauth-protected-resource/" + strings.TrimLeft(u.Path, "/"), root + "/.well-known/oauth-protected-resource"}
	for i, where := range tried {
		resource := s.URL
		if i == 1 {
			resource = root
		}
		if _, err := oauthex.GetProtectedResourceMetadata(ctx, where, resource, c.m.httpc); err == nil {
			header := http.Header{"Www-Authenticate": {`Bearer resource_metadata="` + where + `"`}}
			return &challenge{url: s.URL, status: http.StatusUnauthorized, header: header}, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return nil, &AuthError{Server: c.server, Err: fmt.Errorf("the server answered HTTP %d without a token and publishes no protected resource metadata (at %s): it does not ask for authorization (yet); connect to it first", status, strings.Join(tried, " or "))}
}

// authorize runs one authorization through go-sdk's handler (one at a
// time per credential): mcphost's own discovery first (issuer binding,
// resource check), then the SDK's flow, whose authorization URL goes to
// deliver as a launch URL of a flow starter follows.
func (c *Credential) authorize(ctx context.Context, s ServerConfig, ch *challenge, starter string, deliver func(Flow)) error {
	_, err, _ := c.authz.Do("authorize", func() (any, error) {
		return nil, c.authorizeOnce(ctx, s, ch, starter, deliver)
	})
	return err
}

func (c *Credential) authorizeOnce(ctx context.Context, s ServerConfig, ch *challenge, starter string, deliver func(Flow)) error {
	d, err := c.discover(ctx, s, ch)
	if err != nil {
		return err
	}
	c.checkIssuer(ctx, d)
	_, challenged, _ := ch.params()
	c.countAuthz(challenged)
	if s.Type == TypeClientCredentials {
		return c.clientCredentials(ctx, s, ch, d)
	}
	c.mu.Lock()
	var granted []string
	if c.rec != nil {
		granted = slices.Clone(c.rec.Scopes)
	}
	c.mu.Unlock()

	var (
		opened       *flow
		registration = "dcr"
		stepUp       = isInsufficientScope(ch)
	)
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:           c.m.RedirectURL(),
		RequestRefreshToken:   true,
		AcceptUnadvertisedIss: true,
		Client:                c.m.httpc,
		ScopeFilter: func(discovered []string) []string {
			// The configured scopes replace the discovered ones; a step-up
			// adds the challenged ones to them.
			if len(s.Scopes) > 0 {
				if stepUp {
					discovered = append(slices.Clone(s.Scopes), discovered...)
				} else {
					discovered = slices.Clone(s.Scopes)
				}
			}
			for _, g := range granted { // the step-up union survives a restart
				if g != "offline_access" && !slices.Contains(discovered, g) {
					discovered = append(discovered, g)
				}
			}
			return discovered
		},
		AuthorizationCodeFetcher: func(fctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			f, key, err := c.m.broker.open(c.server, c.principal, starter, args.URL, d.issuer)
			if err != nil {
				return nil, err
			}
			opened = f
			c.mu.Lock()
			c.pending = f
			if c.opened != nil {
				close(c.opened)
				c.opened = nil
			}
			c.mu.Unlock()
			defer func() {
				c.mu.Lock()
				if c.pending == f {
					c.pending = nil
				}
				c.mu.Unlock()
			}()
			v := c.m.broker.viewOf(f)
			v.LaunchURL = c.m.broker.launchURL(f, key)
			deliver(v)
			select {
			case r := <-f.result:
				if r.err != nil {
					return nil, r.err
				}
				return &auth.AuthorizationResult{Code: r.code, State: r.state, Iss: r.iss}, nil
			case <-fctx.Done():
				return nil, fmt.Errorf("oauth: the sign-in to %q was not completed: %w", c.server, fctx.Err())
			}
		},
		NewTokenSource: func(_ context.Context, oc *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			scopes := tokenScopes(tok)
			if scopes == nil {
				scopes = oc.Scopes
			}
			if s.ClientMetadataURL != "" && oc.ClientID == s.ClientMetadataURL {
				registration = "cimd"
			}
			rec := &Record{
				Server: c.server, Principal: c.principal, Issuer: d.issuer, Resource: d.resource,
				TokenURL: oc.Endpoint.TokenURL, RevocationURL: d.revocation,
				ClientID: oc.ClientID, AuthStyle: int(oc.Endpoint.AuthStyle), Registration: registration,
				Scopes: scopes,
			}
			c.mu.Lock()
			err := c.storeLocked(ctx, rec, tok, oc.ClientSecret)
			c.mu.Unlock()
			if err != nil {
				return nil, err
			}
			return oauth2.StaticTokenSource(tok), nil
		},
	}
	switch {
	case s.ClientID != "":
		registration = "pre"
		pre := &oauthex.ClientCredentials{ClientID: s.ClientID, Issuer: s.ClientIssuer}
		if s.ClientSecret != "" {
			pre.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: s.ClientSecret}
		}
		cfg.PreregisteredClient = pre
	default:
		if s.ClientMetadataURL != "" {
			cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: s.ClientMetadataURL}
		}
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName:              c.m.opts.ClientName,
			RedirectURIs:            []string{c.m.RedirectURL()},
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			TokenEndpointAuthMethod: "none",
		}}
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return &AuthError{Server: c.server, Err: err}
	}
	err = h.Authorize(ctx, ch.request(), ch.response())
	if opened != nil {
		c.m.broker.finish(opened, err)
	}
	if err != nil {
		c.m.opts.Logger.Warn("OAuth sign-in failed", "server", c.server, "principal", c.principal, "err", err)
		var ae *AuthError
		if errors.As(err, &ae) || ctx.Err() != nil {
			return err
		}
		return &AuthError{Server: c.server, Err: err}
	}
	c.m.opts.Logger.Info("OAuth sign-in done", "server", c.server, "principal", c.principal, "issuer", d.issuer)
	c.m.changed(c.server, c.principal)
	return nil
}

// tokenScopes reads the scope a token endpoint granted, nil when unsaid.
func tokenScopes(tok *oauth2.Token) []string {
	if s, ok := tok.Extra("scope").(string); ok && s != "" {
		return strings.Fields(s)
	}
	return nil
}

// clientCredentials gets a token with the client credentials grant
// through extauth's handler. Its token source is not kept (it captures the
// context it was made with); mcphost stores the token and asks again when
// it expires.
func (c *Credential) clientCredentials(ctx context.Context, s ServerConfig, ch *challenge, d discovery) error {
	h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
		Credentials: &oauthex.ClientCredentials{ClientID: s.ClientID, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: s.ClientSecret}, Issuer: s.ClientIssuer},
		HTTPClient:  c.m.httpc,
	})
	if err != nil {
		return &AuthError{Server: c.server, Err: err}
	}
	actx := context.WithoutCancel(ctx)
	if err := h.Authorize(actx, ch.request(), ch.response()); err != nil {
		return &AuthError{Server: c.server, Err: fmt.Errorf("client credentials grant: %w", err)}
	}
	ts, err := h.TokenSource(actx)
	if err != nil || ts == nil {
		return &AuthError{Server: c.server, Err: fmt.Errorf("client credentials grant gave no token: %v", err)}
	}
	tok, err := ts.Token()
	if err != nil {
		return &AuthError{Server: c.server, Err: fmt.Errorf("client credentials grant: %w", err)}
	}
	rec := &Record{Server: c.server, Principal: c.principal, Issuer: d.issuer, Resource: d.resource,
		ClientID: s.ClientID, Registration: "client_credentials", RevocationURL: d.revocation, Scopes: tokenScopes(tok)}
	c.mu.Lock()
	tok.RefreshToken = "" // a new grant is the refresh
	err = c.storeLocked(ctx, rec, tok, "")
	c.mu.Unlock()
	if err != nil {
		return err
	}
	c.m.opts.Logger.Info("OAuth client credentials token obtained", "server", c.server, "issuer", d.issuer)
	return nil
}

// signOut revokes the tokens where the authorization server advertises a
// revocation endpoint (best effort) and deletes the credential.
func (c *Credential) signOut(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.loadLocked(ctx)
	if c.rec != nil && c.rec.RevocationURL != "" && c.tok != nil {
		for _, t := range []struct{ tok, hint string }{{c.tok.RefreshToken, "refresh_token"}, {c.tok.AccessToken, "access_token"}} {
			if t.tok == "" {
				continue
			}
			if err := c.revokeLocked(ctx, t.tok, t.hint); err != nil {
				c.m.opts.Logger.Warn("OAuth token revocation failed; the credential is deleted anyway", "server", c.server, "principal", c.principal, "hint", t.hint, "err", err)
			}
		}
	}
	if err := c.m.opts.Store.DeleteCredential(ctx, c.server, c.principal); err != nil {
		return fmt.Errorf("oauth: sign out of %q: %w", c.server, err)
	}
	had := c.tok != nil
	c.rec, c.tok, c.secret, c.loadErr, c.loaded = nil, nil, "", nil, true
	c.m.opts.Logger.Info("OAuth signed out", "server", c.server, "principal", c.principal)
	if had {
		go c.m.changed(c.server, c.principal)
	}
	return nil
}

func (c *Credential) revokeLocked(ctx context.Context, token, hint string) error {
	form := url.Values{"token": {token}, "token_type_hint": {hint}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.rec.RevocationURL, nil)
	if err != nil {
		return err
	}
	clientAuth(req, form, c.rec.ClientID, c.secret, oauth2.AuthStyle(c.rec.AuthStyle))
	body := form.Encode()
	req.Body = io.NopCloser(strings.NewReader(body))
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.m.httpc.Do(req)
	if err != nil {
		return redactURLError(err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the revocation endpoint answered HTTP %d", resp.StatusCode)
	}
	return nil
}
