package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Auth types of a server block's `auth { type }`.
const (
	TypeOAuth             = "oauth"              // authorization code with PKCE (default)
	TypeClientCredentials = "client_credentials" // machine to machine: client_id + client_secret
)

// ServerConfig is what the manager needs of one server block.
type ServerConfig struct {
	Name string
	URL  string
	Type string // TypeOAuth (default) | TypeClientCredentials
	// Shared is `tokens = "shared"`: one credential for every principal,
	// signed in and out only by Admins (and the owner).
	Shared bool
	Admins []string

	// Pre-registered client (`client_id`, `client_secret`), bound to
	// ClientIssuer when set.
	ClientID, ClientSecret, ClientIssuer string
	// ClientMetadataURL is a client ID metadata document URL (https, with
	// a path) used when the authorization server supports them.
	ClientMetadataURL string
	// Scopes replace the discovered scopes when set.
	Scopes []string
}

// Options configure a [Manager].
type Options struct {
	// BaseURL returns the daemon's origin as the browser reaches it
	// (http://127.0.0.1:7777); the redirect URI is BaseURL()/oauth/callback.
	// A function, because the port may be known only once it listens.
	BaseURL func() string
	Store   Store   // nil: an in-memory store
	Sealer  *Sealer // required when Store is set
	// HTTPClient makes the requests to authorization servers; nil: one
	// with a 30 s timeout that refuses redirects to another origin.
	HTTPClient *http.Client
	Logger     *slog.Logger
	// OnChange is called after a credential was signed in, refreshed into
	// a new state, signed out or dropped.
	OnChange func(server, principal string)
	// ClientName is sent with dynamic client registrations.
	ClientName string
}

// Manager owns the credentials of every server, the broker and the
// sign-in routes.
type Manager struct {
	opts   Options
	broker *Broker
	httpc  *http.Client
	ctx    context.Context // ends with Close: every sign-in in progress stops
	cancel context.CancelFunc

	mu      sync.Mutex
	servers map[string]ServerConfig
	creds   map[[2]string]*Credential
	// last is each server's last challenge, for the next sign-in.
	last map[string]*challenge
	// failed is each server's last authorization failure of the
	// transport, until taken (TakeAuthFailure).
	failed map[string]error
}

// NewManager returns a manager. Call SetServers before use.
func NewManager(opts Options) (*Manager, error) {
	if opts.BaseURL == nil {
		return nil, errors.New("oauth: no base URL for the redirect")
	}
	if opts.Store == nil {
		opts.Store = NewMemoryStore()
	}
	if opts.Sealer == nil {
		return nil, errors.New("oauth: no sealer")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ClientName == "" {
		opts.ClientName = "mcphost"
	}
	httpc := opts.HTTPClient
	if httpc == nil {
		httpc = NewHTTPClient(30 * time.Second)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{
		opts: opts, broker: newBroker(opts.BaseURL), httpc: httpc, ctx: ctx, cancel: cancel,
		servers: map[string]ServerConfig{}, creds: map[[2]string]*Credential{}, last: map[string]*challenge{}, failed: map[string]error{},
	}, nil
}

// NewHTTPClient returns a client for authorization servers: an overall
// timeout per request and no redirect to another origin.
func NewHTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("oauth: more than 5 redirects")
			}
			if prev := via[len(via)-1].URL; req.URL.Scheme != prev.Scheme || req.URL.Host != prev.Host {
				return fmt.Errorf("oauth: %s redirected to another origin (%s://%s); refused", prev.Host, req.URL.Scheme, req.URL.Host)
			}
			return nil
		},
	}
}

// Close ends every sign-in in progress.
func (m *Manager) Close() { m.cancel() }

// Broker returns the manager's broker.
func (m *Manager) Broker() *Broker { return m.broker }

// RedirectURL is the redirect URI of every authorization request.
func (m *Manager) RedirectURL() string { return m.broker.RedirectURL() }

