package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/gateway"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/fixture"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/mcphost/mcphost/policies"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The interoperability tests of the gateway run MCP clients other people
// wrote, from npm (pinned in testdata/interop/package-lock.json), against a
// gateway on 127.0.0.1:0: the TypeScript SDK 1.x and 2.x clients, through
// the scripts in testdata/interop/gateway/, and the MCP Inspector's CLI.
// Like host/interop_test.go they skip without Node.js or the packages, and
// fail instead under CI.

// Packages of testdata/interop/package.json the tests run.
const (
	sdk1Pkg      = "@modelcontextprotocol/sdk"
	client2Pkg   = "@modelcontextprotocol/client"
	inspectorPkg = "@modelcontextprotocol/inspector"
)

// nodeBound bounds one Node process; the scripts give up after 30 s
// themselves (RUN_TIMEOUT_MS in exercise.mjs).
const nodeBound = 60 * time.Second

// denyAdd is the call rule of the interop tests: the Node clients call
// fx__add, and the rule refuses it only when the call came through the
// gateway from a client whose clientInfo names it interop-*, so a denial
// also proves that the client's name reached the policy.
var denyAdd = policies.Rule{
	Name: "no-add-from-node", Phase: policies.PhaseCall, Effect: policies.EffectDeny,
	When:    `origin == "gateway" && client.name.startsWith("interop-") && tool.name == "add"`,
	Message: "adding is not allowed through the gateway",
}

// interopDir returns testdata/interop once pkg is installed under it.
func interopDir(t *testing.T, pkg string) string { return testbin.Interop(t, "..", pkg) }

// pkgVersion returns the installed version of pkg, for the log.
func pkgVersion(t *testing.T, dir, pkg string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "node_modules", pkg, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Version string }
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s/package.json: %v", pkg, err)
	}
	return m.Version
}

// nodeRun is one finished Node process.
type nodeRun struct {
	args           []string
	stdout, stderr string
	err            error // of Wait: nil for exit status 0
}

