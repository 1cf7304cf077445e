// Package oauthtest is a small OAuth 2.1 authorization server and an
// OAuth-protected MCP server for tests, on 127.0.0.1: the authorization
// server approves every request at once and redirects back (as a user who
// clicks "Allow" would), issues refresh tokens that rotate, answers
// revocation, and records what it was sent, so tests can check refresh
// with `resource`, rotation, revocation and that nothing was sent at all;
// and the user's browser, which opens an mcphost launch URL and continues
// past its confirmation page ([OpenLaunch]).
package oauthtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Request is one request the authorization server received.
type Request struct {
	Path string
	Form url.Values // query for GET, form for POST
}

// Grant is what an access token stands for.
type Grant struct {
	Subject string
	Scopes  []string
	Expiry  time.Time
}

// AS is the authorization server.
type AS struct {
	URL string // its issuer

	// Knobs, set before use.
	ExpiresIn   int      // seconds; 0: 3600
	NoRefresh   bool     // issue no refresh tokens
	NoRotate    bool     // keep the refresh token on refresh
	Scopes      []string // scopes_supported
	RejectAll   bool     // the token endpoint answers invalid_grant
	RevokeFails bool     // the revocation endpoint answers 503
	// ReuseRevokesFamily makes a replayed (already redeemed) refresh token
	// revoke every token issued from the same sign-in, as authorization
	// servers with refresh token reuse detection do (OAuth 2.1 §4.3.1).
	ReuseRevokesFamily bool
	Subject            string // the subject of the next tokens (default "user")
	// MetadataDelay holds each metadata answer back (a slow discovery).
	MetadataDelay time.Duration

	srv *httptest.Server
	mu  sync.Mutex
	seq int
	// codes: code -> challenge, redirect, subject; single use.
	codes    map[string]codeGrant
	access   map[string]Grant
	refresh  map[string]Grant
	requests []Request
	revoked  []string
	// family is the sign-in each token was issued from; redeemed holds
	// the refresh tokens already used, by family.
	family   map[string]int
	redeemed map[string]int
}

type codeGrant struct {
	challenge, redirect, resource string
	scopes                        []string
	subject                       string
}

// NewAS starts an authorization server; it stops with the test.
func NewAS(t testing.TB) *AS {
	a := &AS{codes: map[string]codeGrant{}, access: map[string]Grant{}, refresh: map[string]Grant{},
		family: map[string]int{}, redeemed: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", a.metadata)
	mux.HandleFunc("/register", a.register)
	mux.HandleFunc("/authorize", a.authorize)
	mux.HandleFunc("/token", a.token)
	mux.HandleFunc("/revoke", a.revoke)
	a.srv = httptest.NewServer(mux)
	a.URL = a.srv.URL
	t.Cleanup(a.srv.Close)
	return a
}

func (a *AS) record(r *http.Request) {
	_ = r.ParseForm()
	a.mu.Lock()
	a.requests = append(a.requests, Request{Path: r.URL.Path, Form: r.Form})
	a.mu.Unlock()
}

// Requests returns what the server received so far.
func (a *AS) Requests() []Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Request(nil), a.requests...)
}

// Revoked returns the tokens revoked so far.
func (a *AS) Revoked() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.revoked...)
}

// Valid reports the grant of a live access token.
func (a *AS) Valid(token string) (Grant, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	g, ok := a.access[token]
	if !ok || time.Now().After(g.Expiry) {
		return Grant{}, false
	}
	return g, true
}

