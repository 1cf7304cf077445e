package testbin_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/internal/fixture"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	wellbehaved = "github.com/mcphost/mcphost/testdata/servers/wellbehaved"
	misbehave   = "github.com/mcphost/mcphost/testdata/servers/misbehave"
	revenue     = "github.com/mcphost/mcphost/testdata/servers/revenue"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

var clientOpts = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}

func newClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "testbin-test", Version: "1.0.0"}, nil)
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("result isError=%v with %d blocks, want one text block", res.IsError, len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content %T, want text", res.Content[0])
	}
	return tc.Text
}

func TestBuildOnce(t *testing.T) {
	var (
		mu    sync.Mutex
		paths = map[string]bool{}
	)
	t.Run("group", func(t *testing.T) {
		for i := range 4 {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				p := testbin.Build(t, misbehave)
				mu.Lock()
				paths[p] = true
				mu.Unlock()
			})
		}
	})
	if len(paths) != 1 {
		t.Fatalf("concurrent builds gave %d paths, want 1: %v", len(paths), paths)
	}
	var bin string
	for p := range paths {
		bin = p
	}
	if fi, err := os.Stat(bin); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("binary %s: %v %v", bin, fi, err)
	}
	if again := testbin.Build(t, misbehave); again != bin {
		t.Errorf("a repeated build moved the binary: %s, then %s", bin, again)
	}
	if other := testbin.Build(t, wellbehaved); other == bin {
		t.Errorf("two import paths share the binary %s", other)
	}
}

// TestWellbehavedStdio runs a real session over stdio and checks the env,
// cwd and stderr plumbing a host relies on.
func TestWellbehavedStdio(t *testing.T) {
	bin := testbin.Build(t, wellbehaved)
	dir := t.TempDir()
	cmd := exec.Command(bin)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TESTBIN_VAR=from-the-test")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr

	cs, err := newClient().Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, clientOpts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if got := cs.InitializeResult().ServerInfo; got.Name != fixture.Name || got.Version != fixture.Version {
		t.Errorf("server info %+v", got)
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "over stdio"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, res); got != "over stdio" {
		t.Errorf("echo = %q", got)
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "big"})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(text(t, res)); got != 5*1024*1024 {
		t.Errorf("big returned %d bytes, want %d", got, 5*1024*1024)
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "env", Arguments: map[string]any{"name": "TESTBIN_VAR"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, res); got != "from-the-test" {
		t.Errorf("env = %q", got)
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "cwd"})
	if err != nil {
		t.Fatal(err)
	}
	wantDir, _ := filepath.EvalSymlinks(dir)
	if got, _ := filepath.EvalSymlinks(text(t, res)); got != wantDir {
		t.Errorf("cwd = %q, want %q", got, wantDir)
	}

	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d, want 0 after stdin closed", code)
	}
	if !strings.Contains(stderr.String(), "fixture: started") {
		t.Errorf("stderr %q lacks the start line", stderr.String())
	}
}

// TestWellbehavedHTTP starts the HTTP transports on 127.0.0.1:0 and connects
// to the URL the process prints first.
func TestWellbehavedHTTP(t *testing.T) {
	bin := testbin.Build(t, wellbehaved)
	tests := []struct {
		flag      string
		transport func(url string) mcp.Transport
	}{
		{"-http", func(url string) mcp.Transport { return &mcp.StreamableClientTransport{Endpoint: url} }},
		{"-sse", func(url string) mcp.Transport { return &mcp.SSEClientTransport{Endpoint: url} }},
	}
	for _, tc := range tests {
		t.Run(tc.flag, func(t *testing.T) {
			cmd := exec.Command(bin, tc.flag, "127.0.0.1:0")
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

			line, err := bufio.NewReader(stdout).ReadString('\n')
			if err != nil {
				t.Fatalf("reading the URL line: %v", err)
			}
			url := strings.TrimSpace(line)
			if !strings.HasPrefix(url, "http://127.0.0.1:") {
				t.Fatalf("first stdout line %q is not a loopback URL", line)
			}
			cs, err := newClient().Connect(t.Context(), tc.transport(url), clientOpts)
			if err != nil {
				t.Fatal(err)
			}
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 40}})
			if err != nil {
				t.Fatal(err)
			}
			if got := text(t, res); got != "42" {
				t.Errorf("add = %q", got)
			}
			cs.Close()

			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("exit after SIGINT: %v", err)
			}
		})
	}
}

