package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/confine"
	"github.com/mcphost/mcphost/gateway"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/boot"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/fixture"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/mcphost/mcphost/policies"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	wellbehavedPkg = "github.com/mcphost/mcphost/testdata/servers/wellbehaved"
	aliceToken     = "alice-token-0123456789abcdef0123"
	bobToken       = "bob-token-0123456789abcdef012345"
	legacyVersion  = "2025-11-25"
	modernVersion  = "2026-07-28"
	// waitBound only keeps a broken test from hanging.
	waitBound = 60 * time.Second
)

func TestMain(m *testing.M) {
	confine.MaybeHelper() // the sandbox helper of the stdio servers the tests start
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

func stdioServer(name, command string) config.Server {
	return config.Server{
		Name: name, Transport: config.TransportStdio, Command: command,
		VersionNegotiation: config.NegotiationLegacy, DiscoveryTimeout: 20 * time.Second,
		CallTimeout: time.Minute, Enabled: true, Apps: config.AppsAuto,
	}
}

// env is a running daemon: host, store, gateway on a real listener.
type env struct {
	h    *host.Host
	st   *store.Store
	gw   *gateway.Gateway
	cfg  *config.Config
	srv  *http.Server
	base string
}

// newEnv starts a host with one wellbehaved stdio server per name, the
// principals alice (admin, group analysts) and bob, the rules given, and
// the gateway on 127.0.0.1:0.
func newEnv(t testing.TB, servers []string, rules ...policies.Rule) *env {
	t.Helper()
	bin := testbin.Build(t, wellbehavedPkg)
	var blocks []config.Server
	for _, s := range servers {
		blocks = append(blocks, stdioServer(s, bin))
	}
	return newEnvServers(t, blocks, rules...)
}

// newEnvServers is newEnv with the given server blocks.
func newEnvServers(t testing.TB, blocks []config.Server, rules ...policies.Rule) *env {
	t.Helper()
	var set *policies.Set
	if len(rules) > 0 {
		var errs []policies.CompileError
		set, errs = policies.Compile(rules, policies.EffectAllow)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
	}
	return newEnvConfig(t, &config.Config{Servers: blocks, PolicySet: set})
}

// newEnvConfig is newEnv for a config whose servers and policies are set:
// it adds the principals (unless cfg has them), the admin and the gateway
// block.
func newEnvConfig(t testing.TB, cfg *config.Config) *env {
	t.Helper()
	return newEnvOpts(t, cfg, func(net.Listener) gateway.Options { return gateway.Options{Version: "test"} }, nil)
}

// newEnvOpts is newEnvConfig with the gateway's options made for the
// listener, and wrap (when set) around the daemon's handler.
func newEnvOpts(t testing.TB, cfg *config.Config, gwOpts func(net.Listener) gateway.Options, wrap func(http.Handler) http.Handler) *env {
	t.Helper()
	return newEnvApproval(t, cfg, gwOpts, wrap, 2*time.Second)
}

// newEnvApproval is newEnvOpts with the host's approval timeout.
func newEnvApproval(t testing.TB, cfg *config.Config, gwOpts func(net.Listener) gateway.Options, wrap func(http.Handler) http.Handler, approvalTimeout time.Duration) *env {
	t.Helper()
	principals := cfg.Principals
	if principals == nil {
		principals = []config.Principal{
			{Name: "alice", Token: aliceToken, Groups: []string{"analysts"}},
			{Name: "bob", Token: bobToken},
		}
	}
	// The gateway block's caps and timeout are kept when set.
	gwCfg := config.Gateway{Enabled: true, SessionTimeout: cfg.Gateway.SessionTimeout,
		MaxSessionsPerPrincipal: cfg.Gateway.MaxSessionsPerPrincipal, MaxSessions: cfg.Gateway.MaxSessions,
		Discovery: cfg.Gateway.Discovery, DiscoveryThreshold: cfg.Gateway.DiscoveryThreshold, Pin: cfg.Gateway.Pin}
	if gwCfg.DiscoveryThreshold == 0 {
		gwCfg.DiscoveryThreshold = config.DefaultDiscoveryThreshold
	}
	if gwCfg.SessionTimeout == 0 {
		gwCfg.SessionTimeout = config.DefaultGatewaySessionTimeout
	}
	*cfg = config.Config{Servers: cfg.Servers, PolicySet: cfg.PolicySet, Store: cfg.Store,
		Principals: principals,
		Admins:     []string{"alice"},
		Gateway:    gwCfg,
	}
	var st *store.Store
	var err error
	if cfg.Store.Postgres != "" {
		st, err = store.OpenPostgres(t.Context(), cfg.Store.Postgres, nil, boot.StoreOptions(cfg))
	} else {
		st, err = store.OpenWith(t.Context(), filepath.Join(t.TempDir(), "mcphost.db"), nil, boot.StoreOptions(cfg))
	}
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(cfg, host.Options{Store: st, ApprovalTimeout: approvalTimeout})
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	h.Start(context.Background())
	wctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	if err := h.WaitSettled(wctx); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gw := gateway.New(h, gwOpts(ln))
	var handler http.Handler = gateway.Mount(gw, http.NotFoundHandler())
	if wrap != nil {
		handler = wrap(handler)
	}
	srv := &http.Server{Handler: handler}
	go srv.Serve(ln)
	t.Cleanup(func() {
		srv.Close()
		gw.Close()
		if err := h.Close(); err != nil {
			t.Errorf("host Close: %v", err)
		}
		st.Close()
	})
	return &env{h: h, st: st, gw: gw, cfg: cfg, srv: srv, base: "http://" + ln.Addr().String()}
}

// bearer adds a token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// connect opens a go-sdk client session on path in the given era.
func (e *env) connect(t testing.TB, path, token, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "gateway-test", Version: "1.0"}, opts)
	tr := &mcp.StreamableClientTransport{Endpoint: e.base + path,
		HTTPClient: &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}}
	ctx, cancel := context.WithTimeout(t.Context(), waitBound)
	defer cancel()
	cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect %s (%s): %v", path, version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func toolNames(t testing.TB, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestBothEras lists, calls, gets a prompt and reads a resource through
