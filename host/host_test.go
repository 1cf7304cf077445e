package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/confine"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/upstream"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/pgtest"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/mcphost/mcphost/negotiate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	wellbehavedPkg = "github.com/mcphost/mcphost/testdata/servers/wellbehaved"
	misbehavePkg   = "github.com/mcphost/mcphost/testdata/servers/misbehave"
	revenuePkg     = "github.com/mcphost/mcphost/testdata/servers/revenue"
)

func TestMain(m *testing.M) {
	confine.MaybeHelper()  // the sandbox helper of the stdio servers the tests start
	code := pgtest.Main(m) // stops the PostgreSQL server of the cluster tests

	testbin.Cleanup()
	os.Exit(code)
}

// stdioServer returns a server block with the defaults the loader fills in.
func stdioServer(name, command string, args ...string) config.Server {
	return config.Server{
		Name:               name,
		Transport:          config.TransportStdio,
		Command:            command,
		Args:               args,
		VersionNegotiation: config.NegotiationLegacy,
		DiscoveryTimeout:   20 * time.Second,
		CallTimeout:        time.Minute,
		Enabled:            true,
	}
}

func remoteServer(name, transport, url string) config.Server {
	return config.Server{
		Name:               name,
		Transport:          transport,
		URL:                url,
		VersionNegotiation: config.NegotiationLegacy,
		DiscoveryTimeout:   20 * time.Second,
		CallTimeout:        time.Minute,
		Enabled:            true,
	}
}

// startHost starts a host over servers and waits until every server has
// finished its first attempt. The host is closed at the end of the test.
func startHost(t *testing.T, opts host.Options, servers ...config.Server) *host.Host {
	t.Helper()
	return startHostConfig(t, &config.Config{Servers: servers}, opts)
}

// startHostConfig is startHost for a whole config.
func startHostConfig(t testing.TB, cfg *config.Config, opts host.Options) *host.Host {
	t.Helper()
	h, err := host.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	h.Start(t.Context())
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if err := h.WaitSettled(ctx); err != nil {
		t.Fatalf("servers did not settle: %v", err)
	}
	return h
}

func mustStatus(t testing.TB, h *host.Host, name string) host.ServerStatus {
	t.Helper()
	st, err := h.Server(name)
	if err != nil {
		t.Fatal(err)
	}
	return st
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

func call(t *testing.T, h *host.Host, server, tool, args string) *mcp.CallToolResult {
	t.Helper()
	res, err := h.CallTool(t.Context(), host.CallToolRequest{Server: server, Tool: tool, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("CallTool %s.%s: %v", server, tool, err)
	}
	return res
}

func TestStdioServer(t *testing.T) {
	bin := testbin.Build(t, wellbehavedPkg)
	dir := t.TempDir()
	s := stdioServer("fx", bin)
	s.Env = map[string]string{"FIXTURE_TEST_VALUE": "from-config"}
	s.Cwd = dir
	h := startHost(t, host.Options{}, s)

	st := mustStatus(t, h, "fx")
	if st.State != host.StateReady {
		t.Fatalf("state = %s, want ready (last error: %s)", st.State, st.LastError)
	}
	if st.ProtocolVersion != negotiate.LegacyVersion || st.Era != host.EraLegacy {
		t.Errorf("era %q protocol %q, want legacy %s", st.Era, st.ProtocolVersion, negotiate.LegacyVersion)
	}
	if st.Evidence == "" || st.PID == 0 {
		t.Errorf("evidence %q pid %d: want both set", st.Evidence, st.PID)
	}
	if st.Prompts != 1 || st.Resources != 1 || st.ResourceTemplates != 1 {
		t.Errorf("prompts/resources/templates = %d/%d/%d, want 1/1/1", st.Prompts, st.Resources, st.ResourceTemplates)
	}

	tools, err := h.Tools("fx")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.QualifiedName())
	}
	for _, want := range []string{"fx.add", "fx.big", "fx.echo", "fx.fail", "fx.slow"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}

	tests := []struct {
		name, tool, args string
		wantText         string
		wantErr          bool
	}{
		{"echo", "echo", `{"text":"héllo"}`, "héllo", false},
		{"add", "add", `{"a":2,"b":40.5}`, "42.5", false},
		{"env reaches the process", "env", `{"name":"FIXTURE_TEST_VALUE"}`, "from-config", false},
		{"cwd is the configured one", "cwd", `{}`, dir, false},
		{"tool failure is a result", "fail", `{}`, "fixture failure", true},
		{"empty arguments", "cwd", ``, dir, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, h, "fx", tc.tool, tc.args)
			if res.IsError != tc.wantErr {
				t.Errorf("IsError = %v, want %v", res.IsError, tc.wantErr)
			}
			if got := textOf(res); !strings.Contains(got, tc.wantText) {
				t.Errorf("text = %q, want it to contain %q", got, tc.wantText)
			}
		})
	}
}