// SetServers replaces the server configurations (at start and on reload).
// Credentials of servers that are gone or whose URL changed are forgotten
// in memory; their stored rows stay until signed out (a server whose URL
// changed drops them on its next use, see [Credential]).
func (m *Manager) SetServers(servers []ServerConfig) {
	m.mu.Lock()
	defer m.mu.Unlock()
	next := map[string]ServerConfig{}
	for _, s := range servers {
		next[s.Name] = s
	}
	for k := range m.creds {
		old, had := m.servers[k[0]]
		now, has := next[k[0]]
		if !has || !had || old.URL != now.URL || old.Type != now.Type || old.ClientID != now.ClientID || old.Shared != now.Shared {
			delete(m.creds, k)
		}
	}
	m.servers = next
}

// Has reports whether the server has an OAuth configuration.
func (m *Manager) Has(server string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.servers[server]
	return ok
}

func (m *Manager) server(name string) (ServerConfig, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.servers[name]
	return s, ok
}

// credential returns the credential of (server, principal key).
func (m *Manager) credential(server, principal string) *Credential {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [2]string{server, principal}
	c := m.creds[k]
	if c == nil {
		c = &Credential{m: m, server: server, principal: principal}
		m.creds[k] = c
	}
	return c
}

// principalKey is the credential key of a principal for a server.
func principalKey(s ServerConfig, principal string) string {
	if s.Shared || s.Type == TypeClientCredentials {
		return SharedPrincipal
	}
	return principal
}

// PerPrincipal reports whether each principal signs in to the server for
// itself (and so has its own upstream session).
func (m *Manager) PerPrincipal(server string) bool {
	s, ok := m.server(server)
	return ok && principalKey(s, "x") != SharedPrincipal
}

// mayManage says whether principal (with its groups) may sign the server's
// credential in or out: anyone for their own, admins (and the owner, who
// has owner=true) for a shared one.
func mayManage(s ServerConfig, principal string, groups []string, owner bool) bool {
	if !s.Shared || owner {
		return true
	}
	for _, a := range s.Admins {
		if a == principal || slices.Contains(groups, a) {
			return true
		}
	}
	return false
}

// Caller is who asks the manager to sign in or out.
type Caller struct {
	Principal string
	Groups    []string
	Owner     bool // the daemon's owner (no principal blocks, or the owner token)
}

// ErrForbidden is returned when a caller may not manage a shared
// credential.
var ErrForbidden = errors.New("oauth: only the server's admins may sign its shared credential in or out")

// ErrUnknownServer is returned for a server without OAuth.
var ErrUnknownServer = errors.New("oauth: no such server with OAuth")

// StartSignIn starts a sign-in of caller to server and returns its flow
// with the launch URL, once go-sdk's handler has discovered the server's
// authorization server and built the authorization request (within about
// 15 s). The flow then waits for the callback for up to FlowTTL. Only
// caller may follow it (FlowStatus). Its BrowserCookie lets the browser
// that receives it skip the confirmation page of the launch URL.
func (m *Manager) StartSignIn(ctx context.Context, server string, caller Caller) (Flow, error) {
	s, ok := m.server(server)
	if !ok {
		return Flow{}, fmt.Errorf("%w: %q", ErrUnknownServer, server)
	}
	if !mayManage(s, caller.Principal, caller.Groups, caller.Owner) {
		return Flow{}, ErrForbidden
	}
	if s.Type == TypeClientCredentials {
		return Flow{}, fmt.Errorf("oauth: server %q uses the client credentials grant: mcphost signs in on its own, nobody needs to", server)
	}
	key := principalKey(s, caller.Principal)
	return m.credential(server, key).start(ctx, caller.Principal)
}

// FlowStatus returns a flow principal started; wait > 0 waits until it
// has ended or wait passed.
func (m *Manager) FlowStatus(ctx context.Context, id, principal string, wait time.Duration) (Flow, bool) {
	if wait > 0 {
		if ch, ok := m.broker.wait(id, principal); ok {
			t := time.NewTimer(wait)
			select {
			case <-ch:
			case <-t.C:
			case <-ctx.Done():
			}
			t.Stop()
		}
	}
	return m.broker.Get(id, principal)
}

