package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The snippets of `gateway config` are checked against the clients they
// are for, from npm (pinned in testdata/interop/package-lock.json): each
// test starts a daemon whose config has two principals with env() tokens,
// prints alice's snippet, writes it where that client keeps its MCP
// servers in a fresh HOME, and runs the client's own listing against the
// daemon with an environment of PATH and HOME alone (no token variable,
// none of the config's secrets). Like the other interoperability tests
// they skip without Node.js or the packages, and fail instead under CI.

const (
	aliceToken = "alice-token-0123456789abcdef"
	bobToken   = "bob-token-0123456789abcdef01"
)

// clientBound bounds one run of a client (an npm CLI's start-up is slow on
// a loaded machine).
const clientBound = 90 * time.Second

// startTeamDaemon starts a daemon whose principals alice and bob take
// their tokens from ALICE_TOKEN and BOB_TOKEN (set for the daemon and for
// `gateway config` only) and returns it with its config.
func startTeamDaemon(t *testing.T, bin string) (*daemon, string) {
	t.Helper()
	return startTeamDaemonWith(t, bin, "")
}

// startTeamDaemonWith is startTeamDaemon with extra appended to the config.
func startTeamDaemonWith(t *testing.T, bin, extra string) (*daemon, string) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("ALICE_TOKEN", aliceToken)
	t.Setenv("BOB_TOKEN", bobToken)
	t.Setenv(tokenEnv, "")
	cfg := writeDaemonConfig(t, dir, "127.0.0.1:0", filepath.Join(dir, "state"),
		"\nprincipal \"alice\" {\n  token = env(\"ALICE_TOKEN\")\n}\n\nprincipal \"bob\" {\n  token = env(\"BOB_TOKEN\")\n}\n"+extra)
	d := startDaemon(t, bin, cfg)
	waitServersReady(t, d, aliceToken)
	return d, cfg
}

// waitServersReady waits until every server token may see on d is ready:
// the daemon prints its URL before its servers have connected, and a
// client that lists tools sooner gets an empty list.
func waitServersReady(t *testing.T, d *daemon, token string) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(daemonBound)
	for {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, d.base+"/api/v1/servers", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		var list struct {
			Servers []serverStatus `json:"servers"`
		}
		resp, err := client.Do(req)
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&list)
			resp.Body.Close()
		}
		ready := err == nil && len(list.Servers) > 0
		for _, s := range list.Servers {
			ready = ready && s.Status == "ready"
		}
		if ready {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon's servers are not ready after %s: %+v (%v)\nstderr:\n%s", daemonBound, list.Servers, err, d.stderr.String())
		}
		time.Sleep(50 * time.Millisecond) // polling the daemon's status
	}
}

// snippetOf runs `mcphost gateway config ARGS...` with the test's
// environment and XDG_CONFIG_HOME=configHome (where the token file goes)
// and returns its stdout.
func snippetOf(t *testing.T, bin, configHome string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), daemonBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"gateway", "config"}, args...)...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+configHome)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcphost gateway config %v: %v\nstderr:\n%s", args, err, stderr.String())
	}
	return stdout.String()
}

