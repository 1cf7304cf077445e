package main

// The auth/* scenarios, through the daemon: the adapter serves the
// daemon's own HTTP handler (host/httpapi) on 127.0.0.1, starts each
// sign-in with POST /api/v1/servers/NAME/auth/start as the owner, and
// follows the launch URL with an http.Client that does what a browser
// would (follow redirects, keep cookies, continue past mcphost's
// confirmation page: oauthtest.OpenLaunch): launch URL -> the suite's
// authorization server -> /oauth/callback. A step-up during a tool call
// is answered the same way (oauth.WithPrompter on the call's context).

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"strings"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/httpapi"
	"github.com/mcphost/mcphost/internal/oauthtest"
	"github.com/mcphost/mcphost/negotiate"
	"github.com/mcphost/mcphost/oauth"
)

// cimdURL is the client ID metadata document URL the suite expects.
const cimdURL = "https://conformance-test.local/client-metadata.json"

// maxSignIns bounds the sign-ins the adapter makes for one scenario (the
// step-up cap of mcphost stops long before).
const maxSignIns = 5

// refusals are the scenarios whose authorization server or metadata is
// hostile: mcphost must refuse to sign in (or stop), and the adapter
// checks that it did.
var refusals = map[string]string{
	"auth/resource-mismatch":        "the protected resource metadata names another resource",
	"auth/scope-retry-limit":        "the server keeps refusing with insufficient_scope",
	"auth/iss-supported-missing":    "the authorization response lacks the advertised iss",
	"auth/iss-wrong-issuer":         "the authorization response names another issuer",
	"auth/iss-unexpected":           "the unadvertised iss names another issuer",
	"auth/iss-normalized":           "the iss differs from the issuer by a trailing slash",
	"auth/metadata-issuer-mismatch": "the authorization server metadata names another issuer",
}

// authUnsupported are the auth extensions mcphost does not implement.
func authUnsupported(scenario string) (string, bool) {
	switch scenario {
	case "auth/client-credentials-jwt":
		return "client credentials with private_key_jwt (SEP-1046): go-sdk v1.8.0 has no JWT client assertion", true
	case "auth/enterprise-managed-authorization":
		return "enterprise-managed authorization (SEP-990: ID token, token exchange, JWT bearer)", true
	case "auth/dpop", "auth/dpop-nonce":
		return "DPoP sender-constrained tokens (SEP-1932)", true
	case "auth/wif-jwt-bearer":
		return "workload identity JWT bearer (SEP-1933)", true
	}
	return "", false
}

// owner is the caller the adapter signs in and calls as (the daemon's
// owner token).
var owner = host.Caller{Principal: host.Principal{Name: host.OwnerName}, Admin: true}

// daemon is a host with its HTTP handler served on 127.0.0.1.
type daemon struct {
	*session
	base, token string
	browser     *http.Client
	api         *http.Client
	srv         *http.Server
	dataDir     string // removed by close: it holds the daemon's secret key
}

// runAuth runs one auth/* scenario.
func runAuth(ctx context.Context, scenario, url, wire string, sc map[string]any) error {
	d, err := startDaemon(ctx, scenario, url, wire, sc)
	if err != nil {
		return err
	}
	defer d.close()
	refusal, mustRefuse := refusals[scenario]
	err = d.signInUntilReady(ctx)
	if err == nil {
		err = d.callTestTool(ctx)
	}
	if mustRefuse {
		if err == nil {
			return fmt.Errorf("mcphost signed in and called the tool although %s", refusal)
		}
		fmt.Fprintf(os.Stderr, "conformance-client: refused as expected (%s): %v\n", refusal, err)
		return nil
	}
	return err
}

