package host

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/oauth"
)

// authWait bounds how long a call whose caller can sign in (a context with
// oauth.WithPrompter) waits for that sign-in.
const authWait = 2 * time.Minute

// usesOAuth reports whether the server has an auth block.
func usesOAuth(s *config.Server) bool { return s.Auth != nil && s.Transport != config.TransportStdio }

// oauthServers turns the config's auth blocks into the manager's view.
func oauthServers(cfg *config.Config) []oauth.ServerConfig {
	var out []oauth.ServerConfig
	for i := range cfg.Servers {
		s := &cfg.Servers[i]
		if !usesOAuth(s) {
			continue
		}
		a := s.Auth
		out = append(out, oauth.ServerConfig{
			Name: s.Name, URL: s.URL, Type: a.Type, Shared: a.Tokens == config.TokensShared, Admins: a.Admins,
			ClientID: a.ClientID, ClientSecret: a.ClientSecret, ClientIssuer: a.ClientIssuer,
			ClientMetadataURL: a.ClientMetadataURL, Scopes: a.Scopes,
		})
	}
	return out
}

// setupOAuth makes the OAuth manager when the config first needs one and
// gives it the config's servers (New and every reload).
func (h *Host) setupOAuth(cfg *config.Config) error {
	servers := oauthServers(cfg)
	h.oauthMu.Lock()
	defer h.oauthMu.Unlock()
	if h.oauth == nil {
		if len(servers) == 0 {
			return nil
		}
		key, err := oauth.LoadKey(cfg.DataDir, os.Getenv)
		if err != nil {
			return err
		}
		sealer, err := oauth.NewSealer(key)
		if err != nil {
			return err
		}
		var st oauth.Store
		if h.store != nil {
			st = h.store
		}
		m, err := oauth.NewManager(oauth.Options{
			BaseURL:  h.oauthBase,
			Store:    st,
			Sealer:   sealer,
			Logger:   h.opts.Logger.With("component", "oauth"),
			OnChange: h.onAuthChange,
		})
		if err != nil {
			return err
		}
		h.oauth = m
		h.opts.oauth.Store(m)
	}
	h.oauth.SetServers(servers)
	return nil
}

// oauthRef holds the host's OAuth manager for its server connections,
// set once (at New, or by the first reload that needs it).
type oauthRef struct{ atomic.Pointer[oauth.Manager] }

// oauthBase is the daemon's origin for redirects: Options.OAuthBaseURL, or
// http://HOST:PORT of the listener (127.0.0.1 for a wildcard host).
func (h *Host) oauthBase() string {
	if h.opts.OAuthBaseURL != "" {
		return h.opts.OAuthBaseURL
	}
	hostname := "127.0.0.1"
	if cfg := h.gen(); cfg != nil && cfg.cfg != nil {
		if hn, _, err := net.SplitHostPort(cfg.cfg.Listen); err == nil && hn != "" && hn != "0.0.0.0" && hn != "::" {
			hostname = hn
		}
	}
	port := h.daemonPort()
	if port == "" {
		port = "7777"
	}
	return "http://" + net.JoinHostPort(hostname, port)
}

// onAuthChange wakes the session whose credential changed: the
// principal's own session of a per-principal server (made now if it has
// none yet), else the server's one session.
func (h *Host) onAuthChange(server, principal string) {
	g := h.gen()
	if g == nil {
		return
	}
	c, err := g.conn(server)
	if err != nil {
		return
	}
	if c.perPrincipal() {
		if kid := c.child(principal); kid != nil {
			kid.authSignal()
		}
		return
	}
	c.authSignal()
}

// authState says whether err is an authorization outcome, and which state
// it puts the server in.
func authState(err error) (State, bool) {
	var ar *oauth.AuthRequiredError
	var ae *oauth.AuthError
	switch {
	case errors.As(err, &ae):
		return StateAuthError, true
	case errors.As(err, &ar):
		return StateNeedsAuth, true
	}
	return "", false
}

// authSignal tells the supervisor that the credential changed.
func (c *serverConn) authSignal() {
	select {
	case c.authChanged <- struct{}{}:
	default:
	}
}

// waitAuth waits, in an auth state, until the credential changes; false
// when ctx ended first.
func (c *serverConn) waitAuth(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return false
	case <-c.authChanged:
		return true
	}
}

// signedOut reports whether an OAuth server's session lost its credential
// (signed out or dropped): its session then ends.
func (c *serverConn) signedOut(ctx context.Context) bool {
	m := c.opts.oauth.Load()
	return m != nil && usesOAuth(&c.cfg) && !m.SignedIn(ctx, c.cfg.Name, c.principal)
}

