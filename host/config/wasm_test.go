package config

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mcphost/mcphost/egress"
)

func TestWasmServer(t *testing.T) {
	root := sandboxTree(t)
	src := `sandbox {
  network     = "proxy"
  inherit_env = ["LANG"]
}
server "w" {
  wasm  = "../link-mod.wasm"
  args  = ["--verbose"]
  env   = { MODE = "test" }
  roots = ["file://ROOT/srv/rw"]
  sandbox {
    on_unsupported = "warn"
    read           = ["../srv/ro"]
    allow_hosts    = ["api.example.com:443"]
    limits {
      memory = "256MiB"
      cpu    = 30
    }
  }
}
`
	cfg, diags := loadSandbox(t, root, src)
	if len(diags) > 0 {
		t.Fatalf("diagnostics:%s", diagText(diags))
	}
	s := cfg.Server("w")
	if s.Transport != TransportWasm || s.Wasm != filepath.Join(root, "srv", "mod.wasm") || s.Command != "" {
		t.Errorf("Transport %q, Wasm %q, Command %q; want %q, the module's resolved path and none", s.Transport, s.Wasm, s.Command, TransportWasm)
	}
	if diff := cmp.Diff([]string{"--verbose"}, s.Args); diff != "" {
		t.Errorf("Args (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"MODE": "test"}, s.Env); diff != "" {
		t.Errorf("Env (-want +got):\n%s", diff)
	}
	// No network, runtime or uid: the top-level network means nothing to
	// a module, which reaches its allow_hosts through mcphost.
	want := Sandbox{
		Mode: SandboxEnforce, OnUnsupported: UnsupportedWarn,
		Read:       []string{filepath.Join(root, "srv", "ro")},
		Write:      []string{filepath.Join(root, "srv", "rw")},
		AllowHosts: rules(t, "api.example.com:443"),
		InheritEnv: []string{"LANG"},
		Limits:     SandboxLimits{Memory: 256 << 20, CPU: 30},
		Protected:  cfg.Sandbox.Protected,
	}
	if diff := cmp.Diff(want, s.Sandbox, cmpopts.IgnoreFields(Sandbox{}, "DeclRange"), cmp.Comparer(func(a, b egress.Rule) bool { return a == b })); diff != "" {
		t.Errorf("Sandbox (-want +got):\n%s", diff)
	}
	if len(s.Sandbox.Protected) == 0 {
		t.Error("a wasm server has no protected set")
	}
}

func TestWasmDiagnostics(t *testing.T) {
	root := sandboxTree(t)
	tests := []struct {
		name, src string
		want      []wantDiag
	}{
		{
			name: "with command",
			src:  "server \"a\" {\n  command = \"x\"\n  wasm    = \"../srv/mod.wasm\"\n}\n",
			want: []wantDiag{{summary: "Conflicting transports", detail: `Server "a" sets both command and wasm. A server either runs a local command over stdio (command), runs a WebAssembly module inside mcphost (wasm) or connects to a url (url); remove one of them.`, line: 3, col: 3}},
		},
		{
			name: "with url",
			src:  "server \"a\" {\n  wasm = \"../srv/mod.wasm\"\n  url  = \"https://mcp.example.com/mcp\"\n}\n",
			want: []wantDiag{{summary: "Conflicting transports", detail: "sets both wasm and url", line: 3, col: 3}},
		},
		{
			name: "with both",
			src:  "server \"a\" {\n  url     = \"https://mcp.example.com/mcp\"\n  command = \"x\"\n  wasm    = \"../srv/mod.wasm\"\n}\n",
			want: []wantDiag{
				{summary: "Conflicting transports", detail: "sets both url and command", line: 3, col: 3},
				{summary: "Conflicting transports", detail: "sets both url and wasm", line: 4, col: 3},
			},
		},
		{
			name: "command and url as before",
			src:  "server \"a\" {\n  command = \"x\"\n  url     = \"https://mcp.example.com/mcp\"\n}\n",
			want: []wantDiag{{summary: "Conflicting transports", detail: `Server "a" sets both command and url. A server either runs a local command over stdio or connects to a url; remove one of them.`, line: 3, col: 3}},
		},
		{
			name: "none",
			src:  "server \"a\" {\n  args = [\"x\"]\n}\n",
			want: []wantDiag{{summary: "Missing transport", detail: `or wasm = "server.wasm" to run a WebAssembly server inside mcphost`, line: 1, col: 1}},
		},
		{
			name: "a module that does not exist",
			src:  "server \"a\" {\n  wasm = \"../srv/none.wasm\"\n}\n",
			want: []wantDiag{{summary: "Path not found", detail: `The wasm module "../srv/none.wasm" of server "a" (ROOT/srv/none.wasm) does not exist`, line: 2, col: 10}},
		},
		{
			name: "a directory",
			src:  "server \"a\" {\n  wasm = \"../srv\"\n}\n",
			want: []wantDiag{{summary: "Invalid wasm module", detail: "(ROOT/srv) is a directory. Give the .wasm file", line: 2, col: 10}},
		},
		{
			name: "settings a module cannot use",
			src: `server "a" {
  wasm        = "../srv/mod.wasm"
  cwd         = "."
  transport   = "stdio"
  headers     = { A = "b" }
  stdio_probe = "in_place"
  sandbox {
    network     = "proxy"
    runtime     = "node"
    sandbox_uid = 1000
    limits {
      open_files = 10
      pids       = 10
      memory     = "128MiB"
      cpu        = 10
    }
  }
}
`,
			want: []wantDiag{
				{summary: "Argument not for WebAssembly servers", detail: "no working directory on the machine", line: 3, col: 3},
				{summary: "Argument not for WebAssembly servers", detail: "the transport is implied", line: 4, col: 3},
				{summary: "Argument not for WebAssembly servers", detail: "Remove headers.", line: 5, col: 3},
				{summary: "Argument not for WebAssembly servers", detail: "stdio_probe only applies to servers run with command", line: 6, col: 3},
				{summary: "Argument not for WebAssembly servers", detail: "has no sockets", line: 8, col: 5},
				{summary: "Argument not for WebAssembly servers", detail: "a WebAssembly module runs none. Remove runtime.", line: 9, col: 5},
				{summary: "Argument only in the top-level sandbox block", detail: "sandbox_uid", line: 10, col: 5},
				{summary: "Argument not for WebAssembly servers", detail: "no file descriptors of its own", line: 12, col: 7},
				{summary: "Argument not for WebAssembly servers", detail: "starts no processes. Remove pids.", line: 13, col: 7},
			},
		},
		{
			name: "auth",
			src:  "server \"a\" {\n  wasm = \"../srv/mod.wasm\"\n  auth {}\n}\n",
			want: []wantDiag{{summary: "Auth on a WebAssembly server", detail: "OAuth applies only to remote (url) servers", line: 3, col: 3}},
		},
		{
			name: "a grant of mcphost's state",
			src:  "server \"a\" {\n  wasm = \"../srv/mod.wasm\"\n  sandbox {\n    write = [\"../state\"]\n  }\n}\n",
			want: []wantDiag{{summary: "Grant reaches a protected path", detail: "contains the data directory", line: 4, col: 14}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := loadSandbox(t, root, tt.src)
			checkDiags(t, root, diags, tt.want)
		})
	}
}