// TestGatewayBridgeSnippetAlone: the stdio snippet of `gateway config
// claude -as alice`, run as a GUI client would (an empty environment),
// connects through the daemon as alice: the bridge reads neither the
// config (whose env() tokens it could not resolve) nor a variable, only
// the 0600 token file. The base URL and the /mcp URL give the same
// endpoint.
func TestGatewayBridgeSnippetAlone(t *testing.T) {
	bin := testbin.Build(t, mcphostPkg)
	d, cfg := startTeamDaemon(t, bin)
	configHome := t.TempDir()
	var entries [2]map[string]any
	for i, url := range []string{d.base, d.base + "/mcp/"} {
		out := snippetOf(t, bin, configHome, "claude", "-config", cfg, "-as", "alice", "-url", url)
		var snippet struct {
			MCPServers map[string]map[string]any `json:"mcpServers"`
		}
		if err := json.Unmarshal([]byte(out), &snippet); err != nil {
			t.Fatalf("the snippet is not JSON (%v):\n%s", err, out)
		}
		entries[i] = snippet.MCPServers["mcphost"]
	}
	if fmt.Sprint(entries[0]) != fmt.Sprint(entries[1]) {
		t.Errorf("-url %s and %s/mcp/ give different snippets:\n%v\n%v", d.base, d.base, entries[0], entries[1])
	}
	entry := entries[0]
	if _, ok := entry["env"]; ok {
		t.Errorf("the stdio snippet has an env: %v", entry)
	}
	var args []string
	for _, a := range entry["args"].([]any) {
		args = append(args, a.(string))
	}
	if strings.Contains(strings.Join(args, " "), "-config") {
		t.Errorf("the bridge is given the config: %v", args)
	}
	tokenFile := args[len(args)-1]
	if fi, err := os.Stat(tokenFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file %s: %v, %v; want mode 0600", tokenFile, fi, err)
	}
	if b, _ := os.ReadFile(tokenFile); strings.TrimSpace(string(b)) != aliceToken {
		t.Fatalf("token file holds %q, want alice's token", b)
	}
	if !strings.HasPrefix(tokenFile, configHome) {
		t.Errorf("token file %s is not under XDG_CONFIG_HOME %s", tokenFile, configHome)
	}

	cmd := exec.Command(entry["command"].(string), args...)
	cmd.Env = []string{}
	cmd.Dir = t.TempDir()
	var stderr syncBuffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(t.Context(), daemonBound)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "desktop-stand-in", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect through the snippet's bridge: %v\nstderr:\n%s", err, stderr.String())
	}
	defer cs.Close()
	listAndCall(t, cs, "fx__echo")

	// The bridge alone, given a -url that is no URL or no credential, says so.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-url", "127.0.0.1:7777", "-token-file", tokenFile}, "not an http(s) URL"},
		{[]string{"-url", d.base, "-token-file", filepath.Join(t.TempDir(), "none")}, "-token-file"},
	} {
		code, _, errOut := runCLI(t, bin, append([]string{"gateway", "-stdio"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("gateway -stdio %v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// clientCase is one client run against a snippet.
type clientCase struct {
	name   string
	pkg    string   // the npm package of the client
	config []string // gateway config's client and flags (after -config, -as, -url)
	// install writes the snippet into the client's configuration in home
	// and returns the command that lists the client's servers.
	install func(t *testing.T, dir, home, snippet string) *exec.Cmd
	env     []string // what the client needs besides PATH and HOME
}

// writeIn writes text to home/rel.
func writeIn(t *testing.T, home, rel, text string) {
	t.Helper()
	path := filepath.Join(home, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// binIn is the command of an npm package's bin in testdata/interop.
func binIn(dir, name string, args ...string) *exec.Cmd {
	return exec.Command(filepath.Join(dir, "node_modules", ".bin", name), args...)
}

// settingsClient is Qwen Code or Gemini CLI: mcpServers in
// ~/.NAME/settings.json, listed by `NAME mcp list`.
func settingsClient(name string) func(t *testing.T, dir, home, snippet string) *exec.Cmd {
	return func(t *testing.T, dir, home, snippet string) *exec.Cmd {
		writeIn(t, home, "."+name+"/settings.json", snippet)
		return binIn(dir, name, "mcp", "list")
	}
}

// claudeCodeAdd runs the printed `claude mcp add …` line, then lists.
func claudeCodeAdd(t *testing.T, dir, home, snippet string) *exec.Cmd {
	words := shellWords(t, strings.TrimSpace(snippet))
	if len(words) < 3 || words[0] != "claude" {
		t.Fatalf("not a claude command line: %s", snippet)
	}
	ctx, cancel := context.WithTimeout(t.Context(), clientBound)
	defer cancel()
	add := exec.CommandContext(ctx, filepath.Join(dir, "node_modules", ".bin", "claude"), words[1:]...)
	add.Dir, add.Env = home, clientEnv(home, claudeEnv)
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", snippet, err, out)
	}
	return binIn(dir, "claude", "mcp", "list")
}

// inspectorConfig runs the Inspector's CLI with the snippet as --config.
func inspectorConfig(t *testing.T, dir, home, snippet string) *exec.Cmd {
	writeIn(t, home, "mcp.json", snippet)
	launcher := filepath.Join(dir, "node_modules", inspectorPkg, "clients", "launcher", "build", "index.js")
	return exec.Command("node", launcher, "--cli", "--config", filepath.Join(home, "mcp.json"), "--server", "mcphost", "--format", "json", "--method", "tools/list")
}

const inspectorPkg = "@modelcontextprotocol/inspector"

// claudeEnv turns off what Claude Code would fetch for itself (updates,
// telemetry): the tests reach loopback only.
var claudeEnv = []string{"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}

// clientEnv is a client's whole environment: PATH, HOME and extra.
func clientEnv(home string, extra []string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}, extra...)
}

// TestGatewayConfigClients runs each client's own listing of its MCP
// servers with alice's snippet of `gateway config` pasted as printed, over
// HTTP and over the stdio bridge, and expects mcphost connected: Qwen Code
// (httpUrl, which it reads as Streamable HTTP; url is SSE to it), Gemini
// CLI (in a workspace it is told to trust, as it asks of headless runs),
// Claude Code (the printed `claude mcp add` line), Claude Desktop's
// snippet (through Claude Code, which reads the same mcpServers from
// ~/.claude.json) and the MCP Inspector (--config, which needs a type).
func TestGatewayConfigClients(t *testing.T) {
	bin := testbin.Build(t, mcphostPkg)
	cases := []clientCase{
		{name: "qwen", pkg: "@qwen-code/qwen-code", config: []string{"qwen"}, install: settingsClient("qwen")},
		{name: "qwen -stdio", pkg: "@qwen-code/qwen-code", config: []string{"qwen", "-stdio"}, install: settingsClient("qwen")},
		{name: "gemini", pkg: "@google/gemini-cli", config: []string{"gemini"}, install: settingsClient("gemini"), env: []string{"GEMINI_CLI_TRUST_WORKSPACE=true"}},
		{name: "gemini -stdio", pkg: "@google/gemini-cli", config: []string{"gemini", "-stdio"}, install: settingsClient("gemini"), env: []string{"GEMINI_CLI_TRUST_WORKSPACE=true"}},
		{name: "claude-code", pkg: "@anthropic-ai/claude-code", config: []string{"claude-code"}, install: claudeCodeAdd, env: claudeEnv},
		{name: "claude-code -stdio", pkg: "@anthropic-ai/claude-code", config: []string{"claude-code", "-stdio"}, install: claudeCodeAdd, env: claudeEnv},
		{name: "claude", pkg: "@anthropic-ai/claude-code", config: []string{"claude"}, install: func(t *testing.T, dir, home, snippet string) *exec.Cmd {
			writeIn(t, home, ".claude.json", snippet)
			return binIn(dir, "claude", "mcp", "list")
		}, env: claudeEnv},
		{name: "inspector", pkg: inspectorPkg, config: []string{"inspector"}, install: inspectorConfig},
		{name: "inspector -stdio", pkg: inspectorPkg, config: []string{"inspector", "-stdio"}, install: inspectorConfig},
	}
	// Skip (or, under CI, fail) before starting anything when a package is
	// missing.
	dirs := map[string]string{}
	for _, c := range cases {
		if dirs[c.pkg] == "" {
			dirs[c.pkg] = testbin.Interop(t, "../..", c.pkg)
		}
	}
	d, cfg := startTeamDaemon(t, bin)
	configHome := t.TempDir()
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			dir := dirs[c.pkg]
			snippet := snippetOf(t, bin, configHome, append(append([]string{}, c.config[0], "-config", cfg, "-as", "alice", "-url", d.base), c.config[1:]...)...)
			home := t.TempDir()
			cmd := c.install(t, dir, home, snippet)
			ctx, cancel := context.WithTimeout(t.Context(), clientBound)
			defer cancel()
			run := exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
			run.Dir, run.Env = home, clientEnv(home, c.env)
			if strings.HasPrefix(c.name, "inspector") {
				run.Env = append(run.Env, "MCP_CLIENT_CONFIG_PATH="+filepath.Join(home, "client.json"))
			}
			run.WaitDelay = 5 * time.Second
			var stdout, stderr bytes.Buffer
			run.Stdout, run.Stderr = &stdout, &stderr
			err := run.Run()
			report := fmt.Sprintf("snippet:\n%s\n%s: %v\nstdout:\n%s\nstderr:\n%s", snippet, strings.Join(run.Args, " "), err, stdout.String(), stderr.String())
			if ctx.Err() != nil {
				t.Fatalf("killed after %s; %s", clientBound, report)
			}
			if strings.HasPrefix(c.name, "inspector") {
				if err != nil || !strings.Contains(stdout.String(), `"name":"fx__echo"`) {
					t.Fatalf("tools/list through the Inspector has no fx__echo; %s", report)
				}
				return
			}
			if !connected(stdout.String() + stderr.String()) {
				t.Fatalf("the client does not show mcphost connected; %s", report)
			}
		})
	}
}

// connected reports whether a client's `mcp list` shows the server
// mcphost as connected.
func connected(out string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "mcphost:") && strings.Contains(line, "Connected") && !strings.Contains(line, "Disconnected") {
			return true
		}
	}
	return false
}