func startDaemon(ctx context.Context, scenario, url, wire string, sc map[string]any) (_ *daemon, err error) {
	mode := config.NegotiationLegacy
	if wire >= negotiate.ModernVersion {
		mode = config.NegotiationAuto
	}
	level := slog.LevelDebug
	if os.Getenv("MCPHOST_CONFORMANCE_QUIET") != "" {
		level = slog.LevelWarn
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	dataDir, err := os.MkdirTemp("", "mcphost-conformance-auth-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil { // it holds the daemon's secret key
			os.RemoveAll(dataDir)
		}
	}()
	str := func(k string) string { v, _ := sc[k].(string); return v }
	a := &config.Auth{Type: config.AuthOAuth, Tokens: config.TokensPrincipal}
	switch {
	case scenario == "auth/client-credentials-basic":
		a.Type, a.Tokens = config.AuthClientCredentials, config.TokensShared
		a.ClientID, a.ClientSecret = str("client_id"), str("client_secret")
	case str("client_id") != "":
		a.ClientID, a.ClientSecret, a.ClientIssuer = str("client_id"), str("client_secret"), str("issuer")
	default:
		a.ClientMetadataURL = cimdURL
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	token := rand.Text()
	cfg := &config.Config{Listen: addr, DataDir: dataDir, Servers: []config.Server{{
		Name: serverName, Transport: config.TransportStreamableHTTP, URL: url,
		VersionNegotiation: mode, StdioProbe: config.StdioProbeSibling, HTTPProbeTimeout: config.HTTPProbeTimeoutFallback,
		DiscoveryTimeout: discoveryTimeout, CallTimeout: callTimeout, Enabled: true, Auth: a,
	}}}
	h, err := host.New(cfg, host.Options{Logger: logger, Version: "conformance", OwnerToken: token, OAuthBaseURL: "http://" + addr})
	if err != nil {
		ln.Close()
		return nil, err
	}
	handler := httpapi.New(h, httpapi.Options{Logger: logger, Hosts: []string{addr}, Version: "conformance"})
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	jar, _ := cookiejar.New(nil)
	d := &daemon{session: &session{h: h}, base: "http://" + addr, token: token, srv: srv, dataDir: dataDir,
		browser: &http.Client{Jar: jar, Timeout: 20 * time.Second},
		api:     &http.Client{Timeout: 30 * time.Second}}
	h.Start(ctx)
	if err := h.WaitSettled(ctx); err != nil {
		d.close()
		return nil, err
	}
	return d, nil
}

func (d *daemon) close() {
	_ = d.srv.Close()
	_ = d.h.Close()
	_ = os.RemoveAll(d.dataDir)
}

// status is the server's state once it has left connecting.
func (d *daemon) status(ctx context.Context) (host.ServerStatus, error) {
	for {
		st, err := d.h.ServerFor(ctx, owner, serverName)
		if err != nil {
			return st, err
		}
		if st.State != host.StateConnecting {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return st, fmt.Errorf("the server is still connecting: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// signInUntilReady signs in as long as the server needs it.
func (d *daemon) signInUntilReady(ctx context.Context) error {
	for i := 0; ; i++ {
		st, err := d.status(ctx)
		if err != nil {
			return err
		}
		switch st.State {
		case host.StateReady:
			d.session.status = st
			fmt.Fprintf(os.Stderr, "conformance-client: ready after %d sign-ins: era=%s protocolVersion=%s\n", i, st.Era, st.ProtocolVersion)
			return nil
		case host.StateNeedsAuth:
		default:
			return fmt.Errorf("server is %s: %s", st.State, st.LastError)
		}
		if i >= maxSignIns {
			return fmt.Errorf("still needs a sign-in after %d: %s", i, st.LastError)
		}
		restarts := st.Since
		if err := d.signIn(ctx); err != nil {
			return err
		}
		// Wait for the supervisor to act on the new credential.
		for {
			cur, err := d.h.ServerFor(ctx, owner, serverName)
			if err != nil {
				return err
			}
			if !cur.Since.Equal(restarts) {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
}

// signIn starts a sign-in through the API, follows its launch URL and
// waits for the flow to end.
func (d *daemon) signIn(ctx context.Context) error {
	var f oauth.Flow
	if err := d.call(ctx, http.MethodPost, "/api/v1/servers/"+serverName+"/auth/start", http.StatusCreated, &f); err != nil {
		return fmt.Errorf("starting the sign-in: %w", err)
	}
	return d.follow(ctx, f)
}

func (d *daemon) follow(ctx context.Context, f oauth.Flow) error {
	if !strings.HasPrefix(f.LaunchURL, d.base+"/oauth/launch/") {
		return fmt.Errorf("the launch URL is not the daemon's own (%q)", origin(f.LaunchURL))
	}
	l, err := oauthtest.OpenLaunch(ctx, d.browser, f.LaunchURL)
	if err != nil {
		return fmt.Errorf("the browser following the launch URL: %w", err)
	}
	fmt.Fprintf(os.Stderr, "conformance-client: the browser confirmed the sign-in page (%v) and ended with HTTP %d\n", l.Asked != "", l.Status)
	var done oauth.Flow
	if err := d.call(ctx, http.MethodGet, "/api/v1/auth/flows/"+f.ID+"?wait=20s", http.StatusOK, &done); err != nil {
		return err
	}
	if done.State != oauth.FlowDone {
		return fmt.Errorf("the sign-in ended %s: %s", done.State, done.Error)
	}
	return nil
}

func origin(u string) string {
	if i := strings.Index(u, "?"); i >= 0 {
		return u[:i]
	}
	return u
}

// call makes an API request as the owner and decodes the answer.
func (d *daemon) call(ctx context.Context, method, path string, want int, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, d.base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := d.api.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	if out != nil {
		return json.Unmarshal(body, out)
	}
	return nil
}

// callTestTool lists the tools and calls test-tool (or the first one),
// answering a step-up by signing in from the call.
func (d *daemon) callTestTool(ctx context.Context) error {
	ts, err := d.h.ToolsFor(ctx, owner.Principal, host.OriginAPI, serverName)
	if err != nil {
		return err
	}
	if len(ts) == 0 {
		return errors.New("the server lists no tools")
	}
	name := ts[0].Tool.Name
	for _, t := range ts {
		if t.Tool.Name == "test-tool" {
			name = t.Tool.Name
		}
	}
	followed := make(chan error, maxSignIns)
	cctx := oauth.WithPrompter(ctx, func(pctx context.Context, p oauth.Prompt) {
		fmt.Fprintf(os.Stderr, "conformance-client: the call asks for a sign-in (%s %s)\n", p.Reason, strings.Join(p.Scopes, " "))
		go func() { followed <- d.follow(pctx, p.Flow) }()
	}, 20*time.Second)
	_, err = d.call2(cctx, name)
	select {
	case ferr := <-followed:
		if err != nil && ferr != nil {
			err = fmt.Errorf("%w (the step-up sign-in: %v)", err, ferr)
		}
	default:
	}
	return err
}

func (d *daemon) call2(ctx context.Context, name string) (any, error) {
	return d.session.call(ctx, name, map[string]any{})
}
