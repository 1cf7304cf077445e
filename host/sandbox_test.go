package host_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/confine"
	"github.com/mcphost/mcphost/egress"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testbin"
)

const (
	hostilePkg = "github.com/mcphost/mcphost/testdata/servers/hostile"
	// memoryPkg is the official knowledge-graph server, version pinned in
	// testdata/interop/package.json.
	memoryPkg = "@modelcontextprotocol/server-memory"
)

// needSandbox fails in CI, and skips elsewhere, when this machine cannot
// enforce the sandbox's default layers.
func needSandbox(t *testing.T) confine.Probe {
	t.Helper()
	p := confineProbe()
	if !p.Ready() {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must be able to enforce the sandbox: %s", strings.Join(p.Lines(), "; "))
		}
		t.Skipf("no sandbox here: %s", p)
	}
	return p
}

func confineProbe() confine.Probe { return confine.Detect() }

type hostileReport struct {
	Attempts map[string]struct {
		Reached bool   `json:"reached"`
		Detail  string `json:"detail"`
	} `json:"attempts"`
	UID int `json:"uid"`
}

// TestContainedHostileServer runs the hostile fixture as a configured
// server with no sandbox block but a proxy grant, through the host: every
// attempt on mcphost's state, the machine and the network fails, the
// server keeps answering its tools, and the refused connections are on
// its status and in the metrics.
func TestContainedHostileServer(t *testing.T) {
	probe := needSandbox(t)
	bin := testbin.Build(t, hostilePkg)
	data := t.TempDir()
	token := filepath.Join(data, "owner.token")
	must(t, os.WriteFile(token, []byte("owner-secret"), 0o600))
	conf := t.TempDir()
	configFile, secret := filepath.Join(conf, "mcphost.hcl"), filepath.Join(conf, "api.key")
	must(t, os.WriteFile(configFile, []byte("# config"), 0o600))
	must(t, os.WriteFile(secret, []byte("sk-1"), 0o600))

	api, err := net.Listen("tcp", "127.0.0.1:0") // stands for the daemon's API port
	must(t, err)
	defer api.Close()
	granted := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "granted") }))
	defer granted.Close()
	rule, err := egress.ParseRule(strings.TrimPrefix(granted.URL, "http://"))
	must(t, err)

	s := stdioServer("hostile", bin)
	s.Sandbox.Network = config.NetworkProxy
	s.Sandbox.AllowHosts = []egress.Rule{rule}
	s.Sandbox.Protected = []string{configFile, secret}
	other := stdioServer("other", testbin.Build(t, wellbehavedPkg))
	h := startHostConfig(t, &config.Config{DataDir: data, Servers: []config.Server{s, other}}, host.Options{})
	st := mustStatus(t, h, "hostile")
	if st.State != host.StateReady || st.Sandbox == nil {
		t.Fatalf("hostile is %s (%s), sandbox %+v", st.State, st.LastError, st.Sandbox)
	}
	if dropped := st.Sandbox.Dropped(); len(dropped) > 0 {
		t.Fatalf("layers dropped: %v", dropped)
	}

	targets, _ := json.Marshal(map[string]any{
		"read": []string{token, configFile, secret, filepath.Join(data, "sandboxes", "other", "home"),
			"/etc/shadow", fmt.Sprintf("/proc/%d/environ", os.Getpid())},
		"write":     []string{filepath.Join(data, "evil"), filepath.Join(conf, "mcphost.hcl")},
		"tcp":       []string{api.Addr().String(), strings.TrimPrefix(granted.URL, "http://")},
		"proxy":     []string{"example.com:443", "localhost:" + fmt.Sprint(api.Addr().(*net.TCPAddr).Port)},
		"signal":    os.Getpid(),
		"envPrefix": []string{"MCPHOST_"},
	})
	t.Setenv("MCPHOST_SECRET_KEY", "must-not-leak") // a restart would pass it if anything did
	res := call(t, h, "hostile", "probe", string(targets))
	var r hostileReport
	must(t, json.Unmarshal([]byte(textOf(res)), &r))
	for name, a := range r.Attempts {
		if a.Reached {
			t.Errorf("the contained server reached %s: %s", name, a.Detail)
		}
	}
	if len(r.Attempts) < 12 {
		t.Errorf("%d attempts reported, want 12: %v", len(r.Attempts), r.Attempts)
	}
	if probe.Root && r.UID != config.DefaultSandboxUID {
		t.Errorf("the server runs as uid %d, want %d", r.UID, config.DefaultSandboxUID)
	}

	// A granted host is reachable through the proxy, and only through it.
	allowed, _ := json.Marshal(map[string]any{"proxy": []string{rule.String()}})
	res = call(t, h, "hostile", "probe", string(allowed))
	must(t, json.Unmarshal([]byte(textOf(res)), &r))
	if a := r.Attempts["proxy "+rule.String()]; !a.Reached {
		t.Errorf("the granted host was refused: %s", a.Detail)
	}
	if got := textOf(call(t, h, "hostile", "hello", `{}`)); got != "still here" {
		t.Errorf("hello = %q after the attempts", got)
	}

	st = mustStatus(t, h, "hostile")
	if st.Sandbox.Denied < 2 || len(st.Sandbox.Denials) < 2 {
		t.Fatalf("denials on the status: %d %+v", st.Sandbox.Denied, st.Sandbox.Denials)
	}
	seen := map[string]string{}
	for _, d := range st.Sandbox.Denials {
		seen[fmt.Sprintf("%s:%d", d.Host, d.Port)] = d.Reason
	}
	if seen["example.com:443"] != egress.ReasonNotAllowed {
		t.Errorf("example.com:443 denied as %q, want %q (%v)", seen["example.com:443"], egress.ReasonNotAllowed, seen)
	}
	var metrics strings.Builder
	must(t, h.WriteMetrics(&metrics))
	if want := fmt.Sprintf(`mcphost_sandbox_denials_total{server="hostile"} %d`, st.Sandbox.Denied); !strings.Contains(metrics.String(), want) {
		t.Errorf("metrics lack %q", want)
	}
	if !strings.Contains(metrics.String(), `mcphost_sandbox_contained{server="other"} 1`) {
		t.Error(`metrics lack mcphost_sandbox_contained{server="other"} 1`)
	}
}