// SignOut revokes (best effort, RFC 7009, when the authorization server
// advertises it) and deletes caller's credential for server.
func (m *Manager) SignOut(ctx context.Context, server string, caller Caller) error {
	s, ok := m.server(server)
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownServer, server)
	}
	if !mayManage(s, caller.Principal, caller.Groups, caller.Owner) {
		return ErrForbidden
	}
	return m.credential(server, principalKey(s, caller.Principal)).signOut(ctx)
}

// Status is who is signed in where. It never holds a secret.
type Status struct {
	Server    string    `json:"server"`
	Principal string    `json:"principal"` // a name or "*" (shared)
	Issuer    string    `json:"issuer"`
	Scopes    []string  `json:"scopes,omitempty"`
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
	// Refresh says whether mcphost holds a refresh token.
	Refresh      bool      `json:"refresh"`
	Registration string    `json:"registration"`
	UpdatedAt    time.Time `json:"updatedAt"`
}

// Statuses returns the stored credentials of server ("" every server)
// that principal may see: its own and shared ones, or all when all is set
// (admins).
func (m *Manager) Statuses(ctx context.Context, server, principal string, all bool) ([]Status, error) {
	recs, err := m.opts.Store.ListCredentials(ctx, server)
	if err != nil {
		return nil, fmt.Errorf("oauth: status: %w", err)
	}
	out := []Status{}
	for _, r := range recs {
		if _, ok := m.server(r.Server); !ok {
			continue
		}
		if !all && r.Principal != principal && r.Principal != SharedPrincipal {
			continue
		}
		out = append(out, Status{
			Server: r.Server, Principal: r.Principal, Issuer: r.Issuer, Scopes: r.Scopes,
			ExpiresAt: r.Expiry, Refresh: len(r.RefreshToken) > 0, Registration: r.Registration,
			UpdatedAt: r.UpdatedAt,
		})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Server != out[j].Server {
			return out[i].Server < out[j].Server
		}
		return out[i].Principal < out[j].Principal
	})
	return out, nil
}

// Handler serves /oauth/launch/ID (GET, and the confirmation's POST) and
// /oauth/callback: pre-auth routes, which the flow and the browser's
// binding cookie guard (see [Broker]).
func (m *Manager) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/oauth/launch/", m.broker.ServeLaunch)
	mux.HandleFunc("/oauth/callback", m.broker.ServeCallback)
	return mux
}

// changed tells the host that a credential changed.
func (m *Manager) changed(server, principal string) {
	if m.opts.OnChange != nil {
		m.opts.OnChange(server, principal)
	}
}

// origin returns scheme://host of a URL.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// pathless reports whether a URL has no path beyond "/".
func pathless(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && strings.Trim(u.Path, "/") == ""
}

// SignedIn reports whether the credential (server, principal key) holds a
// token, or is a client-credentials one that mcphost fetches on its own.
func (m *Manager) SignedIn(ctx context.Context, server, principal string) bool {
	s, ok := m.server(server)
	if !ok {
		return false
	}
	if s.Type == TypeClientCredentials {
		return true
	}
	c := m.credential(server, principalKey(s, principal))
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.loadLocked(ctx)
	return c.tok != nil
}

// TakeAuthFailure returns and forgets the server's last authorization
// failure in its transport (an *AuthRequiredError or *AuthError). The
// host asks after a failed connect: go-sdk may have hidden it behind a
// fallback (a refused server/discover followed by initialize).
func (m *Manager) TakeAuthFailure(server, principal string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := server + "\x00" + principal
	err := m.failed[k]
	delete(m.failed, k)
	return err
}

func (m *Manager) noteFailure(server, principal string, err error) {
	m.mu.Lock()
	m.failed[server+"\x00"+principal] = err
	m.mu.Unlock()
}