// Invalidate forgets every access token (the server refuses them).
func (a *AS) Invalidate() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.access = map[string]Grant{}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (a *AS) metadata(w http.ResponseWriter, r *http.Request) {
	a.record(r)
	if a.MetadataDelay > 0 {
		select {
		case <-time.After(a.MetadataDelay):
		case <-r.Context().Done():
			return
		}
	}
	m := map[string]any{
		"issuer":                                         a.URL,
		"authorization_endpoint":                         a.URL + "/authorize",
		"token_endpoint":                                 a.URL + "/token",
		"registration_endpoint":                          a.URL + "/register",
		"revocation_endpoint":                            a.URL + "/revoke",
		"code_challenge_methods_supported":               []string{"S256"},
		"response_types_supported":                       []string{"code"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"token_endpoint_auth_methods_supported":          []string{"none"},
		"authorization_response_iss_parameter_supported": true,
	}
	if len(a.Scopes) > 0 {
		m["scopes_supported"] = a.Scopes
	}
	writeJSON(w, 200, m)
}

func (a *AS) register(w http.ResponseWriter, r *http.Request) {
	a.record(r)
	var md map[string]any
	_ = json.NewDecoder(r.Body).Decode(&md)
	md["client_id"] = "client-" + rand.Text()[:8]
	md["token_endpoint_auth_method"] = "none"
	writeJSON(w, 201, md)
}

func (a *AS) authorize(w http.ResponseWriter, r *http.Request) {
	a.record(r)
	q := r.URL.Query()
	code := "code-" + rand.Text()
	a.mu.Lock()
	subject := a.Subject
	if subject == "" {
		subject = "user"
	}
	a.codes[code] = codeGrant{challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri"), resource: q.Get("resource"),
		scopes: strings.Fields(q.Get("scope")), subject: subject}
	a.mu.Unlock()
	u, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "bad redirect_uri", 400)
		return
	}
	back := u.Query()
	back.Set("code", code)
	back.Set("state", q.Get("state"))
	back.Set("iss", a.URL)
	u.RawQuery = back.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

func (a *AS) issue(g Grant, family int) map[string]any {
	a.seq++
	if family == 0 {
		family = a.seq
	}
	exp := a.ExpiresIn
	if exp == 0 {
		exp = 3600
	}
	g.Expiry = time.Now().Add(time.Duration(exp) * time.Second)
	at := fmt.Sprintf("test-token-%d-%s", a.seq, rand.Text()[:6])
	a.access[at] = g
	a.family[at] = family
	out := map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": exp, "scope": strings.Join(g.Scopes, " ")}
	if !a.NoRefresh {
		rt := fmt.Sprintf("test-refresh-%d-%s", a.seq, rand.Text()[:6])
		a.refresh[rt] = g
		a.family[rt] = family
		out["refresh_token"] = rt
	}
	return out
}

func (a *AS) token(w http.ResponseWriter, r *http.Request) {
	a.record(r)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.RejectAll {
		writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "refused by the test"})
		return
	}
	switch r.Form.Get("grant_type") {
	case "authorization_code":
		cg, ok := a.codes[r.Form.Get("code")]
		delete(a.codes, r.Form.Get("code")) // single use
		sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != cg.challenge || r.Form.Get("redirect_uri") != cg.redirect || r.Form.Get("resource") != cg.resource {
			writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
			return
		}
		writeJSON(w, 200, a.issue(Grant{Subject: cg.subject, Scopes: cg.scopes}, 0))
	case "refresh_token":
		rt := r.Form.Get("refresh_token")
		g, ok := a.refresh[rt]
		if f, replayed := a.redeemed[rt]; !ok && replayed && a.ReuseRevokesFamily {
			for tok, tf := range a.family {
				if tf == f {
					delete(a.access, tok)
					delete(a.refresh, tok)
				}
			}
		}
		if !ok {
			writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "unknown or replayed refresh token"})
			return
		}
		if !a.NoRotate {
			delete(a.refresh, rt) // rotation: a replayed one is refused
			a.redeemed[rt] = a.family[rt]
		}
		out := a.issue(g, a.family[rt])
		if a.NoRotate {
			delete(a.refresh, out["refresh_token"].(string))
			out["refresh_token"] = rt
		}
		writeJSON(w, 200, out)
	default:
		writeJSON(w, 400, map[string]string{"error": "unsupported_grant_type"})
	}
}

func (a *AS) revoke(w http.ResponseWriter, r *http.Request) {
	a.record(r)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.RevokeFails {
		w.WriteHeader(503)
		return
	}
	tok := r.Form.Get("token")
	a.revoked = append(a.revoked, tok)
	delete(a.access, tok)
	delete(a.refresh, tok)
	w.WriteHeader(200)
}

// Server is an MCP server that only answers requests with a token of its
// authorization server. Its tool whoami returns the token's subject.
type Server struct {
	URL    string // the MCP endpoint, .../mcp (Streamable HTTP)
	SSEURL string // the same server over the 2024-11-05 HTTP+SSE transport, .../sse
	AS     *AS

	srv *httptest.Server
	mu  sync.Mutex
	// issuer is the authorization server its metadata names (Migrate
	// changes it).
	issuer string
	seen   []string // tokens seen
	scope  string   // required by tools/call (RequireScope)
	lazy   bool     // only tools/call needs a token (ProtectCallsOnly)
}