func (r nodeRun) String() string {
	return fmt.Sprintf("node %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), r.err, r.stdout, r.stderr)
}

// runNode runs node with args in dir, the test's environment plus env, and
// waits for it at most nodeBound.
func runNode(t *testing.T, dir string, env []string, args ...string) nodeRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), nodeBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%w (killed after %s)", err, nodeBound)
	}
	return nodeRun{args: args, stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// summary is what testdata/interop/gateway/exercise.mjs prints.
type summary struct {
	ProtocolVersion string  `json:"protocolVersion"`
	Era             string  `json:"era"`
	SessionID       *string `json:"sessionId"`
	ServerInfo      *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"serverInfo"`
	Tools     []string          `json:"tools"`
	Echo      *toolOutcome      `json:"echo"`
	Resources []string          `json:"resources"`
	Readme    []contents        `json:"readme"`
	Prompts   []string          `json:"prompts"`
	Greet     []message         `json:"greet"`
	Denied    *toolOutcome      `json:"denied"`
	Errors    map[string]string `json:"errors"`
}

type toolOutcome struct {
	IsError bool   `json:"isError"`
	Text    string `json:"text"`
}

type contents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType"`
	Text     string `json:"text"`
}

type message struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// runScript runs testdata/interop/gateway/SCRIPT against url with token and
// returns its summary.
func runScript(t *testing.T, dir, url, token string, script ...string) summary {
	t.Helper()
	var s summary
	runScriptInto(t, dir, []string{"MCPHOST_URL=" + url, "MCPHOST_TOKEN=" + token}, script[0], &s, script...)
	t.Logf("%s: protocol %s, era %q, %d tools", script[0], s.ProtocolVersion, s.Era, len(s.Tools))
	return s
}

// runScriptInto runs a client script of testdata/interop/gateway with env,
// decodes the JSON summary on the last line of its stdout into out, and
// fails the test with each step the summary's "errors" names (label says
// which run it was).
func runScriptInto(t *testing.T, dir string, env []string, label string, out any, script ...string) {
	t.Helper()
	args := append([]string{filepath.Join("gateway", script[0])}, script[1:]...)
	run := runNode(t, dir, env, args...)
	lines := strings.Split(strings.TrimSpace(run.stdout), "\n")
	last := []byte(lines[len(lines)-1])
	var failed struct {
		Errors map[string]string `json:"errors"`
	}
	if err := json.Unmarshal(last, out); err != nil || json.Unmarshal(last, &failed) != nil {
		t.Fatalf("no JSON summary on the last line of stdout (%v): %s", err, run)
	}
	if run.err != nil || len(failed.Errors) > 0 {
		var steps []string
		for step, msg := range failed.Errors {
			steps = append(steps, fmt.Sprintf("\n  %s: %s", step, msg))
		}
		slices.Sort(steps)
		t.Errorf("%s failed steps:%s\n%s", label, strings.Join(steps, ""), run)
	}
}

// checkSummary checks what every client must have seen, whatever its era.
func checkSummary(t *testing.T, s summary) {
	t.Helper()
	if s.ServerInfo == nil || s.ServerInfo.Name != "mcphost" || s.ServerInfo.Version != "test" {
		t.Errorf("serverInfo = %+v, want mcphost test", s.ServerInfo)
	}
	for _, want := range []string{"fx__echo", "fx__add", "fx__slow"} {
		if !slices.Contains(s.Tools, want) {
			t.Errorf("tools/list lacks %s: %v", want, s.Tools)
		}
	}
	if diff := cmp.Diff(&toolOutcome{Text: "hi from node"}, s.Echo); diff != "" {
		t.Errorf("call fx__echo (-want +got):\n%s", diff)
	}
	if !slices.Contains(s.Resources, "fx+fixture://readme") {
		t.Errorf("resources/list lacks fx+fixture://readme: %v", s.Resources)
	}
	wantReadme := []contents{{URI: "fx+fixture://readme", MIMEType: "text/plain", Text: fixture.ReadmeText}}
	if diff := cmp.Diff(wantReadme, s.Readme); diff != "" {
		t.Errorf("read fx+fixture://readme (-want +got):\n%s", diff)
	}
	if !slices.Contains(s.Prompts, "fx__greet") {
		t.Errorf("prompts/list lacks fx__greet: %v", s.Prompts)
	}
	if diff := cmp.Diff([]message{{Role: "user", Text: "Hello, Ada!"}}, s.Greet); diff != "" {
		t.Errorf("get fx__greet (-want +got):\n%s", diff)
	}
	wantDenied := &toolOutcome{IsError: true, Text: `Refused by mcphost: ` + denyAdd.Message + ` (policy "` + denyAdd.Name + `")`}
	if diff := cmp.Diff(wantDenied, s.Denied); diff != "" {
		t.Errorf("call fx__add, which %s denies for interop-* clients (-want +got):\n%s", denyAdd.Name, diff)
	}
}

// checkTranscript checks that the client's calls are alice's transcript
// entries of origin gateway, in a session titled with its clientInfo: the
// echo, the read of the readme, the prompt and the denial.
func checkTranscript(t *testing.T, e *env, client string) {
	t.Helper()
	p := host.Principal{Name: "alice"}
	sessions, err := e.h.Sessions(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var titles []string
	for _, s := range sessions {
		titles = append(titles, s.Title)
		if s.Title != "Gateway: "+client {
			continue
		}
		entries, _, err := e.h.Entries(t.Context(), p, s.ID, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, en := range entries {
			got = append(got, en.Origin+" "+en.Server+"."+en.Tool+" "+en.Status) // a read's Tool is its URI
		}
	}
	want := []string{"gateway fx.echo ok", "gateway fx.fixture://readme ok", "gateway fx.greet ok", "gateway fx.add " + store.StatusDenied}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("transcript of session %q (-want +got):\n%s\nsessions: %q", "Gateway: "+client, diff, titles)
	}
}

// TestInteropTypeScript runs the official TypeScript SDK's clients against
// /mcp: 1.x (legacy sessions), and 2.x with version negotiation auto,
// which must settle on 2026-07-28, and with negotiation legacy.
func TestInteropTypeScript(t *testing.T) {
	dir := interopDir(t, client2Pkg)
	interopDir(t, sdk1Pkg)
	e := newEnv(t, []string{"fx"}, denyAdd)
	url := e.base + gateway.PathAggregate

	t.Run("sdk-1.x", func(t *testing.T) {
		t.Logf("%s %s", sdk1Pkg, pkgVersion(t, dir, sdk1Pkg))
		s := runScript(t, dir, url, aliceToken, "sdk1.mjs")
		checkSummary(t, s)
		if s.ProtocolVersion != legacyVersion || s.SessionID == nil || *s.SessionID == "" {
			t.Errorf("protocol %q, session %v: want %s with a session id", s.ProtocolVersion, s.SessionID, legacyVersion)
		}
		checkTranscript(t, e, "interop-sdk1 1.0.0")
	})
	t.Run("client-2.x auto", func(t *testing.T) {
		t.Logf("%s %s", client2Pkg, pkgVersion(t, dir, client2Pkg))
		s := runScript(t, dir, url, aliceToken, "client2.mjs", "auto")
		checkSummary(t, s)
		if s.ProtocolVersion != modernVersion || s.Era != "modern" || s.SessionID != nil {
			t.Errorf("protocol %q, era %q, session %v: want %s, modern, no session id", s.ProtocolVersion, s.Era, s.SessionID, modernVersion)
		}
		checkTranscript(t, e, "interop-client2 2.0.0")
	})
	t.Run("client-2.x legacy", func(t *testing.T) {
		s := runScript(t, dir, url, bobToken, "client2.mjs", "legacy")
		checkSummary(t, s)
		if s.ProtocolVersion != legacyVersion || s.Era != "legacy" || s.SessionID == nil {
			t.Errorf("protocol %q, era %q, session %v: want %s, legacy, a session id", s.ProtocolVersion, s.Era, s.SessionID, legacyVersion)
		}
	})
}

// inspector runs the MCP Inspector's CLI (its launcher's --cli mode) with a
// HOME of the test's, so its catalog and client config stay in a temporary
// directory.
type inspector struct {
	dir, bin string
	env      []string
}

func newInspector(t *testing.T) inspector {
	t.Helper()
	dir := interopDir(t, inspectorPkg)
	t.Logf("%s %s", inspectorPkg, pkgVersion(t, dir, inspectorPkg))
	home := t.TempDir()
	return inspector{
		dir: dir,
		bin: filepath.Join(dir, "node_modules", inspectorPkg, "clients", "launcher", "build", "index.js"),
		env: []string{"HOME=" + home, "MCP_CATALOG_PATH=" + filepath.Join(home, "mcp.json"),
			"MCP_CLIENT_CONFIG_PATH=" + filepath.Join(home, "client.json")},
	}
}

// run runs `inspector --cli URL --transport http --format json ARGS...`.
func (in inspector) run(t *testing.T, url string, args ...string) nodeRun {
	t.Helper()
	return runNode(t, in.dir, in.env, append([]string{in.bin, "--cli", url, "--transport", "http", "--format", "json"}, args...)...)
}

// result runs the CLI and decodes the result it prints on success, {"result": ...}.
func (in inspector) result(t *testing.T, url string, out any, args ...string) {
	t.Helper()
	run := in.run(t, url, args...)
	if run.err != nil {
		t.Fatalf("the Inspector failed: %s", run)
	}
	var env struct{ Result json.RawMessage }
	if err := json.Unmarshal([]byte(run.stdout), &env); err != nil || env.Result == nil {
		t.Fatalf("stdout is no {\"result\": ...} (%v): %s", err, run)
	}
	if err := json.Unmarshal(env.Result, out); err != nil {
		t.Fatalf("result: %v: %s", err, run)
	}
}

// TestInteropInspector runs the MCP Inspector's CLI against /mcp with
// alice's token in --header: tools/list and tools/call of fx__echo with
// --tool-arg, in the era an ad-hoc URL gets by default (legacy) and in
// --protocol-era modern; a wrong token ends in its auth_required error
// (exit status 3) with the gateway's own explanation, not a hang in OAuth.
func TestInteropInspector(t *testing.T) {
	in := newInspector(t)
	e := newEnv(t, []string{"fx"})
	url := e.base + gateway.PathAggregate
	auth := "Authorization: Bearer " + aliceToken
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			var list struct {
				Tools []struct {
					Name        string         `json:"name"`
					InputSchema map[string]any `json:"inputSchema"`
				} `json:"tools"`
			}
			in.result(t, url, &list, "--header", auth, "--protocol-era", era, "--method", "tools/list")
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
				if tool.InputSchema["type"] != "object" {
					t.Errorf("%s has input schema %v", tool.Name, tool.InputSchema)
				}
			}
			for _, want := range []string{"fx__echo", "fx__add", "fx__slow"} {
				if !slices.Contains(names, want) {
					t.Errorf("tools/list lacks %s: %v", want, names)
				}
			}

			var call struct {
				Content []map[string]any `json:"content"`
				IsError bool             `json:"isError"`
			}
			in.result(t, url, &call, "--header", auth, "--protocol-era", era,
				"--method", "tools/call", "--tool-name", "fx__echo", "--tool-arg", "text=hi")
			want := []map[string]any{{"type": "text", "text": "hi"}}
			if diff := cmp.Diff(want, call.Content); diff != "" || call.IsError {
				t.Errorf("tools/call fx__echo text=hi: isError %v, content (-want +got):\n%s", call.IsError, diff)
			}
		})
	}
	t.Run("wrong token", func(t *testing.T) {
		run := in.run(t, url, "--header", "Authorization: Bearer nope", "--stored-auth-only", "--method", "tools/list")
		var env struct {
			Error struct{ Code, Message string }
		}
		_ = json.Unmarshal([]byte(run.stderr), &env)
		if run.err == nil || env.Error.Code != "auth_required" || !strings.Contains(env.Error.Message, "not valid for this MCP endpoint") {
			t.Fatalf("want exit status 3 and an auth_required error with the gateway's message: %s", run)
		}
	})
}

