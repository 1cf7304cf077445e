package host

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/oauth"
)

// The states of a server that asks for OAuth (package oauth). Neither is
// a failure: the supervisor does not reconnect or back off, and no era is
// recorded; it connects again once the credential changes.
const (
	// StateNeedsAuth: the server asked for a sign-in nobody has made yet
	// (or the credential was refused, signed out or dropped).
	StateNeedsAuth State = "needs_auth"
	// StateAuthError: signing in cannot work as configured: inconsistent
	// metadata (resource or issuer mismatch), a client the authorization
	// server refuses, a stored credential that does not open, a server
	// that keeps refusing after step-ups. LastError says which.
	StateAuthError State = "auth_error"
)

// AuthWait bounds how long a call whose caller can sign in (a context with
// oauth.WithPrompter) waits for that sign-in.
const AuthWait = 2 * time.Minute

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

// onAuthChange wakes the server whose credential changed.
func (h *Host) onAuthChange(server, _ string) {
	if g := h.gen(); g != nil {
		if c, err := g.conn(server); err == nil {
			c.authSignal()
		}
	}
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
	return m != nil && usesOAuth(&c.cfg) && !m.SignedIn(ctx, c.cfg.Name)
}

// checkAuthCaller refuses a call of principal to an OAuth server whose
// session does not carry that principal's (or a shared) credential, and a
// call to a server waiting for a sign-in, with an *oauth.AuthRequiredError.
func (h *Host) checkAuthCaller(ctx context.Context, c *serverConn, principal string) error {
	if !usesOAuth(&c.cfg) || h.oauth == nil {
		return nil
	}
	if err := h.oauth.CheckCaller(ctx, c.cfg.Name, principal); err != nil {
		return err
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
	if _, err := h.conn(server); err != nil {
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
	if _, err := h.conn(server); err != nil {
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
		if aerr := m.TakeAuthFailure(c.cfg.Name); aerr != nil {
			return fmt.Errorf("%w (then: %v)", aerr, err)
		}
	}
	return err
}

// forgetAuthFailure clears the transport's record before a connect.
func (c *serverConn) forgetAuthFailure() {
	if m := c.opts.oauth.Load(); m != nil && usesOAuth(&c.cfg) {
		_ = m.TakeAuthFailure(c.cfg.Name)
	}
}