// authReady refuses a request on a session waiting for a sign-in with an
// *oauth.AuthRequiredError (an *oauth.AuthError in auth_error).
func (c *serverConn) authReady(principal string) error {
	if !usesOAuth(&c.cfg) {
		return nil
	}
	st := c.snapshot()
	if st.State == StateNeedsAuth {
		return &oauth.AuthRequiredError{Server: c.cfg.Name, Principal: principal, Reason: "not signed in"}
	}
	if st.State == StateAuthError {
		return &oauth.AuthError{Server: c.cfg.Name, Err: errors.New(st.LastError)}
	}
	return nil
}

// ErrNoOAuth is returned by the sign-in methods when no server has OAuth.
var ErrNoOAuth = errors.New("no server of the config has an auth block")

func (h *Host) manager() (*oauth.Manager, error) {
	h.oauthMu.Lock()
	defer h.oauthMu.Unlock()
	if h.oauth == nil {
		return nil, ErrNoOAuth
	}
	return h.oauth, nil
}

func oauthCaller(c Caller) oauth.Caller {
	return oauth.Caller{Principal: c.Name, Groups: c.Groups, Owner: c.Name == OwnerName || c.Admin}
}

// StartSignIn starts caller's sign-in to server and returns the flow with
// its single-use launch URL (for that caller only). Nothing opens a
// browser: the caller's user opens the URL.
func (h *Host) StartSignIn(ctx context.Context, caller Caller, server string) (oauth.Flow, error) {
	m, err := h.manager()
	if err != nil {
		return oauth.Flow{}, err
	}
	if err := h.CheckVisible(ctx, caller, server); err != nil {
		return oauth.Flow{}, err
	}
	return m.StartSignIn(ctx, server, oauthCaller(caller))
}

// SignInFlow returns caller's flow id, waiting up to wait for it to end.
func (h *Host) SignInFlow(ctx context.Context, caller Caller, id string, wait time.Duration) (oauth.Flow, error) {
	m, err := h.manager()
	if err != nil {
		return oauth.Flow{}, err
	}
	f, ok := m.FlowStatus(ctx, id, caller.Name, min(wait, time.Minute))
	if !ok {
		return oauth.Flow{}, fmt.Errorf("%w: sign-in %q", ErrNotFound, id)
	}
	return f, nil
}

// SignOut signs caller out of server: its tokens are revoked where the
// authorization server allows and deleted.
func (h *Host) SignOut(ctx context.Context, caller Caller, server string) error {
	m, err := h.manager()
	if err != nil {
		return err
	}
	if err := h.CheckVisible(ctx, caller, server); err != nil {
		return err
	}
	return m.SignOut(ctx, server, oauthCaller(caller))
}

// AuthStatus returns who is signed in where ("" every server): the
// caller's own and shared credentials, every one for an admin. It never
// holds a token.
func (h *Host) AuthStatus(ctx context.Context, caller Caller, server string) ([]oauth.Status, error) {
	m, err := h.manager()
	if errors.Is(err, ErrNoOAuth) {
		return []oauth.Status{}, nil
	}
	if err != nil {
		return nil, err
	}
	return m.Statuses(ctx, server, caller.Name, caller.Admin)
}

// OAuthHandler serves /oauth/launch/ and /oauth/callback; 404 when no
// server has OAuth.
func (h *Host) OAuthHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m, err := h.manager()
		if err != nil {
			http.NotFound(w, r)
			return
		}
		m.Handler().ServeHTTP(w, r)
	})
}

// authCause returns err, or the authorization failure behind it: go-sdk
// may hide a refused request behind a fallback, so the transport's own
// record counts.
func (c *serverConn) authCause(err error) error {
	if _, ok := authState(err); ok || err == nil {
		return err
	}
	if m := c.opts.oauth.Load(); m != nil && usesOAuth(&c.cfg) {
		if aerr := m.TakeAuthFailure(c.cfg.Name, c.principal); aerr != nil {
			return fmt.Errorf("%w (then: %v)", aerr, err)
		}
	}
	return err
}

// forgetAuthFailure clears the transport's record before a connect.
func (c *serverConn) forgetAuthFailure() {
	if m := c.opts.oauth.Load(); m != nil && usesOAuth(&c.cfg) {
		_ = m.TakeAuthFailure(c.cfg.Name, c.principal)
	}
}

// Per-principal sessions. A server whose auth block keeps tokens per
// principal (the default) has one upstream session per principal: the
// server's own serverConn is a parent that never connects (its state is
// needs_auth: "each principal signs in for itself"), and each principal
// that uses the server gets a child serverConn with the same block, its own
// credential, its own catalog and its own cache partition, whose status
// goes only to that principal. The parent's supervisor runs the children
// and ends them when it ends (reload, shutdown).