// recorder keeps a copy of every response body.
type recorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	buf  bytes.Buffer
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.TeeReader(resp.Body, (*lockedWriter)(r)), resp.Body}
	return resp, nil
}

type lockedWriter recorder

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// results returns the result of every JSON-RPC response recorded so far,
// by request id, whether it came as application/json or as an event
// stream's data lines.
func (r *recorder) results(t *testing.T) map[string]map[string]json.RawMessage {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]map[string]json.RawMessage{}
	for _, line := range strings.Split(r.buf.String(), "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(line, "data:"))
		var msg struct {
			ID     json.RawMessage            `json:"id"`
			Result map[string]json.RawMessage `json:"result"`
		}
		if json.Unmarshal([]byte(line), &msg) == nil && msg.Result != nil {
			out[string(msg.ID)] = msg.Result
		}
	}
	return out
}

// TestModernResultType is what the TypeScript SDK 2.x and the Inspector
// found: on 2026-07-28 a tools/call, prompts/get or resources/read result
// must carry resultType "complete" (SEP-2322: the absence means complete
// only for earlier revisions), and @modelcontextprotocol/client refuses one
// without it ("Invalid result for tools/call: missing required
// resultType"). go-sdk sets it in its own handlers
// (handleMultiRoundTripResult), which the gateway's middleware answers
// before; go-sdk's client accepts the absence, so TestBothEras passes.
func TestModernResultType(t *testing.T) {
	e := newEnv(t, []string{"fx"})
	rec := &recorder{next: bearer{token: aliceToken, next: http.DefaultTransport}}
	client := mcp.NewClient(&mcp.Implementation{Name: "resulttype-test", Version: "1.0"}, nil)
	ctx, cancel := context.WithTimeout(t.Context(), waitBound)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.base + gateway.PathAggregate,
		HTTPClient: &http.Client{Transport: rec}}, &mcp.ClientSessionOptions{ProtocolVersion: modernVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fx__echo", Arguments: map[string]any{"text": "x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "fx__greet", Arguments: map[string]string{"name": "Ada"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "fx+fixture://readme"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// Which result is which: by the member only that method's result has.
	got := map[string]string{}
	for _, res := range rec.results(t) {
		var rt string
		_ = json.Unmarshal(res["resultType"], &rt)
		for member, method := range map[string]string{"content": "tools/call", "messages": "prompts/get", "contents": "resources/read", "tools": "tools/list"} {
			if _, ok := res[member]; ok {
				got[method] = rt
			}
		}
	}
	want := map[string]string{"tools/call": "complete", "prompts/get": "complete", "resources/read": "complete", "tools/list": "complete"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resultType of each 2026-07-28 result (-want +got):\n%s", diff)
	}
}

// TestInteropStdioBridge runs the TypeScript SDK's stdio clients against
// `mcphost gateway -stdio` (built from ./cmd/mcphost), bridged to the env's
// /mcp with -url and alice's token in $MCPHOST_TOKEN: 1.x (2025-11-25) and
// 2.x with version negotiation auto, whose server/discover probe on a
// sibling process must settle on 2026-07-28. Each runs the same steps as
// over HTTP, so the denial and the transcript prove the bridge relays the
// client's own clientInfo.
func TestInteropStdioBridge(t *testing.T) {
	dir := interopDir(t, client2Pkg)
	interopDir(t, sdk1Pkg)
	bin := testbin.Build(t, "github.com/mcphost/mcphost/cmd/mcphost")
	e := newEnv(t, []string{"fx"}, denyAdd)
	// The bridge loads a config only for data_dir and listen, which -url
	// and $MCPHOST_TOKEN override.
	tmp := t.TempDir()
	cfg := filepath.Join(tmp, "mcphost.hcl")
	src := fmt.Sprintf("listen = %q\ndata_dir = %q\n", "127.0.0.1:1", filepath.Join(tmp, "state"))
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	bridge := []string{bin, "gateway", "-stdio", "-config", cfg, "-url", e.base + gateway.PathAggregate}
	for _, tc := range []struct {
		sdk, client, version string
	}{
		{"sdk1", "interop-stdio-sdk1 1.0.0", legacyVersion},
		{"client2", "interop-stdio-client2 2.0.0", modernVersion},
	} {
		t.Run(tc.sdk, func(t *testing.T) {
			s := runScript(t, dir, "", aliceToken, append([]string{"stdio.mjs", tc.sdk}, bridge...)...)
			checkSummary(t, s)
			if s.ProtocolVersion != tc.version {
				t.Errorf("negotiated %q through the bridge, want %s", s.ProtocolVersion, tc.version)
			}
			checkTranscript(t, e, tc.client)
		})
	}
}