// /mcp and /mcp/servers/NAME with go-sdk's client in either era.
func TestBothEras(t *testing.T) {
	e := newEnv(t, []string{"fx", "alt"})
	for _, version := range []string{legacyVersion, modernVersion} {
		t.Run(version, func(t *testing.T) {
			cs := e.connect(t, "/mcp", aliceToken, version, nil)
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("negotiated %s, want %s", got, version)
			}
			names := toolNames(t, cs)
			for _, want := range []string{"fx__echo", "alt__echo", "fx__slow"} {
				if !slices.Contains(names, want) {
					t.Fatalf("tools/list has no %s: %v", want, names)
				}
			}
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alt__echo", Arguments: map[string]any{"text": "hi " + version}})
			if err != nil || res.IsError || textOf(res) != "hi "+version {
				t.Fatalf("call alt__echo = %+v, %v", res, err)
			}

			prompts, err := cs.ListPrompts(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var pn []string
			for _, p := range prompts.Prompts {
				pn = append(pn, p.Name)
			}
			if !slices.Contains(pn, "fx__greet") {
				t.Fatalf("prompts = %v, want fx__greet", pn)
			}
			gp, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "fx__greet", Arguments: map[string]string{"name": "Ada"}})
			if err != nil || len(gp.Messages) == 0 {
				t.Fatalf("prompts/get = %+v, %v", gp, err)
			}

			rs, err := cs.ListResources(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var uris []string
			for _, r := range rs.Resources {
				uris = append(uris, r.URI)
			}
			if !slices.Contains(uris, "fx+fixture://readme") {
				t.Fatalf("resources = %v, want fx+fixture://readme", uris)
			}
			rr, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "fx+fixture://readme"})
			if err != nil || len(rr.Contents) != 1 || rr.Contents[0].URI != "fx+fixture://readme" || rr.Contents[0].Text == "" {
				t.Fatalf("resources/read = %+v, %v", rr, err)
			}
			if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "nosuch+fixture://readme"}); err == nil {
				t.Fatal("reading a resource of no server succeeded")
			}
			// The read is an entry of the client's transcript session.
			if st := lastStatus(t, e, "fixture://readme"); st != store.StatusOK {
				t.Fatalf("the read's transcript entry has status %q, want ok", st)
			}

			// The passthrough endpoint keeps the server's own names.
			one := e.connect(t, "/mcp/servers/fx", aliceToken, version, nil)
			if names := toolNames(t, one); !slices.Contains(names, "echo") || slices.Contains(names, "fx__echo") {
				t.Fatalf("passthrough tools = %v", names)
			}
			rr, err = one.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "fixture://readme"})
			if err != nil || rr.Contents[0].URI != "fixture://readme" {
				t.Fatalf("passthrough read = %+v, %v", rr, err)
			}
		})
	}
}

