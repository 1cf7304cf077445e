package host_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/egress"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testbin"
)

// TestWasmServers: both kinds of WebAssembly server (a go-sdk server built
// as a WASI command, an Extism plugin with hyper-mcp's ABI) are configured
// servers like any other: listed, called through the pipeline, reaching a
// granted directory and nothing else, their sandbox on their status.
func TestWasmServers(t *testing.T) {
	command := testbin.WasmCommand(t, "examples/wasm", "wasi-echo")
	plugin := testbin.Plugin(t, "examples/wasm", "extism-echo")
	data, granted := t.TempDir(), t.TempDir()
	note := filepath.Join(granted, "note.txt")
	must(t, os.WriteFile(note, []byte("granted"), 0o644))
	rule, err := egress.ParseRule("api.example.com:443")
	must(t, err)

	server := func(name, wasm string) config.Server {
		s := config.Server{Name: name, Transport: config.TransportWasm, Wasm: wasm, Enabled: true,
			VersionNegotiation: config.NegotiationLegacy, DiscoveryTimeout: 5 * time.Minute, CallTimeout: time.Minute}
		s.Sandbox.Read = []string{granted}
		return s
	}
	cmd, plug := server("cmd", command), server("plug", plugin)
	plug.Env = map[string]string{"prefix": "plugin says: "}
	plug.Sandbox.AllowHosts = []egress.Rule{rule}
	// The compiled code is shared with the wasmserver tests: one compile
	// of the go-sdk server per machine, not one per package (minutes
	// under -race).
	h := startHostConfig(t, &config.Config{DataDir: data, Servers: []config.Server{cmd, plug}}, host.Options{PluginCacheDir: testbin.WasmServerCacheDir(t)})
	for _, name := range []string{"cmd", "plug"} {
		st := mustStatus(t, h, name)
		if st.State != host.StateReady {
			t.Fatalf("%s is %s: %s", name, st.State, st.LastError)
		}
		if st.Sandbox == nil || !strings.HasPrefix(st.Sandbox.Summary, "webassembly") {
			t.Errorf("%s's sandbox: %+v", name, st.Sandbox)
		}
		if got := textOf(call(t, h, name, "echo", `{"text":"hi"}`)); !strings.Contains(got, "hi") {
			t.Errorf("%s echo = %q", name, got)
		}
		if got := textOf(call(t, h, name, "read_file", `{"path":"`+note+`"}`)); got != "granted" {
			t.Errorf("%s read_file of a granted file = %q", name, got)
		}
		if res := call(t, h, name, "read_file", `{"path":"/etc/passwd"}`); !res.IsError {
			t.Errorf("%s read /etc/passwd: %q", name, textOf(res))
		}
	}
	if got := textOf(call(t, h, "plug", "echo", `{"text":"hi"}`)); got != "plugin says: hi" {
		t.Errorf("the plugin's config did not arrive: echo = %q", got)
	}
	if res := call(t, h, "plug", "fetch_status", `{"url":"https://denied.example.org/"}`); !res.IsError {
		t.Errorf("fetch of a host not granted: %q", textOf(res))
	}
}
