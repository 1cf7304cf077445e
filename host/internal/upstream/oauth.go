package upstream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/oauth"
)

// authWait bounds how long a call whose caller can sign in (a context with
// oauth.WithPrompter) waits for that sign-in.
const authWait = 2 * time.Minute

// UsesOAuth reports whether the server has an auth block.
func UsesOAuth(s *config.Server) bool { return s.Auth != nil && s.Transport != config.TransportStdio }

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

// AuthSignal tells the supervisor that the credential changed.
func (c *Conn) AuthSignal() {
	select {
	case c.authChanged <- struct{}{}:
	default:
	}
}

// waitAuth waits, in an auth state, until the credential changes; false
// when ctx ended first.
func (c *Conn) waitAuth(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return false
	case <-c.authChanged:
		return true
	}
}

// signedOut reports whether an OAuth server's session lost its credential
// (signed out or dropped): its session then ends.
func (c *Conn) signedOut(ctx context.Context) bool {
	m := c.deps.OAuth.Load()
	return m != nil && UsesOAuth(&c.Cfg) && !m.SignedIn(ctx, c.Cfg.Name, c.principal)
}

// AuthReady refuses a request on a session waiting for a sign-in with an
// *oauth.AuthRequiredError (an *oauth.AuthError in auth_error).
func (c *Conn) AuthReady(principal string) error {
	if !UsesOAuth(&c.Cfg) {
		return nil
	}
	st := c.Snapshot()
	if st.State == StateNeedsAuth {
		return &oauth.AuthRequiredError{Server: c.Cfg.Name, Principal: principal, Reason: "not signed in"}
	}
	if st.State == StateAuthError {
		return &oauth.AuthError{Server: c.Cfg.Name, Err: errors.New(st.LastError)}
	}
	return nil
}

// authCause returns err, or the authorization failure behind it: go-sdk
// may hide a refused request behind a fallback, so the transport's own
// record counts.
func (c *Conn) authCause(err error) error {
	if _, ok := authState(err); ok || err == nil {
		return err
	}
	if m := c.deps.OAuth.Load(); m != nil && UsesOAuth(&c.Cfg) {
		if aerr := m.TakeAuthFailure(c.Cfg.Name, c.principal); aerr != nil {
			return fmt.Errorf("%w (then: %v)", aerr, err)
		}
	}
	return err
}

// forgetAuthFailure clears the transport's record before a connect.
func (c *Conn) forgetAuthFailure() {
	if m := c.deps.OAuth.Load(); m != nil && UsesOAuth(&c.Cfg) {
		_ = m.TakeAuthFailure(c.Cfg.Name, c.principal)
	}
}

// kids are a parent's per-principal sessions.
type kids struct {
	mu  sync.Mutex
	ctx context.Context // the parent's supervisor context; nil until it runs
	m   map[string]*Conn
	wg  sync.WaitGroup
}

// PerPrincipal reports whether c is the parent of per-principal sessions.
func (c *Conn) PerPrincipal() bool {
	if c.parent != nil || !UsesOAuth(&c.Cfg) {
		return false
	}
	return c.Cfg.Auth.Tokens != config.TokensShared && c.Cfg.Auth.Type != config.AuthClientCredentials
}

// credentialKey is the principal whose credential c's transport sends.
func (c *Conn) credentialKey() string {
	if c.parent != nil {
		return c.principal
	}
	return oauth.SharedPrincipal
}

// runParent is the supervisor of a per-principal server.
func (c *Conn) runParent(ctx context.Context) {
	c.kids.mu.Lock()
	c.kids.ctx = ctx
	c.kids.mu.Unlock()
	c.SetState(StateNeedsAuth, func(s *ServerStatus) {
		s.LastError = "each principal signs in to this server for itself (auth tokens = \"principal\")"
	})
	c.Settle()
	<-ctx.Done()
	c.kids.mu.Lock()
	c.kids.ctx = nil
	c.kids.mu.Unlock()
	c.kids.wg.Wait()
	c.SetState(StateStopped, nil)
}

// Child returns principal's session of a per-principal server, starting
// it on first use; nil for no principal or a parent that is not running.
func (c *Conn) Child(principal string) *Conn {
	if principal == "" || !c.PerPrincipal() {
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
	opts := *c.deps
	parentDeps := c.deps
	opts.OnStatus = func(st ServerStatus) {
		// A retired parent's sessions say nothing more: a successor may
		// have the name.
		if parentDeps.OnPrincipalStatus != nil && !c.retired.Load() {
			parentDeps.OnPrincipalStatus(principal, st)
		}
	}
	k := NewConn(c.Cfg, &opts, c.lists.c)
	k.parent, k.principal = c, principal
	k.status.State = StateConnecting // it starts at once
	k.logger = c.logger.With("principal", principal)
	// Its own cache key space and private partition: public entries are
	// shared only among principals with the same upstream credential.
	k.lists.server = c.Cfg.Name + "\x00" + principal
	k.lists.partition = principal
	k.lists.logger = k.logger
	if c.kids.m == nil {
		c.kids.m = map[string]*Conn{}
	}
	c.kids.m[principal] = k
	c.kids.wg.Add(1)
	ctx := c.kids.ctx
	go func() {
		defer c.kids.wg.Done()
		k.Run(ctx)
	}()
	return k
}

// As returns the session principal uses: its own for a per-principal
// server, else c. A new session gets until its first attempt has ended
// (bounded by ctx).
func (c *Conn) As(ctx context.Context, principal string) *Conn {
	k := c.Child(principal)
	if k == nil {
		return c
	}
	select {
	case <-k.settled:
	case <-ctx.Done():
	}
	return k
}

// Peek returns principal's session when it exists, else c (no session is
// started: for status reads).
func (c *Conn) Peek(principal string) *Conn {
	if !c.PerPrincipal() {
		return c
	}
	c.kids.mu.Lock()
	defer c.kids.mu.Unlock()
	if k := c.kids.m[principal]; k != nil {
		return k
	}
	return c
}

// CallFailed takes note of a call's upstream failure: an authorization
// failure (a refused refresh, a step-up nobody answered) ends the session,
// which then waits for a sign-in; the card shows why.
func (c *Conn) CallFailed(err error) {
	if err == nil || !UsesOAuth(&c.Cfg) {
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