// NewServer starts a protected MCP server using as; it stops with the
// test.
func NewServer(t testing.TB, as *AS) *Server {
	s := &Server{AS: as, issuer: as.URL}
	// One MCP server per subject: its tools are whoami and
	// only_for_SUBJECT, so lists differ per signed-in user; so do its
	// prompt greet_SUBJECT and its resource test://whoami.
	var smu sync.Mutex
	servers := map[string]*mcp.Server{}
	serverFor := func(sub string) *mcp.Server {
		smu.Lock()
		defer smu.Unlock()
		if ms := servers[sub]; ms != nil {
			return ms
		}
		ms := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
		mcp.AddTool(ms, &mcp.Tool{Name: "whoami", Description: "the token's subject"},
			func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "subject=" + sub}}}, nil, nil
			})
		mcp.AddTool(ms, &mcp.Tool{Name: "only_for_" + sub, Description: "listed for " + sub + " only"},
			func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: sub}}}, nil, nil
			})
		ms.AddPrompt(&mcp.Prompt{Name: "greet_" + sub, Description: "a greeting for " + sub},
			func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello " + sub}}}}, nil
			})
		ms.AddResource(&mcp.Resource{URI: "test://whoami", Name: "whoami", MIMEType: "text/plain"},
			func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://whoami", MIMEType: "text/plain", Text: "subject=" + sub}}}, nil
			})
		servers[sub] = ms
		return ms
	}
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server { return serverFor(r.Header.Get("X-Test-Subject")) },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	sse := mcp.NewSSEHandler(func(r *http.Request) *mcp.Server { return serverFor(r.Header.Get("X-Test-Subject")) }, nil)
	mux := http.NewServeMux()
	for _, path := range []string{"/mcp", "/sse"} {
		mux.HandleFunc("/.well-known/oauth-protected-resource"+path, func(w http.ResponseWriter, r *http.Request) {
			s.mu.Lock()
			iss := s.issuer
			s.mu.Unlock()
			writeJSON(w, 200, map[string]any{"resource": s.srv.URL + path, "authorization_servers": []string{iss}})
		})
	}
	protect := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			s.mu.Lock()
			if ok {
				s.seen = append(s.seen, tok)
			}
			as := s.AS
			s.mu.Unlock()
			g, valid := as.Valid(tok)
			if !ok && s.callsOnly() {
				// The lazy-auth pattern: everything but a tool call is
				// answered without a token, as nobody.
				body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
				r.Body = io.NopCloser(bytes.NewReader(body))
				if r.Method != http.MethodPost || !bytes.Contains(body, []byte(`"tools/call"`)) {
					r.Header.Set("X-Test-Subject", "anonymous")
					next.ServeHTTP(w, r)
					return
				}
			}
			if !ok || !valid {
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+s.srv.URL+`/.well-known/oauth-protected-resource`+r.URL.Path+`"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			if scope := s.requiredScope(); scope != "" && r.Method == http.MethodPost && !slices.Contains(g.Scopes, scope) {
				body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
				r.Body = io.NopCloser(bytes.NewReader(body))
				if bytes.Contains(body, []byte(`"tools/call"`)) {
					w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+scope+`", resource_metadata="`+s.srv.URL+`/.well-known/oauth-protected-resource`+r.URL.Path+`"`)
					http.Error(w, "insufficient scope", http.StatusForbidden)
					return
				}
			}
			r.Header.Set("X-Test-Subject", g.Subject)
			next.ServeHTTP(w, r)
		})
	}
	mux.Handle("/mcp", protect(h))
	mux.Handle("/sse", protect(sse))
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL + "/mcp"
	s.SSEURL = s.srv.URL + "/sse"
	t.Cleanup(s.srv.Close)
	return s
}

// RequireScope makes tools/call need scope (a 403 insufficient_scope
// challenge without it); "" needs none.
func (s *Server) RequireScope(scope string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scope = scope
}

func (s *Server) requiredScope() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scope
}

// ProtectCallsOnly makes the server ask for a token only for tools/call
// (the lazy-auth pattern of the MCP Apps examples): it lists, reads and
// gets prompts for anyone, as the subject "anonymous", and answers a tool
// call without a token with its 401 challenge.
func (s *Server) ProtectCallsOnly() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lazy = true
}

func (s *Server) callsOnly() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lazy
}

// Migrate makes the server trust another authorization server.
func (s *Server) Migrate(as *AS) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.AS, s.issuer = as, as.URL
}

// Seen returns the tokens the server was sent.
func (s *Server) Seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}