func TestMisbehaveOK(t *testing.T) {
	bin := testbin.Build(t, misbehave)
	cmd := exec.Command(bin, "-mode", "ok")
	cs, err := newClient().Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, clientOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ctx := t.Context()
	if got := cs.InitializeResult().ProtocolVersion; got != "2025-11-25" {
		t.Errorf("protocol version %q", got)
	}

	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if diff := cmp.Diff([]string{"hello", "two", "three"}, names); diff != "" {
		t.Errorf("tools over three pages (-want +got):\n%s", diff)
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, res); got != "hello from raw" {
		t.Errorf("hello = %q", got)
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Errorf("ping: %v", err)
	}
	if _, err := cs.ListPrompts(ctx, nil); err != nil {
		t.Errorf("prompts/list: %v", err)
	}
	if _, err := cs.ListResourceTemplates(ctx, nil); err != nil {
		t.Errorf("resources/templates/list: %v", err)
	}
	if _, err := cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "x"},
		Argument: mcp.CompleteParamsArgument{Name: "a"},
	}); err == nil || !strings.Contains(err.Error(), "method not found") {
		t.Errorf("completion/complete: %v, want method not found", err)
	}
}

func TestMisbehaveRepeatCursor(t *testing.T) {
	bin := testbin.Build(t, misbehave)
	cs, err := newClient().Connect(t.Context(), &mcp.CommandTransport{Command: exec.Command(bin, "-mode", "repeat-cursor")}, clientOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.ListToolsParams{}
	for page := range 3 {
		res, err := cs.ListTools(t.Context(), params)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tools) != 1 || res.NextCursor != "same" {
			t.Fatalf("page %d: %d tools, nextCursor %q; want 1 and \"same\"", page, len(res.Tools), res.NextCursor)
		}
		params.Cursor = res.NextCursor
	}
}

// TestMisbehaveEnds covers the modes where the session cannot last.
func TestMisbehaveEnds(t *testing.T) {
	bin := testbin.Build(t, misbehave)
	tests := []struct {
		name        string
		args        []string
		wantConnect bool // whether the handshake completes
		wantCode    int
		wantStderr  string
	}{
		{"exit", []string{"-mode", "exit"}, false, 3, "fixture: exiting"},
		{"garbage", []string{"-mode", "garbage"}, false, 0, ""},
		{"crash after init", []string{"-mode", "crash-after-init"}, true, 4, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, tc.args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			cs, err := newClient().Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, clientOpts)
			if (err == nil) != tc.wantConnect {
				t.Fatalf("connect error %v, want connected=%v", err, tc.wantConnect)
			}
			if cs != nil {
				cs.Wait() // until the process goes away
				cs.Close()
			}
			if cmd.ProcessState == nil {
				t.Fatal("process not reaped")
			}
			if got := cmd.ProcessState.ExitCode(); got != tc.wantCode {
				t.Errorf("exit code %d, want %d", got, tc.wantCode)
			}
			if !strings.Contains(stderr.String(), tc.wantStderr) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tc.wantStderr)
			}
		})
	}
}

func TestMisbehaveStderrLines(t *testing.T) {
	bin := testbin.Build(t, misbehave)
	cmd := exec.Command(bin, "-mode", "exit", "-stderr-lines", "1000")
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 3 {
		t.Fatalf("exit code %d (%v), want 3", code, err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 1001 {
		t.Fatalf("%d lines, want 1000 + the exit line", len(lines))
	}
	for i, l := range lines[:1000] {
		if len(l) != 99 { // plus the newline: 100 bytes
			t.Fatalf("line %d is %d bytes: %q", i, len(l), l)
		}
	}
}

func TestRevenue(t *testing.T) {
	bin := testbin.Build(t, revenue)
	cs, err := newClient().Connect(t.Context(), &mcp.CommandTransport{Command: exec.Command(bin)}, clientOpts)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "show_revenue_dashboard", Arguments: map[string]any{"quarter": "Q3"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, res); !strings.HasPrefix(got, "Revenue Q3 2026") {
		t.Errorf("text %q", got)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if res.StructuredContent == nil {
		t.Error("no structuredContent")
	}
}
