package host

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/upstream"
	"github.com/mcphost/mcphost/oauth"
)

// oauthServers turns the config's auth blocks into the manager's view.
func oauthServers(cfg *config.Config) []oauth.ServerConfig {
	var out []oauth.ServerConfig
	for i := range cfg.Servers {
		s := &cfg.Servers[i]
		if !upstream.UsesOAuth(s) {
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
	h.auth.oauthMu.Lock()
	defer h.auth.oauthMu.Unlock()
	if h.auth.oauth == nil {
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
		h.auth.oauth = m
		h.deps.OAuth.Store(m)
	}
	h.auth.oauth.SetServers(servers)
	return nil
}

// oauthBase is the daemon's origin for redirects: Options.OAuthBaseURL, or
// http://HOST:PORT of the listener (127.0.0.1 for a wildcard host).
func (h *Host) oauthBase() string {
	if h.opts.OAuthBaseURL != "" {
		return h.opts.OAuthBaseURL
	}
	hostname := "127.0.0.1"
	if cfg := h.gen(); cfg != nil && cfg.Cfg != nil {
		if hn, _, err := net.SplitHostPort(cfg.Cfg.Listen); err == nil && hn != "" && hn != "0.0.0.0" && hn != "::" {
			hostname = hn
		}
	}
	port := h.daemonPort()
	if port == "" {
		port = "7777"
	}
	return "http://" + net.JoinHostPort(hostname, port)
}

// WebShellURL is the WebShell's address as browsers reach it: where a
// person answers an approval or a server's question.
func (h *Host) WebShellURL() string { return h.oauthBase() + "/" }

// onAuthChange wakes the session whose credential changed: the
// principal's own session of a per-principal server (made now if it has
// none yet), else the server's one session.
func (h *Host) onAuthChange(server, principal string) {
	g := h.gen()
	if g == nil {
		return
	}
	c, err := g.Conn(server)
	if err != nil {
		return
	}
	if c.PerPrincipal() {
		if kid := c.Child(principal); kid != nil {
			kid.AuthSignal()
		}
		return
	}
	c.AuthSignal()
}

// ErrNoOAuth is returned by the sign-in methods when no server has OAuth.
var ErrNoOAuth = errors.New("no server of the config has an auth block")

func (h *Host) manager() (*oauth.Manager, error) {
	h.auth.oauthMu.Lock()
	defer h.auth.oauthMu.Unlock()
	if h.auth.oauth == nil {
		return nil, ErrNoOAuth
	}
	return h.auth.oauth, nil
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

// Per-principal sessions. A server whose auth block keeps tokens per
// principal (the default) has one upstream session per principal: the
// server's own upstream.Conn is a parent that never connects (its state is
// needs_auth: "each principal signs in for itself"), and each principal
// that uses the server gets a child upstream.Conn with the same block, its own
// credential, its own catalog and its own cache partition, whose status
// goes only to that principal. The parent's supervisor runs the children
// and ends them when it ends (reload, shutdown).