func TestCallErrors(t *testing.T) {
	bin := testbin.Build(t, wellbehavedPkg)
	h := startHost(t, host.Options{}, stdioServer("fx", bin))
	tests := []struct {
		name   string
		req    host.CallToolRequest
		target any
		want   string
	}{
		{"unknown server", host.CallToolRequest{Server: "nope", Tool: "echo"}, new(*host.UnknownServerError), `no server named "nope" (configured: fx)`},
		{"unknown tool", host.CallToolRequest{Server: "fx", Tool: "nope"}, new(*host.UnknownToolError), `server "fx" has no tool "nope" (it has: add, big,`},
		{"array arguments", host.CallToolRequest{Server: "fx", Tool: "echo", Arguments: json.RawMessage(`[1]`)}, new(*host.ArgumentsError), "must be a JSON object"},
		{"broken JSON", host.CallToolRequest{Server: "fx", Tool: "echo", Arguments: json.RawMessage(`{"a":`)}, new(*host.ArgumentsError), "must be a JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.CallTool(t.Context(), tc.req)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.As(err, tc.target) {
				t.Errorf("error %v (%T) is not %T", err, err, tc.target)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

func TestBigResult(t *testing.T) {
	bin := testbin.Build(t, wellbehavedPkg)
	h := startHost(t, host.Options{}, stdioServer("fx", bin))
	const size = 5 << 20
	res := call(t, h, "fx", "big", `{"bytes":5242880}`)
	if got := len(textOf(res)); got != size {
		t.Fatalf("result text is %d bytes, want %d", got, size)
	}
	// The session is still usable after a large frame.
	if got := textOf(call(t, h, "fx", "echo", `{"text":"after"}`)); got != "after" {
		t.Errorf("echo after big = %q", got)
	}
}

func TestProgressTimeoutAndCancel(t *testing.T) {
	bin := testbin.Build(t, wellbehavedPkg)
	s := stdioServer("fx", bin)
	s.CallTimeout = 300 * time.Millisecond
	h := startHost(t, host.Options{}, s)

	t.Run("progress", func(t *testing.T) {
		var mu sync.Mutex
		var got []host.Progress
		res, err := h.CallTool(t.Context(), host.CallToolRequest{
			Server: "fx", Tool: "slow", Arguments: json.RawMessage(`{"ms":200}`),
			OnProgress: func(p host.Progress) { mu.Lock(); got = append(got, p); mu.Unlock() },
		})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(textOf(res), "slept 200 ms") {
			t.Errorf("text = %q", textOf(res))
		}
		mu.Lock()
		defer mu.Unlock()
		if len(got) == 0 {
			t.Error("no progress notification reached the caller")
		}
	})
	t.Run("call_timeout", func(t *testing.T) {
		_, err := h.CallTool(t.Context(), host.CallToolRequest{Server: "fx", Tool: "slow", Arguments: json.RawMessage(`{"ms":60000}`)})
		if err == nil || !strings.Contains(err.Error(), "call_timeout of 300ms") {
			t.Fatalf("error = %v, want the call_timeout named", err)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() {
			_, err := h.CallTool(ctx, host.CallToolRequest{
				Server: "fx", Tool: "slow", Arguments: json.RawMessage(`{"ms":60000}`),
				OnProgress: func(host.Progress) { cancel() }, // cancel once the call is surely running
			})
			errc <- err
		}()
		err := <-errc
		if err == nil || !errors.Is(err, context.Canceled) {
			t.Fatalf("error = %v, want context.Canceled", err)
		}
	})
	// The server survives timeouts and cancellations.
	if got := textOf(call(t, h, "fx", "echo", `{"text":"still here"}`)); got != "still here" {
		t.Errorf("echo = %q", got)
	}
}

// TestHostileServers starts one host with a good server and every kind of bad
// one. Each bad server fails on its own with a clear error within its bound;
// the good one is ready and callable.
func TestHostileServers(t *testing.T) {
	good := testbin.Build(t, wellbehavedPkg)
	bad := testbin.Build(t, misbehavePkg)

	withTimeout := func(s config.Server, d time.Duration) config.Server { s.DiscoveryTimeout = d; return s }
	cases := []struct {
		server  config.Server
		wantErr []string
	}{
		{stdioServer("notfound", "/nonexistent/mcp-server"), []string{"no such file or directory"}},
		{stdioServer("notinpath", "mcphost-no-such-command-xyz"), []string{"executable file not found"}},
		{stdioServer("exits", bad, "-mode", "exit"), []string{"exit status 3", "fixture: exiting"}},
		{withTimeout(stdioServer("garbage", bad, "-mode", "garbage"), 2*time.Second), []string{"not JSON-RPC on stdout"}},
		{withTimeout(stdioServer("silent", bad, "-mode", "silent"), 300*time.Millisecond), []string{"initialize: no answer within 300ms"}},
		{withTimeout(stdioServer("slowinit", bad, "-mode", "slow-init", "-delay", "30s"), 300*time.Millisecond), []string{"no answer within 300ms"}},
		{stdioServer("loop", bad, "-mode", "repeat-cursor"), []string{"tools/list", `repeated a pagination cursor ("same" on page 2)`}},
		{remoteServer("unreachable", config.TransportStreamableHTTP, "http://127.0.0.1:1/mcp"), []string{"connection refused"}},
		{remoteServer("unreachablesse", config.TransportSSE, "http://127.0.0.1:1/sse"), []string{"connection refused"}},
	}
	servers := []config.Server{stdioServer("good", good)}
	for _, c := range cases {
		servers = append(servers, c.server)
	}
	start := time.Now()
	h := startHost(t, host.Options{}, servers...)
	settled := time.Since(start)

	if st := mustStatus(t, h, "good"); st.State != host.StateReady {
		t.Fatalf("good server: %s %s", st.State, st.LastError)
	}
	if got := textOf(call(t, h, "good", "echo", `{"text":"ok"}`)); got != "ok" {
		t.Errorf("good echo = %q", got)
	}
	for _, c := range cases {
		t.Run(c.server.Name, func(t *testing.T) {
			st := mustStatus(t, h, c.server.Name)
			if st.State != host.StateFailed {
				t.Fatalf("state = %s, want failed", st.State)
			}
			for _, want := range c.wantErr {
				if !strings.Contains(st.LastError, want) {
					t.Errorf("last error %q does not contain %q", st.LastError, want)
				}
			}
			if _, err := h.CallTool(t.Context(), host.CallToolRequest{Server: c.server.Name, Tool: "x"}); err == nil {
				t.Error("a failed server accepted a call")
			} else {
				var nr *host.NotReadyError
				if !errors.As(err, &nr) {
					t.Errorf("call error %v is not NotReadyError", err)
				}
			}
		})
	}
	// The slowest bound above is 20s (discovery_timeout) and every failing
	// server fails far sooner; nothing may wait for the others.
	t.Logf("all servers settled in %s", settled)
}

// TestRestartWithBackoff checks that a server that keeps exiting is restarted
// again and again, and that Close leaves no process behind.
func TestRestartWithBackoff(t *testing.T) {
	bad := testbin.Build(t, misbehavePkg)
	var mu sync.Mutex
	pids := map[int]bool{}
	var failures []string
	restarted := make(chan struct{})
	var once sync.Once
	opts := host.Options{
		Restart:    true,
		BackoffMin: 10 * time.Millisecond,
		BackoffMax: 50 * time.Millisecond,
		OnStatus: func(st host.ServerStatus) {
			mu.Lock()
			defer mu.Unlock()
			if st.State == host.StateReady {
				pids[st.PID] = true
			}
			if st.State == host.StateFailed {
				failures = append(failures, st.LastError)
			}
			if st.Restarts >= 3 && st.State == host.StateReady {
				once.Do(func() { close(restarted) })
			}
		},
	}
	h := startHost(t, opts, stdioServer("crashy", bad, "-mode", "crash-after-init"))
	select {
	case <-restarted:
	case <-time.After(time.Minute):
		t.Fatal("server was not restarted three times within a minute")
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	st := mustStatus(t, h, "crashy")
	if st.State != upstream.StateStopped {
		t.Errorf("state after Close = %s, want stopped", st.State)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(failures) == 0 || !strings.Contains(failures[0], "exit status 4") {
		t.Errorf("failures %q do not say how the server exited", failures)
	}
	if len(pids) < 3 {
		t.Errorf("saw %d distinct processes, want >= 3", len(pids))
	}
	for pid := range pids {
		assertGone(t, pid)
	}
}

// TestCloseReapsChildren checks that Close ends a running server.
func TestCloseReapsChildren(t *testing.T) {
	bin := testbin.Build(t, wellbehavedPkg)
	h := startHost(t, host.Options{}, stdioServer("a", bin), stdioServer("b", bin))
	var pids []int
	for _, st := range h.Servers() {
		if st.State != host.StateReady {
			t.Fatalf("%s: %s", st.Name, st.State)
		}
		pids = append(pids, st.PID)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		assertGone(t, pid)
	}
	for _, st := range h.Servers() {
		if st.State != upstream.StateStopped {
			t.Errorf("%s: state %s after Close, want stopped", st.Name, st.State)
		}
	}
}

// TestCloseBeforeStart: a host closed without ever starting has no
// server to wait for: Close returns at once without an error (it used to
// wait out shutdownBound for supervisors that never ran, then report them
// as still stopping), and removes its temporary sandbox directory.
func TestCloseBeforeStart(t *testing.T) {
	bin := testbin.Build(t, wellbehavedPkg)
	h, err := host.New(&config.Config{Servers: []config.Server{stdioServer("a", bin), stdioServer("b", bin)}}, host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatalf("Close before Start: %v", err)
	}
}

// assertGone fails when a process with this pid still exists (reaped
// processes are gone; zombies would still answer signal 0).
func assertGone(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d still exists after Close (kill 0: %v)", pid, err)
	}
}

func TestDisabledServer(t *testing.T) {
	s := stdioServer("off", "/nonexistent")
	s.Enabled = false
	h := startHost(t, host.Options{}, s)
	if st := mustStatus(t, h, "off"); st.State != upstream.StateDisabled {
		t.Errorf("state = %s, want disabled", st.State)
	}
}

func TestPagination(t *testing.T) {
	bad := testbin.Build(t, misbehavePkg)
	h := startHost(t, host.Options{}, stdioServer("raw", bad, "-mode", "ok"))
	tools, err := h.Tools("raw")
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 3 {
		t.Fatalf("got %d tools across pages, want 3", len(tools))
	}
	if got := textOf(call(t, h, "raw", "hello", `{}`)); got != "hello from raw" {
		t.Errorf("hello = %q", got)
	}
}

// TestToolListChanged checks that a server's list_changed notification makes
// the host fetch the catalog again.
func TestToolListChanged(t *testing.T) {
	bin := testbin.Build(t, wellbehavedPkg)
	refreshed := make(chan struct{}, 10)
	opts := host.Options{OnStatus: func(st host.ServerStatus) {
		if st.State == host.StateReady {
			refreshed <- struct{}{}
		}
	}}
	h := startHost(t, opts, stdioServer("fx", bin))
	<-refreshed // ready
	before := mustStatus(t, h, "fx").Tools
	if got := textOf(call(t, h, "fx", "grow", `{"name":"grown"}`)); got != "added grown" {
		t.Fatalf("grow = %q", got)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for mustStatus(t, h, "fx").Tools == before {
		select {
		case <-refreshed:
		case <-ctx.Done():
			t.Fatal("the catalog was not refreshed after tools/list_changed")
		}
	}
	if got := textOf(call(t, h, "fx", "grown", `{"text":"new"}`)); got != "new" {
		t.Errorf("grown = %q", got)
	}
}

// TestAutoNegotiationWithEraCache connects a dual-era go-sdk server in auto
// mode: the first start probes a sibling (two processes) and connects
// modern; a restart with the same store finds the verdict in the era cache
// and starts one process only.
func TestAutoNegotiationWithEraCache(t *testing.T) {
	bin := testbin.Build(t, wellbehavedPkg)
	dir := t.TempDir()
	// The fixture appends a line to starts at each start: a file its
	// sandbox lets it write, whichever uid it runs as.
	shared := testbin.SandboxDir(t)
	starts := shared + "/starts"
	st, err := store.Open(t.Context(), dir+"/mcphost.db", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := stdioServer("fx", bin)
	s.VersionNegotiation = config.NegotiationAuto
	s.StdioProbe = config.StdioProbeSibling
	s.Env = map[string]string{"FIXTURE_STARTS": starts}
	s.Sandbox.Write = []string{shared}
	countStarts := func() int {
		b, _ := os.ReadFile(starts)
		return strings.Count(string(b), "\n")
	}

	for i, want := range []struct {
		starts   int
		evidence string
	}{
		{2, "modern: server/discover offered 2026-07-28"},
		{3, "modern: cached verdict"},
	} {
		h, err := host.New(&config.Config{Servers: []config.Server{s}}, host.Options{Store: st})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		h.Start(ctx)
		if err := h.WaitSettled(ctx); err != nil {
			t.Fatal(err)
		}
		got := mustStatus(t, h, "fx")
		if got.State != host.StateReady || got.Era != host.EraModern || got.ProtocolVersion != "2026-07-28" {
			t.Errorf("start %d: %s era %q version %q (%s)", i+1, got.State, got.Era, got.ProtocolVersion, got.LastError)
		}
		if !strings.HasPrefix(got.Evidence, want.evidence) {
			t.Errorf("start %d: evidence %q, want prefix %q", i+1, got.Evidence, want.evidence)
		}
		if got := textOf(call(t, h, "fx", "echo", `{"text":"modern"}`)); got != "modern" {
			t.Errorf("start %d: echo = %q", i+1, got)
		}
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
		cancel()
		if n := countStarts(); n != want.starts {
			t.Errorf("after start %d: %d processes started in all, want %d", i+1, n, want.starts)
		}
	}
}

// TestMaxRestarts: a server that keeps failing is restarted max_restarts
// times, then stays failed with its last error and no next attempt.
func TestMaxRestarts(t *testing.T) {
	bad := testbin.Build(t, misbehavePkg)
	gaveUp := make(chan host.ServerStatus, 1)
	opts := host.Options{
		Restart:    true,
		BackoffMin: 10 * time.Millisecond,
		BackoffMax: 20 * time.Millisecond,
		OnStatus: func(st host.ServerStatus) {
			if st.State == host.StateFailed && strings.Contains(st.LastError, "gave up") {
				select {
				case gaveUp <- st:
				default:
				}
			}
		},
	}
	s := stdioServer("crashy", bad, "-mode", "crash-after-init")
	s.MaxRestarts = 2
	h := startHost(t, opts, s)
	var st host.ServerStatus
	select {
	case st = <-gaveUp:
	case <-time.After(time.Minute):
		t.Fatal("the server was never given up on")
	}
	if st.Restarts != 2 || !st.NextAttempt.IsZero() || !strings.Contains(st.LastError, "exit status 4") || !strings.Contains(st.LastError, "max_restarts") {
		t.Fatalf("status after giving up: restarts %d, next attempt %v, last error %q", st.Restarts, st.NextAttempt, st.LastError)
	}
	if now := mustStatus(t, h, "crashy"); now.State != host.StateFailed || now.Restarts != 2 {
		t.Fatalf("later: %s after %d restarts, want failed after 2", now.State, now.Restarts)
	}
}

// lockedBuffer is an io.Writer that several goroutines may log to.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestFailedServerSaysWhy: a server that fails the way `npx` does for a
// package the registry does not have (its log path changes each time,
// npm's update notice comes last) leads its error with npm's own reason,
// without the notice; its failures count as one cause, and once it has
// failed the same way three times its stderr is no longer logged at info
// level on each attempt.
func TestFailedServerSaysWhy(t *testing.T) {
	bad := testbin.Build(t, misbehavePkg)
	var logs lockedBuffer
	gaveUp := make(chan host.ServerStatus, 1)
	var scheduled atomic.Bool // a status that says when the next try is
	opts := host.Options{
		Restart:    true,
		BackoffMin: time.Millisecond,
		BackoffMax: 2 * time.Millisecond,
		Logger:     slog.New(slog.NewTextHandler(&logs, nil)),
		OnStatus: func(st host.ServerStatus) {
			if st.State == host.StateFailed && !st.NextAttempt.IsZero() {
				scheduled.Store(true)
			}
			if st.State == host.StateFailed && strings.Contains(st.LastError, "gave up") {
				select {
				case gaveUp <- st:
				default:
				}
			}
		},
	}
	s := stdioServer("broken", bad, "-mode", "npm-404")
	s.MaxRestarts = 7
	startHost(t, opts, s)
	var st host.ServerStatus
	select {
	case st = <-gaveUp:
	case <-time.After(time.Minute):
		t.Fatal("the server was never given up on")
	}
	if !strings.HasPrefix(st.LastError, "npm error 404 Not Found - GET http://127.0.0.1:9/@fixture%2fnope - Not found — connect: ") {
		t.Errorf("the error does not lead with npm's reason: %s", st.LastError)
	}
	if strings.Contains(st.LastError, "npm notice") || strings.Contains(st.LastError, "_logs") {
		t.Errorf("the error quotes npm's noise: %s", st.LastError)
	}
	if !scheduled.Load() {
		t.Error("no status said when the failed server is tried next")
	}
	out := logs.String()
	// 8 attempts, 6 stderr lines each: only the first three attempts' at
	// info level.
	if n := strings.Count(out, `msg="server stderr"`); n != 3*6 {
		t.Errorf("%d stderr lines logged at info level, want %d (three attempts)\n%s", n, 3*6, out)
	}
	// Failures 1, 2, 3, 4 and 8 of the one cause.
	if n := strings.Count(out, "level=WARN msg=\"server failed"); n > 5 {
		t.Errorf("%d failure lines for 8 failures of one cause, want at most 5\n%s", n, out)
	}
}