// TestSandboxStatusOfAnUnsandboxedServer: mode = "off" is said so.
func TestSandboxStatusOfAnUnsandboxedServer(t *testing.T) {
	needSandbox(t)
	s := stdioServer("open", testbin.Build(t, wellbehavedPkg))
	s.Sandbox.Mode = config.SandboxOff
	h := startHost(t, host.Options{}, s)
	st := mustStatus(t, h, "open")
	if st.State != host.StateReady || st.Sandbox == nil || st.Sandbox.Summary != "unsandboxed" {
		t.Fatalf("status %s, sandbox %+v", st.State, st.Sandbox)
	}
}

// TestSandboxHints: a server that reports a refused path on stderr gets a
// hint naming the grant.
func TestSandboxHints(t *testing.T) {
	needSandbox(t)
	dir := t.TempDir()
	script := filepath.Join(testbin.SandboxDir(t), "denied.sh")
	must(t, os.WriteFile(script, []byte("#!/bin/sh\ncat "+dir+"/notes.txt\nexit 1\n"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644))
	s := stdioServer("hinted", "/bin/sh", script)
	s.Sandbox.Read = []string{filepath.Dir(script)}
	s.DiscoveryTimeout = 5 * time.Second
	h := startHost(t, host.Options{}, s)
	st := mustStatus(t, h, "hinted")
	if st.State != host.StateFailed {
		t.Fatalf("state %s", st.State)
	}
	want := fmt.Sprintf("the sandbox refused %s/notes.txt", dir)
	if len(st.Sandbox.Hints) == 0 || !strings.Contains(st.Sandbox.Hints[0], want) || !strings.Contains(st.Sandbox.Hints[0], "sandbox { read = [") {
		t.Errorf("hints %q, want one saying %q and the grant", st.Sandbox.Hints, want)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestContainedReferenceServers: the official filesystem and memory
// servers (Node.js) work contained: the filesystem server in a granted
// directory and nowhere else, the memory server with runtime = "node" and
// its file in a granted directory.
func TestContainedReferenceServers(t *testing.T) {
	needSandbox(t)
	interop := testbin.Interop(t, "..", filesystemPkg)
	testbin.Interop(t, "..", memoryPkg)
	shared, files, outside := testbin.SandboxDir(t), testbin.SandboxDir(t), testbin.SandboxDir(t)
	script := func(pkg string) string {
		return filepath.Join(interop, "node_modules", pkg, "dist", "index.js")
	}
	fs := stdioServer("fs", "node", script(filesystemPkg), files)
	fs.Sandbox.Read = []string{interop}
	fs.Sandbox.Write = []string{files}
	mem := stdioServer("memory", "node", script(memoryPkg))
	mem.Env = map[string]string{"MEMORY_FILE_PATH": filepath.Join(shared, "memory.jsonl")}
	mem.Sandbox.Runtime = config.RuntimeNode
	mem.Sandbox.Read = []string{interop}
	mem.Sandbox.Write = []string{shared}
	h := startHost(t, host.Options{}, fs, mem)
	for _, name := range []string{"fs", "memory"} {
		st := mustStatus(t, h, name)
		if st.State != host.StateReady || st.Sandbox == nil || len(st.Sandbox.Dropped()) > 0 {
			t.Fatalf("%s: %s (%s), sandbox %+v", name, st.State, st.LastError, st.Sandbox)
		}
	}

	note := filepath.Join(files, "note.txt")
	if res := call(t, h, "fs", "write_file", `{"path":"`+note+`","content":"contained"}`); res.IsError {
		t.Fatalf("write_file in the granted directory: %s", textOf(res))
	}
	if got := textOf(call(t, h, "fs", "read_text_file", `{"path":"`+note+`"}`)); got != "contained" {
		t.Errorf("read_text_file = %q", got)
	}
	if res := call(t, h, "fs", "write_file", `{"path":"`+filepath.Join(outside, "x")+`","content":"x"}`); !res.IsError {
		t.Errorf("write_file outside the grant succeeded: %s", textOf(res))
	}

	if res := call(t, h, "memory", "create_entities", `{"entities":[{"name":"mcphost","entityType":"project","observations":["runs servers contained"]}]}`); res.IsError {
		t.Fatalf("create_entities: %s", textOf(res))
	}
	if got := textOf(call(t, h, "memory", "read_graph", `{}`)); !strings.Contains(got, "runs servers contained") {
		t.Errorf("read_graph = %q", got)
	}
	if b, err := os.ReadFile(filepath.Join(shared, "memory.jsonl")); err != nil || !strings.Contains(string(b), "mcphost") {
		t.Errorf("memory file: %q, %v", b, err)
	}
}