// TestGatewaySearchClients runs a real client against a daemon whose
// gateway is in search mode (discovery = "search"), with alice's snippet
// of `gateway config inspector` as printed, over HTTP and over the stdio
// bridge. Qwen Code's and Gemini CLI's `mcp list` print each server's
// health only (name, URL, Connected; read in their bundles), never its
// tools, and Claude Code's prints the same one line a server, so
// the client that shows the tools is the MCP Inspector's CLI: its
// tools/list must be exactly search_tools, describe_tools and call_tool,
// and its tools/call of search_tools with --tool-arg must return the
// fixture's echo tool (fx__echo) with its input schema.
func TestGatewaySearchClients(t *testing.T) {
	bin := testbin.Build(t, mcphostPkg)
	dir := testbin.Interop(t, "../..", inspectorPkg)
	d, cfg := startTeamDaemonWith(t, bin, "\ngateway {\n  discovery = \"search\"\n}\n")
	configHome := t.TempDir()
	for _, flags := range [][]string{{"inspector"}, {"inspector", "-stdio"}} {
		t.Run(strings.Join(flags, "_"), func(t *testing.T) {
			snippet := snippetOf(t, bin, configHome, append([]string{flags[0], "-config", cfg, "-as", "alice", "-url", d.base}, flags[1:]...)...)
			home := t.TempDir()
			inspect := func(out any, args ...string) {
				t.Helper()
				cmd := inspectorConfig(t, dir, home, snippet)
				ctx, cancel := context.WithTimeout(t.Context(), clientBound)
				defer cancel()
				// inspectorConfig's command ends in --method tools/list.
				run := exec.CommandContext(ctx, cmd.Path, append(cmd.Args[1:len(cmd.Args)-2], args...)...)
				run.Dir = home
				run.Env = append(clientEnv(home, nil), "MCP_CLIENT_CONFIG_PATH="+filepath.Join(home, "client.json"))
				run.WaitDelay = 5 * time.Second
				var stdout, stderr bytes.Buffer
				run.Stdout, run.Stderr = &stdout, &stderr
				err := run.Run()
				report := fmt.Sprintf("snippet:\n%s\n%s: %v\nstdout:\n%s\nstderr:\n%s", snippet, strings.Join(run.Args, " "), err, stdout.String(), stderr.String())
				var env struct{ Result json.RawMessage }
				if err != nil || json.Unmarshal(stdout.Bytes(), &env) != nil || env.Result == nil || json.Unmarshal(env.Result, out) != nil {
					t.Fatalf("no {\"result\": ...} from the Inspector; %s", report)
				}
			}
			var list struct {
				Tools []struct{ Name string } `json:"tools"`
			}
			inspect(&list, "--method", "tools/list")
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
			}
			if want := []string{"search_tools", "describe_tools", "call_tool"}; !slices.Equal(names, want) {
				t.Fatalf("tools/list through the Inspector = %v, want %v", names, want)
			}
			var call struct {
				StructuredContent struct {
					Tools []struct {
						Name        string         `json:"name"`
						InputSchema map[string]any `json:"inputSchema"`
					} `json:"tools"`
				} `json:"structuredContent"`
				IsError bool `json:"isError"`
			}
			inspect(&call, "--method", "tools/call", "--tool-name", "search_tools", "--tool-arg", "query=returns its text unchanged")
			found := call.StructuredContent.Tools
			if call.IsError || len(found) == 0 || found[0].Name != "fx__echo" || found[0].InputSchema["type"] != "object" {
				t.Fatalf("search_tools through the Inspector: isError %v, found %+v; want fx__echo first with its schema", call.IsError, found)
			}
		})
	}
}