// kids are a parent's per-principal sessions.
type kids struct {
	mu  sync.Mutex
	ctx context.Context // the parent's supervisor context; nil until it runs
	m   map[string]*serverConn
	wg  sync.WaitGroup
}

// perPrincipal reports whether c is the parent of per-principal sessions.
func (c *serverConn) perPrincipal() bool {
	if c.parent != nil || !usesOAuth(&c.cfg) {
		return false
	}
	return c.cfg.Auth.Tokens != config.TokensShared && c.cfg.Auth.Type != config.AuthClientCredentials
}

// credentialKey is the principal whose credential c's transport sends.
func (c *serverConn) credentialKey() string {
	if c.parent != nil {
		return c.principal
	}
	return oauth.SharedPrincipal
}

// runParent is the supervisor of a per-principal server.
func (c *serverConn) runParent(ctx context.Context) {
	c.kids.mu.Lock()
	c.kids.ctx = ctx
	c.kids.mu.Unlock()
	c.setState(StateNeedsAuth, func(s *ServerStatus) {
		s.LastError = "each principal signs in to this server for itself (auth tokens = \"principal\")"
	})
	c.settle()
	<-ctx.Done()
	c.kids.mu.Lock()
	c.kids.ctx = nil
	c.kids.mu.Unlock()
	c.kids.wg.Wait()
	c.setState(StateStopped, nil)
}

// child returns principal's session of a per-principal server, starting
// it on first use; nil for no principal or a parent that is not running.
func (c *serverConn) child(principal string) *serverConn {
	if principal == "" || !c.perPrincipal() {
		return nil
	}
	c.kids.mu.Lock()
	defer c.kids.mu.Unlock()
	if k := c.kids.m[principal]; k != nil {
		return k
	}
	if c.kids.ctx == nil || c.kids.ctx.Err() != nil {
		return nil
	}
	opts := *c.opts
	parentOpts := c.opts
	opts.OnStatus = func(st ServerStatus) {
		// A retired parent's sessions say nothing more: a successor may
		// have the name.
		if parentOpts.onPrincipalStatus != nil && !c.retired.Load() {
			parentOpts.onPrincipalStatus(principal, st)
		}
	}
	k := newServerConn(c.cfg, &opts, c.lists.c)
	k.parent, k.principal = c, principal
	k.status.State = StateConnecting // it starts at once
	k.logger = c.logger.With("principal", principal)
	// Its own cache key space and private partition: public entries are
	// shared only among principals with the same upstream credential.
	k.lists.server = c.cfg.Name + "\x00" + principal
	k.lists.partition = principal
	k.lists.logger = k.logger
	if c.kids.m == nil {
		c.kids.m = map[string]*serverConn{}
	}
	c.kids.m[principal] = k
	c.kids.wg.Add(1)
	ctx := c.kids.ctx
	go func() {
		defer c.kids.wg.Done()
		k.run(ctx)
	}()
	return k
}

// as returns the session principal uses: its own for a per-principal
// server, else c. A new session gets until its first attempt has ended
// (bounded by ctx).
func (c *serverConn) as(ctx context.Context, principal string) *serverConn {
	k := c.child(principal)
	if k == nil {
		return c
	}
	select {
	case <-k.settled:
	case <-ctx.Done():
	}
	return k
}

// peek returns principal's session when it exists, else c (no session is
// started: for status reads).
func (c *serverConn) peek(principal string) *serverConn {
	if !c.perPrincipal() {
		return c
	}
	c.kids.mu.Lock()
	defer c.kids.mu.Unlock()
	if k := c.kids.m[principal]; k != nil {
		return k
	}
	return c
}

// startSessions starts principal's own sessions of the per-principal
// servers it has none of yet, so that a stored credential connects (and
// one without shows its sign-in) as soon as the principal looks, and waits
// (bounded by ctx) until each has made its first attempt.
func (g *generation) startSessions(ctx context.Context, principal string) {
	if principal == "" {
		return
	}
	for _, c := range g.conns {
		c.as(ctx, principal)
	}
}

// callFailed takes note of a call's upstream failure: an authorization
// failure (a refused refresh, a step-up nobody answered) ends the session,
// which then waits for a sign-in; the card shows why.
func (c *serverConn) callFailed(err error) {
	if err == nil || !usesOAuth(&c.cfg) {
		return
	}
	if _, ok := authState(err); !ok {
		return
	}
	select {
	case c.authLost <- err:
	default:
	}
}