// TestAuthentication: no token, a wrong token and a WebShell credential get
// 401 with a WWW-Authenticate challenge; an unknown path 404.
func TestAuthentication(t *testing.T) {
	e := newEnv(t, []string{"fx"})
	ws, _, err := e.h.WebShellSignIn(aliceToken)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, tc := range []struct {
		name, path, auth string
		status           int
		challenge        string
	}{
		{"no token", "/mcp", "", 401, `Bearer realm="mcphost"`},
		{"wrong token", "/mcp", "Bearer nope", 401, `error="invalid_token"`},
		{"basic auth", "/mcp", "Basic YTpi", 401, `error="invalid_token"`},
		{"webshell credential", "/mcp", "Bearer " + ws, 401, `error="invalid_token"`},
		{"unknown endpoint", "/mcp/servers/nosuch", "Bearer " + aliceToken, 404, ""},
		{"good token", "/mcp", "Bearer " + aliceToken, 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", e.base+tc.path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if got := resp.Header.Get("WWW-Authenticate"); !strings.Contains(got, tc.challenge) {
				t.Fatalf("WWW-Authenticate = %q, want it to contain %q", got, tc.challenge)
			}
		})
	}
}

// TestHiddenServerEndpoint: /mcp/servers/NAME of a server the caller's
// list rules hide answers as one that does not exist, in both eras and on
// stdio; without a token, an existing and a missing server both answer 401
// (research/redteam.md F16).
func TestHiddenServerEndpoint(t *testing.T) {
	e := newEnv(t, []string{"fx", "secret"},
		policies.Rule{Name: "secret-from-bob", Phase: policies.PhaseList, Effect: policies.EffectDeny, When: `server == "secret" && principal.name == "bob"`})
	modern := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + modernVersion +
		`","io.modelcontextprotocol/clientInfo":{"name":"held","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	post := func(token, name, version string) answer {
		body := initializeBody
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.base+"/mcp/servers/"+name, nil)
		if version == modernVersion {
			body = modern
			req.Header.Set("Mcp-Protocol-Version", modernVersion)
			req.Header.Set("Mcp-Method", "tools/list")
		}
		req.Body = io.NopCloser(strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		// The path is echoed in the message: compare the rest.
		return answer{status: resp.StatusCode, header: resp.Header, body: []byte(strings.ReplaceAll(string(b), name, "NAME"))}
	}
	for _, version := range []string{legacyVersion, modernVersion} {
		t.Run(version, func(t *testing.T) {
			for _, tc := range []struct {
				who, token string
				status     int
			}{{"no token", "", http.StatusUnauthorized}, {"bob", bobToken, http.StatusNotFound}} {
				hidden, missing := post(tc.token, "secret", version), post(tc.token, "nosuch", version)
				if hidden.status != tc.status || missing.status != tc.status || string(hidden.body) != string(missing.body) ||
					hidden.header.Get("WWW-Authenticate") != missing.header.Get("WWW-Authenticate") {
					t.Errorf("%s: hidden server %d %s, missing server %d %s; want both %d and alike",
						tc.who, hidden.status, hidden.body, missing.status, missing.body, tc.status)
				}
			}
			if a := post(aliceToken, "secret", version); a.status != http.StatusOK {
				t.Errorf("alice, who may see secret: %d %s", a.status, a.body)
			}
		})
	}
	bob, ok := e.h.GatewayAuthenticate(bobToken)
	if !ok {
		t.Fatal("bob's token")
	}
	for _, name := range []string{"secret", "nosuch"} {
		// The client end is closed at once: an endpoint that were served
		// would end with the client, not hang the test.
		ct, st := mcp.NewInMemoryTransports()
		if c, err := ct.Connect(t.Context()); err == nil {
			c.Close()
		}
		err := e.gw.ServeStdio(t.Context(), "/mcp/servers/"+name, bob, st)
		if err == nil || !strings.Contains(err.Error(), "no MCP endpoint at /mcp/servers/"+name) {
			t.Errorf("stdio %s as bob: %v, want no MCP endpoint", name, err)
		}
	}
}

// TestPolicies: a call rule's denial is a tool error the model can read; a
// list rule hides tools (a hidden tool is unknown); a principal whose rules
// hide everything sees an empty catalog; every call is a transcript entry of
// origin gateway in a session titled with the client's name.
func TestPolicies(t *testing.T) {
	e := newEnv(t, []string{"fx"},
		policies.Rule{Name: "bob-sees-nothing", Phase: policies.PhaseList, Effect: policies.EffectDeny, When: `principal.name == "bob"`},
		policies.Rule{Name: "no-fail", Phase: policies.PhaseList, Effect: policies.EffectDeny, When: `tool.name == "fail"`},
		policies.Rule{Name: "no-shouting", Phase: policies.PhaseCall, Effect: policies.EffectDeny, When: `origin == "gateway" && client.name == "gateway-test" && args.text == "SHOUT"`, Message: "no shouting through the gateway"},
	)
	for _, version := range []string{legacyVersion, modernVersion} {
		t.Run(version, func(t *testing.T) {
			cs := e.connect(t, "/mcp", aliceToken, version, nil)
			names := toolNames(t, cs)
			if slices.Contains(names, "fx__fail") || !slices.Contains(names, "fx__echo") {
				t.Fatalf("tools = %v: want fx__echo and no fx__fail", names)
			}
			if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "fx__fail"}); err == nil || !strings.Contains(err.Error(), `unknown tool "fx__fail"`) {
				t.Fatalf("calling a hidden tool: %v, want unknown tool", err)
			}
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "fx__echo", Arguments: map[string]any{"text": "SHOUT"}})
			if err != nil || !res.IsError || !strings.Contains(textOf(res), "no shouting through the gateway") {
				t.Fatalf("denied call = %+v, %v; want a tool error with the policy's message", res, err)
			}

			bob := e.connect(t, "/mcp", bobToken, version, nil)
			if names := toolNames(t, bob); len(names) != 0 {
				t.Fatalf("bob sees %v, want nothing", names)
			}
			if _, err := bob.CallTool(t.Context(), &mcp.CallToolParams{Name: "fx__echo", Arguments: map[string]any{"text": "x"}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
				t.Fatalf("bob's call: %v, want unknown tool", err)
			}
			if rs, err := bob.ListResources(t.Context(), nil); err != nil || len(rs.Resources) != 0 {
				t.Fatalf("bob's resources = %+v, %v; want none", rs, err)
			}
		})
	}
	sessions, err := e.h.Sessions(t.Context(), host.Principal{Name: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	var denied, titled int
	for _, s := range sessions {
		if !strings.HasPrefix(s.Title, "Gateway: gateway-test 1.0") {
			continue
		}
		titled++
		entries, _, err := e.h.Entries(t.Context(), host.Principal{Name: "alice"}, s.ID, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, en := range entries {
			if en.Origin != host.OriginGateway {
				t.Errorf("entry origin %q, want gateway", en.Origin)
			}
			if en.Status == store.StatusDenied {
				denied++
			}
		}
	}
	if titled == 0 || denied != 2 {
		t.Fatalf("gateway sessions %d, denied entries %d; want sessions and 2 denied entries (one per era)", titled, denied)
	}
}

// TestProgressAndCancellation: progress reaches the client under its own
// token; a client that gives up cancels the upstream call, and the entry
// says cancelled.
func TestProgressAndCancellation(t *testing.T) {
	e := newEnv(t, []string{"fx"})
	for _, version := range []string{legacyVersion, modernVersion} {
		t.Run(version, func(t *testing.T) {
			got := make(chan *mcp.ProgressNotificationParams, 16)
			cs := e.connect(t, "/mcp", aliceToken, version, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
					select {
					case got <- r.Params:
					default:
					}
				},
			})
			params := &mcp.CallToolParams{Name: "fx__slow", Arguments: map[string]any{"ms": 60000}}
			params.SetProgressToken("my-token")
			ctx, cancel := context.WithCancel(t.Context())
			errc := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, params)
				errc <- err
			}()
			select {
			case p := <-got:
				if p.ProgressToken != "my-token" {
					t.Fatalf("progress token %v, want my-token", p.ProgressToken)
				}
			case <-time.After(waitBound):
				t.Fatal("no progress")
			}
			cancel()
			select {
			case err := <-errc:
				if err == nil {
					t.Fatal("a cancelled call succeeded")
				}
			case <-time.After(waitBound):
				t.Fatal("the cancelled call did not return")
			}
			// The entry is recorded once the upstream call has ended.
			deadline := time.Now().Add(waitBound)
			for {
				if st := lastStatus(t, e, "slow"); st == store.StatusCancelled {
					break
				} else if time.Now().After(deadline) {
					t.Fatalf("last slow entry is %q, want cancelled", st)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// lastStatus returns the status of alice's newest entry of tool.
func lastStatus(t *testing.T, e *env, tool string) string {
	t.Helper()
	p := host.Principal{Name: "alice"}
	sessions, err := e.h.Sessions(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	var newest store.Entry
	for _, s := range sessions {
		entries, _, err := e.h.Entries(t.Context(), p, s.ID, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, en := range entries {
			if en.Tool == tool && en.StartedAt.After(newest.StartedAt) {
				newest = en
			}
		}
	}
	return newest.Status
}

// TestListChanged: a tool an upstream adds reaches a legacy session as
// notifications/tools/list_changed and is listed and callable.
func TestListChanged(t *testing.T) {
	e := newEnv(t, []string{"fx"})
	changed := make(chan struct{}, 8)
	cs := e.connect(t, "/mcp", aliceToken, legacyVersion, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	before := toolNames(t, cs)
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "fx__grow", Arguments: map[string]any{"name": "sprout"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(waitBound):
		t.Fatal("no tools/list_changed")
	}
	after := toolNames(t, cs)
	if !slices.Contains(after, "fx__sprout") || len(after) != len(before)+1 {
		t.Fatalf("after grow: %v (before %v)", after, before)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "fx__sprout", Arguments: map[string]any{"text": "leaf"}})
	if err != nil || textOf(res) != "leaf" {
		t.Fatalf("call fx__sprout = %+v, %v", res, err)
	}
}

// TestNames: tools whose SERVER__TOOL names collide are served under
// neither name and reported in the server's status; a long name is
// shortened with a hash and callable.
func TestNames(t *testing.T) {
	e := newEnv(t, []string{"x", "x_"})
	cs := e.connect(t, "/mcp", aliceToken, modernVersion, nil)
	// x's "_echo" and x_'s "echo" are both x___echo.
	grow := func(name string) {
		t.Helper()
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "x__grow", Arguments: map[string]any{"name": name}}); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("L", 100)
	grow("_echo")
	grow(strings.Repeat("T", 200)) // past the spec's 128: the host leaves it out
	grow(long)
	longName := host.GatewayName("x", long)
	if len(longName) > maxToolName {
		t.Fatalf("GatewayName is %d characters", len(longName))
	}
	deadline := time.Now().Add(waitBound)
	var names []string
	for {
		names = toolNames(t, cs)
		if slices.Contains(names, longName) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never listed: %v", longName, names)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if slices.Contains(names, "x___echo") {
		t.Fatalf("the colliding name x___echo is served: %v", names)
	}
	if !slices.Contains(names, "x__echo") || !slices.Contains(names, "x___grow") {
		t.Fatalf("tools that do not collide are missing: %v", names)
	}
	for _, n := range names {
		if len(n) > maxToolName {
			t.Errorf("a served name has %d characters: %s", len(n), n)
		}
	}
	rejected := false
	for _, st := range e.h.Servers() {
		for _, r := range st.RejectedTools {
			rejected = rejected || strings.HasPrefix(r.Name, "TTTT")
		}
	}
	if !rejected {
		t.Error("the 200-character tool is not reported as rejected")
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: longName, Arguments: map[string]any{"text": "long"}})
	if err != nil || textOf(res) != "long" {
		t.Fatalf("call %s = %+v, %v", longName, res, err)
	}
	var reported []string
	for _, st := range e.h.Servers() {
		for _, c := range st.NameCollisions {
			reported = append(reported, fmt.Sprintf("%s.%s=%s", st.Name, c.Tool, c.Name))
		}
	}
	slices.Sort(reported)
	if want := []string{"x._echo=x___echo", "x_.echo=x___echo"}; !slices.Equal(reported, want) {
		t.Fatalf("collisions reported %v, want %v", reported, want)
	}
}

// TestLogMessages: a client's logging/setLevel reaches the server, and the
// server's log messages during the client's call reach that client.
func TestLogMessages(t *testing.T) {
	e := newEnv(t, []string{"fx"})
	logs := make(chan *mcp.LoggingMessageParams, 8)
	cs := e.connect(t, "/mcp", aliceToken, legacyVersion, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			select {
			case logs <- r.Params:
			default:
			}
		},
	})
	if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "fx__slow", Arguments: map[string]any{"ms": 200}}); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-logs:
		if p.Data != "sleeping 200 ms" || p.Level != "info" {
			t.Fatalf("log message %+v", p)
		}
	case <-time.After(waitBound):
		t.Fatal("no log message")
	}
}

// TestUpstreamErrorPassedThrough: a server's JSON-RPC error reaches the
// client with its code, message and data.
func TestUpstreamErrorPassedThrough(t *testing.T) {
	e := newEnv(t, []string{"fx"})
	for _, version := range []string{legacyVersion, modernVersion} {
		cs := e.connect(t, "/mcp", aliceToken, version, nil)
		_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "fx__fail", Arguments: map[string]any{"code": -32042}})
		var je *jsonrpc.Error
		if !errors.As(err, &je) {
			t.Fatalf("%s: error %v (%T), want a JSON-RPC error", version, err, err)
		}
		if je.Code != -32042 || string(je.Data) != fixture.RPCErrorData || !strings.Contains(je.Message, fixture.FailText) {
			t.Fatalf("%s: error %d %q %s, want -32042 with the fixture's message and data", version, je.Code, je.Message, je.Data)
		}
	}
}

// answer is one raw HTTP answer of the gateway.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// rpcError decodes a JSON-RPC error answer.
func (a answer) rpcError(t *testing.T) (code int64, message string) {
	t.Helper()
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(a.body, &m); err != nil || m.JSONRPC != "2.0" || m.Error == nil {
		t.Fatalf("answer %d %q is not a JSON-RPC error (%v)", a.status, a.body, err)
	}
	return m.Error.Code, m.Error.Message
}

// initializeBody opens a 2025-11-25 session.
const initializeBody = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + legacyVersion + `","capabilities":{},"clientInfo":{"name":"held","version":"1"}}}`

// maxToolName is the longest tool name the gateway serves (several model
// APIs accept no more than 64 characters).
const maxToolName = 64