// fakeModel is an OpenAI-compatible chat completions endpoint on loopback
// that answers "done" to every request (streamed when asked) and keeps
// what each request carried.
type fakeModel struct {
	url  string
	mu   sync.Mutex
	reqs [][]byte
}

func newFakeModel(t *testing.T) *fakeModel {
	m := &fakeModel{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		m.mu.Lock()
		m.reqs = append(m.reqs, body)
		m.mu.Unlock()
		var req struct {
			Model  string `json:"model"`
			Stream bool   `json:"stream"`
		}
		_ = json.Unmarshal(body, &req)
		choice := func(delta bool, finish any) map[string]any {
			msg := map[string]any{"role": "assistant", "content": "done"}
			c := map[string]any{"index": 0, "finish_reason": finish}
			if delta {
				if finish != nil {
					msg = map[string]any{}
				}
				c["delta"] = msg
			} else {
				c["message"] = msg
			}
			return c
		}
		usage := map[string]int{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"id": "c1", "object": "chat.completion", "created": 1, "model": req.Model,
				"choices": []any{choice(false, "stop")}, "usage": usage})
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, chunk := range []map[string]any{
			{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": req.Model, "choices": []any{choice(true, nil)}},
			{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": req.Model, "choices": []any{choice(true, "stop")}, "usage": usage},
		} {
			b, _ := json.Marshal(chunk)
			fmt.Fprintf(w, "data: %s\n\n", b)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	m.url = srv.URL + "/v1"
	return m
}

// sent is everything the client sent the model, as one text.
func (m *fakeModel) sent() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return string(bytes.Join(m.reqs, []byte("\n")))
}

// TestQwenCodeSeesTheMetaTools runs Qwen Code from npm headless (-p) with
// alice's snippet of `gateway config qwen` as printed, against a daemon in
// search mode and a fake model on loopback: what Qwen Code offers its
// model must name mcphost's three meta-tools (mcp__mcphost__search_tools,
// …describe_tools, …call_tool) and none of the servers' own tools, over
// HTTP and over the stdio bridge. (Its `mcp list` prints only health.)
func TestQwenCodeSeesTheMetaTools(t *testing.T) {
	bin := testbin.Build(t, mcphostPkg)
	dir := testbin.Interop(t, "../..", "@qwen-code/qwen-code")
	d, cfg := startTeamDaemonWith(t, bin, "\ngateway {\n  discovery = \"search\"\n}\n")
	configHome := t.TempDir()
	for _, flags := range [][]string{{"qwen"}, {"qwen", "-stdio"}} {
		t.Run(strings.Join(flags, "_"), func(t *testing.T) {
			snippet := snippetOf(t, bin, configHome, append([]string{flags[0], "-config", cfg, "-as", "alice", "-url", d.base}, flags[1:]...)...)
			var settings map[string]any
			if err := json.Unmarshal([]byte(snippet), &settings); err != nil {
				t.Fatalf("the qwen snippet is not JSON: %v\n%s", err, snippet)
			}
			settings["security"] = map[string]any{"auth": map[string]any{"selectedType": "openai"}}
			b, _ := json.Marshal(settings)
			home := t.TempDir()
			writeIn(t, home, ".qwen/settings.json", string(b))
			model := newFakeModel(t)

			ctx, cancel := context.WithTimeout(t.Context(), clientBound)
			defer cancel()
			run := exec.CommandContext(ctx, filepath.Join(dir, "node_modules", ".bin", "qwen"), "-p", "what was the revenue of the third quarter?")
			run.Dir = home
			run.Env = clientEnv(home, []string{"OPENAI_API_KEY=test", "OPENAI_BASE_URL=" + model.url, "OPENAI_MODEL=fake-model"})
			run.WaitDelay = 5 * time.Second
			out, err := run.CombinedOutput()
			sent := model.sent()
			report := fmt.Sprintf("snippet:\n%s\nqwen -p: %v\n%s", snippet, err, out)
			if err != nil || sent == "" {
				t.Fatalf("Qwen Code did not run to its model; %s", report)
			}
			for _, name := range []string{"mcp__mcphost__search_tools", "mcp__mcphost__describe_tools", "mcp__mcphost__call_tool"} {
				if !strings.Contains(sent, name) {
					t.Errorf("Qwen Code offered its model no %s; %s", name, report)
				}
			}
			if strings.Contains(sent, "mcp__mcphost__fx__echo") {
				t.Errorf("Qwen Code offered its model fx__echo itself: the gateway listed more than the meta-tools")
			}
		})
	}
}
