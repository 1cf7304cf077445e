package config

import (
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/hcl/v2"
	"github.com/mcphost/mcphost/egress"
)

func TestSandboxInheritEnv(t *testing.T) {
	tests := []struct {
		name, src string
		top       []string            // Config.Sandbox.InheritEnv
		servers   map[string][]string // Server.Sandbox.InheritEnv by name
	}{
		{
			name:    "none",
			src:     "server \"a\" {\n  command = \"x\"\n}\n",
			servers: map[string][]string{"a": nil},
		},
		{
			name:    "top level only",
			src:     "sandbox {\n  inherit_env = [\"LANG\", \"TZ\"]\n}\nserver \"a\" {\n  command = \"x\"\n}\n",
			top:     []string{"LANG", "TZ"},
			servers: map[string][]string{"a": {"LANG", "TZ"}},
		},
		{
			name:    "server adds to the top level",
			src:     "sandbox {\n  inherit_env = [\"LANG\"]\n}\nserver \"a\" {\n  command = \"x\"\n  sandbox {\n    inherit_env = [\"TZ\", \"LANG\"]\n  }\n}\nserver \"b\" {\n  command = \"y\"\n}\n",
			top:     []string{"LANG"},
			servers: map[string][]string{"a": {"LANG", "TZ"}, "b": {"LANG"}},
		},
		{
			name:    "defaults and duplicates are dropped",
			src:     "sandbox {\n  inherit_env = [\"PATH\", \"LANG\", \"LANG\", \"HOME\"]\n}\nserver \"a\" {\n  command = \"x\"\n  sandbox {}\n}\n",
			top:     []string{"LANG"},
			servers: map[string][]string{"a": {"LANG"}},
		},
		{
			name:    "a remote server gets nothing",
			src:     "sandbox {\n  inherit_env = [\"LANG\"]\n}\nserver \"r\" {\n  url = \"https://mcp.example.com/mcp\"\n}\n",
			top:     []string{"LANG"},
			servers: map[string][]string{"r": nil},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, diags := Parse([]byte(tt.src), "s.hcl", Options{Executable: testExecutable, LookupEnv: testEnv()})
			if len(diags) > 0 {
				t.Fatalf("diagnostics:%s", diagText(diags))
			}
			if diff := cmp.Diff(tt.top, cfg.Sandbox.InheritEnv); diff != "" {
				t.Errorf("top-level inherit_env (-want +got):\n%s", diff)
			}
			for name, want := range tt.servers {
				if diff := cmp.Diff(want, cfg.Server(name).Sandbox.InheritEnv); diff != "" {
					t.Errorf("server %s inherit_env (-want +got):\n%s", name, diff)
				}
			}
		})
	}
}

// TestReservedEnvRange checks that each MCPHOST_ name is an error whose
// subject is exactly the name as written: the list element, or the key of
// the env object.
func TestReservedEnvRange(t *testing.T) {
	type span struct{ Line, StartCol, EndCol int }
	tests := []struct {
		name, src string
		want      []span
	}{
		{
			name: "top-level inherit_env",
			src:  "sandbox {\n  inherit_env = [\"LANG\", \"MCPHOST_SECRET_KEY\"]\n}\n",
			want: []span{{2, 26, 46}},
		},
		{
			name: "server inherit_env over lines",
			src:  "server \"a\" {\n  command = \"x\"\n  sandbox {\n    inherit_env = [\n      \"TZ\",\n      \"MCPHOST_TOKEN\",\n    ]\n  }\n}\n",
			want: []span{{6, 7, 22}},
		},
		{
			name: "env key",
			src:  "server \"a\" {\n  command = \"x\"\n  env = {\n    FOO = \"1\"\n    MCPHOST_SECRET_KEY = \"k\"\n  }\n}\n",
			want: []span{{5, 5, 23}},
		},
		{
			name: "quoted env key",
			src:  "server \"a\" {\n  command = \"x\"\n  env = { \"MCPHOST_CLUSTER_SECRET\" = \"s\" }\n}\n",
			want: []span{{3, 11, 35}},
		},
		{
			name: "both, in file order",
			src:  "sandbox {\n  inherit_env = [\"MCPHOST_A\"]\n}\nserver \"a\" {\n  command = \"x\"\n  env = { MCPHOST_B = \"b\" }\n}\n",
			want: []span{{2, 18, 29}, {6, 11, 20}},
		},
		{
			// Names are case-sensitive, and mcphost's own are upper case.
			name: "case matters",
			src:  "sandbox {\n  inherit_env = [\"mcphost_notes\"]\n}\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := Parse([]byte(tt.src), "s.hcl", Options{Executable: testExecutable, LookupEnv: testEnv()})
			var got []span
			for _, d := range diags {
				if d.Severity != hcl.DiagError || d.Summary != "Reserved environment variable" || d.Subject == nil {
					t.Errorf("unexpected diagnostic: %s", d.Error())
					continue
				}
				if d.Subject.Filename != "s.hcl" || d.Subject.End.Line != d.Subject.Start.Line {
					t.Errorf("subject %s is not one line of s.hcl", d.Subject)
				}
				got = append(got, span{d.Subject.Start.Line, d.Subject.Start.Column, d.Subject.End.Column})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("reserved-name subjects (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInheritedEnv(t *testing.T) {
	s := Server{Sandbox: Sandbox{InheritEnv: []string{"LANG", "PATH", "MCPHOST_SECRET_KEY", "TZ"}}}
	want := []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "TZ"}
	if diff := cmp.Diff(want, s.InheritedEnv()); diff != "" {
		t.Errorf("InheritedEnv (-want +got):\n%s", diff)
	}
	// A Server built by hand, not loaded, still gets the defaults.
	var zero Server
	if diff := cmp.Diff(DefaultInheritEnv(), zero.InheritedEnv()); diff != "" {
		t.Errorf("InheritedEnv of a zero Server (-want +got):\n%s", diff)
	}
}

// TestSandboxDiagnostics checks each error of a sandbox block: its
// summary, what its detail says, and where it points.
func TestSandboxDiagnostics(t *testing.T) {
	root := sandboxTree(t)
	tests := []struct {
		name, src string
		want      []wantDiag
	}{
		{
			name: "top-level values",
			src: `sandbox {
  mode           = "strict"
  on_unsupported = "ignore"
  network        = "lan"
  sandbox_uid    = 0
}
`,
			want: []wantDiag{
				{summary: "Invalid sandbox mode", detail: `Use "enforce" (the default`, line: 2, col: 20},
				{summary: "Invalid on_unsupported", detail: `Use "refuse" (the default`, line: 3, col: 20},
				{summary: "Invalid network", detail: `"proxy" (only through mcphost's egress proxy`, line: 4, col: 20},
				{summary: "Invalid sandbox_uid", detail: "which is root", line: 5, col: 20},
			},
		},
		{
			name: "sandbox_uid too large",
			src:  "sandbox {\n  sandbox_uid = 4294967296\n}\n",
			want: []wantDiag{{summary: "Invalid sandbox_uid", detail: "outside 1 to 2147483647", line: 2, col: 17}},
		},
		{
			name: "sandbox_uid negative",
			src:  "sandbox {\n  sandbox_uid = -1\n}\n",
			want: []wantDiag{{summary: "Invalid sandbox_uid", detail: "The sandbox_uid -1 is outside 1 to", line: 2, col: 17}},
		},
		{
			name: "sandbox_uid not whole",
			src:  "sandbox {\n  sandbox_uid = 1.5\n}\n",
			want: []wantDiag{{summary: "Invalid sandbox_uid", detail: "1.5 is not a whole number", line: 2, col: 17}},
		},
		{
			name: "server settings at the top level",
			src: `sandbox {
  read        = ["/"]
  write       = ["/"]
  allow_hosts = ["api.github.com:443"]
  runtime     = "node"
  limits {
    memory = "1GiB"
  }
}
`,
			want: []wantDiag{
				{summary: "Argument only in a server's sandbox block", detail: `server "NAME" { sandbox { read = ["/srv/reference"] } }`, line: 2, col: 3},
				{summary: "Argument only in a server's sandbox block", detail: "sets write, which says what one server may reach", line: 3, col: 3},
				{summary: "Argument only in a server's sandbox block", detail: "sets allow_hosts", line: 4, col: 3},
				{summary: "Argument only in a server's sandbox block", detail: "sets runtime", line: 5, col: 3},
				{summary: "Block only in a server's sandbox block", detail: "has a limits block", line: 6, col: 3},
			},
		},
		{
			name: "sandbox_uid in a server",
			src:  "server \"a\" {\n  command = \"x\"\n  sandbox {\n    sandbox_uid = 1000\n  }\n}\n",
			want: []wantDiag{{summary: "Argument only in the top-level sandbox block", detail: "Move it into the top-level sandbox block", line: 4, col: 5}},
		},
		{
			name: "server values",
			src: `server "a" {
  command = "x"
  sandbox {
    mode           = "audit"
    on_unsupported = "skip"
    network        = "vpn"
    runtime        = "ruby"
  }
}
`,
			want: []wantDiag{
				{summary: "Invalid sandbox mode", detail: `The sandbox mode "audit" is not known`, line: 4, col: 22},
				{summary: "Invalid on_unsupported", detail: `"warn" (it starts with the layers there are`, line: 5, col: 22},
				{summary: "Invalid network", detail: `The network "vpn" is not known`, line: 6, col: 22},
				{summary: "Invalid runtime", detail: `"python" (uvx: private uv caches, and pypi.org:443 and files.pythonhosted.org:443)`, line: 7, col: 22},
			},
		},
		{
			name: "allow_hosts entries",
			src: `server "a" {
  command = "x"
  sandbox {
    allow_hosts = ["api.github.com:443", "registry.npmjs.org", "*.com:443"]
  }
}
`,
			want: []wantDiag{
				{summary: "Invalid allow_hosts entry", detail: `"registry.npmjs.org" has no port: write host:port, such as "registry.npmjs.org:443"`, line: 4, col: 42},
				{summary: "Invalid allow_hosts entry", detail: "grants every name under a top-level domain", line: 4, col: 64},
			},
		},
		{
			name: "paths",
			src: `server "a" {
  command = "x"
  sandbox {
    read  = ["../srv/ro", "../srv/missing", ""]
    write = ["~/nowhere", env("MISSING_DIR", "../srv/gone")]
  }
}
`,
			want: []wantDiag{
				{summary: "Path not found", detail: `The read grant "../srv/missing" of server "a" (ROOT/srv/missing) does not exist`, line: 4, col: 27},
				{summary: "Empty path", detail: `The read grant "" of server "a" is empty`, line: 4, col: 45},
				{summary: "Path not found", detail: `The write grant "~/nowhere" of server "a" (ROOT/home/me/nowhere) does not exist`, line: 5, col: 14},
				// A path read with env() is not shown, nor what it resolves to.
				{summary: "Path not found", detail: `The write grant read from env("MISSING_DIR") (not shown) of server "a" does not exist`, excludes: "gone", line: 5, col: 27},
			},
		},
		{
			name: "limits",
			src: `server "a" {
  command = "x"
  sandbox {
    limits {
      open_files = 0
      memory     = "32MiB"
      pids       = 1.5
      cpu        = -1
    }
    limits {
    }
  }
}
`,
			want: []wantDiag{
				{summary: "Invalid open_files limit", detail: "The open_files limit 0 is outside 1 to 2147483647", line: 5, col: 20},
				{summary: "Invalid memory limit", detail: `The memory limit "32MiB" is below 64MiB`, line: 6, col: 20},
				{summary: "Invalid pids limit", detail: "The pids limit 1.5 is not a whole number", line: 7, col: 20},
				{summary: "Invalid cpu limit", detail: "The cpu limit -1 is outside 1 to", line: 8, col: 20},
				{summary: "Duplicate limits block", detail: "already has a limits block at", line: 10, col: 5},
			},
		},
		{
			name: "memory that is not a size",
			src:  "server \"a\" {\n  command = \"x\"\n  sandbox {\n    limits {\n      memory = \"lots\"\n    }\n  }\n}\n",
			want: []wantDiag{{summary: "Invalid memory limit", detail: `The memory limit "lots" is not a size: "lots" is not a whole number. Write a size with a unit, such as "512MiB"`, line: 5, col: 16}},
		},
		{
			name: "memory in bytes below the minimum",
			src:  "server \"a\" {\n  command = \"x\"\n  sandbox {\n    limits {\n      memory = 1048576\n    }\n  }\n}\n",
			want: []wantDiag{{summary: "Invalid memory limit", detail: "The memory limit 1048576 is below 64MiB (67108864 bytes)", line: 5, col: 16}},
		},
		{
			name: "memory of the wrong type",
			src:  "server \"a\" {\n  command = \"x\"\n  sandbox {\n    limits {\n      memory = true\n    }\n  }\n}\n",
			want: []wantDiag{{summary: "Invalid memory limit", detail: "The memory limit is bool, not a size.", line: 5, col: 16}},
		},
		{
			name: "network none with allow_hosts",
			src:  "server \"a\" {\n  command = \"x\"\n  sandbox {\n    network     = \"none\"\n    allow_hosts = [\"api.github.com:443\"]\n  }\n}\n",
			want: []wantDiag{{summary: "Contradictory network", detail: `Remove network = "none" (hosts make the network "proxy"`, line: 4, col: 5}},
		},
		{
			name: "network none with a runtime",
			src:  "server \"a\" {\n  command = \"npx\"\n  sandbox {\n    network = \"none\"\n    runtime = \"node\"\n  }\n}\n",
			want: []wantDiag{{summary: "Contradictory network", detail: `runtime = "node" grants registry.npmjs.org:443. Remove network = "none"`, line: 4, col: 5}},
		},
		{
			name: "network host with allow_hosts",
			src:  "server \"a\" {\n  command = \"x\"\n  sandbox {\n    network     = \"host\"\n    allow_hosts = [\"api.github.com:443\"]\n  }\n}\n",
			want: []wantDiag{{summary: "Contradictory network", detail: "so its allow_hosts would restrict nothing", line: 4, col: 5}},
		},
		{
			name: "the data directory",
			src: `server "a" {
  command = "x"
  sandbox {
    read  = ["../state/mcphost", "../state/mcphost/sub"]
    write = ["..", "../link-data"]
  }
}
`,
			want: []wantDiag{
				{summary: "Grant reaches a protected path", detail: `The read grant "../state/mcphost" of server "a" (ROOT/state/mcphost) is the data directory ROOT/state/mcphost, which holds the owner token and every transcript. A sandboxed server never sees`, line: 4, col: 14},
				{summary: "Grant reaches a protected path", detail: "lies inside the data directory ROOT/state/mcphost", line: 4, col: 34},
				{summary: "Grant reaches a protected path", detail: "contains the data directory ROOT/state/mcphost, which holds the owner token and every transcript. A sandboxed server never sees mcphost's own state: its data directory, its configuration and the files the configuration reads. Narrow the grant: list the subdirectories", line: 5, col: 14},
				// A symlink to it is it.
				{summary: "Grant reaches a protected path", detail: `The write grant "../link-data" of server "a" (ROOT/state/mcphost) is the data directory`, line: 5, col: 20},
			},
		},
		{
			name: "the configuration file",
			src:  "server \"a\" {\n  command = \"x\"\n  sandbox {\n    read  = [\"mcphost.hcl\"]\n    write = [\".\"]\n  }\n}\n",
			want: []wantDiag{
				{summary: "Grant reaches a protected path", detail: "is the configuration file ROOT/conf/mcphost.hcl.", line: 4, col: 14},
				{summary: "Grant reaches a protected path", detail: "(ROOT/conf) contains the configuration file ROOT/conf/mcphost.hcl.", line: 5, col: 14},
			},
		},
		{
			// The file is read after the server block: the check waits
			// for the whole file.
			name: "a file read with file()",
			src:  "server \"a\" {\n  command = \"x\"\n  sandbox {\n    read = [\"../secrets\"]\n  }\n}\nprincipal \"p\" {\n  token = file(\"../secrets/token.txt\")\n}\n",
			want: []wantDiag{{summary: "Grant reaches a protected path", detail: "contains ROOT/secrets/token.txt, which the configuration reads with file()", line: 4, col: 13}},
		},
		{
			name: "a file read with file() from a path read with env()",
			src:  "server \"a\" {\n  command = \"x\"\n  sandbox {\n    read = [\"../secrets\"]\n  }\n}\nprincipal \"p\" {\n  token = file(env(\"TOKEN_FILE\"))\n}\n",
			want: []wantDiag{{summary: "Grant reaches a protected path", detail: "contains a file the configuration reads with file() (its path is read with env() or file(), not shown)", excludes: "token.txt", line: 4, col: 13}},
		},
		{
			// A root that exists is granted read-write; one that does not
			// is neither granted nor an error.
			name: "roots",
			src:  "server \"a\" {\n  command = \"x\"\n  roots   = [\"file://ROOT/state\", \"file:///nonexistent/mcphost-test-root\"]\n}\n",
			want: []wantDiag{{summary: "Grant reaches a protected path", detail: `The root "file://ROOT/state" of server "a" contains the data directory ROOT/state/mcphost, which holds the owner token and every transcript. A sandboxed server never sees mcphost's own state: its data directory, its configuration and the files the configuration reads. A root is granted read-write`, line: 3, col: 14}},
		},
		{
			// A server with mode = "off" is checked all the same, so that
			// turning it on later is not a surprise.
			name: "mode off",
			src:  "server \"a\" {\n  command = \"x\"\n  sandbox {\n    mode = \"off\"\n    read = [\"../state/mcphost\"]\n  }\n}\n",
			want: []wantDiag{{summary: "Grant reaches a protected path", detail: "is the data directory", line: 5, col: 13}},
		},
		{
			name: "a remote server",
			src:  "server \"r\" {\n  url = \"https://mcp.example.com/mcp\"\n  sandbox {\n    read = [\"/nonexistent\"]\n  }\n}\n",
			want: []wantDiag{{summary: "Block only for stdio servers", detail: "Remove the sandbox block.", line: 3, col: 3}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := loadSandbox(t, root, tt.src)
			checkDiags(t, root, diags, tt.want)
		})
	}
}

// TestSandboxMerge checks what each server's Sandbox holds: its own
// settings over the top-level ones over the defaults, runtime presets,
// and the network that hosts imply.
func TestSandboxMerge(t *testing.T) {
	root := sandboxTree(t)
	top := func(mod func(*Sandbox)) Sandbox {
		sb := Sandbox{Mode: SandboxEnforce, OnUnsupported: UnsupportedRefuse, Network: NetworkNone, UID: DefaultSandboxUID}
		if mod != nil {
			mod(&sb)
		}
		return sb
	}
	tests := []struct {
		name, src string
		top       Sandbox
		servers   map[string]Sandbox
	}{
		{
			name:    "defaults",
			src:     "server \"a\" {\n  command = \"x\"\n}\nserver \"r\" {\n  url = \"https://mcp.example.com/mcp\"\n}\n",
			top:     top(nil),
			servers: map[string]Sandbox{"a": top(nil), "r": {}},
		},
		{
			name: "the top level for every server",
			src: `sandbox {
  mode           = "off"
  on_unsupported = "warn"
  network        = "host"
  sandbox_uid    = 1000
}
server "a" {
  command = "x"
}
server "b" {
  command = "y"
  sandbox {}
}
`,
			top: Sandbox{Mode: SandboxOff, OnUnsupported: UnsupportedWarn, Network: NetworkHost, UID: 1000},
			servers: map[string]Sandbox{
				"a": {Mode: SandboxOff, OnUnsupported: UnsupportedWarn, Network: NetworkHost, UID: 1000},
				"b": {Mode: SandboxOff, OnUnsupported: UnsupportedWarn, Network: NetworkHost, UID: 1000},
			},
		},
		{
			name: "a server's own settings win",
			src: `sandbox {
  mode    = "off"
  network = "host"
}
server "a" {
  command = "x"
  sandbox {
    mode           = "enforce"
    on_unsupported = "warn"
    network        = "proxy"
  }
}
`,
			top: top(func(s *Sandbox) { s.Mode, s.Network = SandboxOff, NetworkHost }),
			servers: map[string]Sandbox{
				"a": top(func(s *Sandbox) { s.OnUnsupported, s.Network = UnsupportedWarn, NetworkProxy }),
			},
		},
		{
			name: "runtime presets make the network proxy",
			src: `server "node" {
  command = "npx"
  sandbox {
    runtime = "node"
  }
}
server "python" {
  command = "uvx"
  sandbox {
    runtime     = "python"
    allow_hosts = ["api.github.com:443", "pypi.org:443", "api.github.com:443"]
  }
}
`,
			top: top(nil),
			servers: map[string]Sandbox{
				"node": top(func(s *Sandbox) {
					s.Runtime, s.Network, s.AllowHosts = RuntimeNode, NetworkProxy, rules(t, "registry.npmjs.org:443")
				}),
				// Written hosts first, then the preset's; each once.
				"python": top(func(s *Sandbox) {
					s.Runtime, s.Network = RuntimePython, NetworkProxy
					s.AllowHosts = rules(t, "api.github.com:443", "pypi.org:443", "files.pythonhosted.org:443")
				}),
			},
		},
		{
			// The top-level network is a default: a server's hosts are
			// more precise. Its own network = "host" keeps the runtime's
			// hosts (they are reachable anyway), and "proxy" without
			// hosts denies everything.
			name: "what hosts imply",
			src: `sandbox {
  network = "host"
}
server "hosts" {
  command = "x"
  sandbox {
    allow_hosts = ["*.example.com:443"]
  }
}
server "host" {
  command = "npx"
  sandbox {
    network = "host"
    runtime = "node"
  }
}
server "proxy" {
  command = "x"
  sandbox {
    network = "proxy"
  }
}
`,
			top: top(func(s *Sandbox) { s.Network = NetworkHost }),
			servers: map[string]Sandbox{
				"hosts": top(func(s *Sandbox) { s.Network, s.AllowHosts = NetworkProxy, rules(t, "*.example.com:443") }),
				"host": top(func(s *Sandbox) {
					s.Network, s.Runtime, s.AllowHosts = NetworkHost, RuntimeNode, rules(t, "registry.npmjs.org:443")
				}),
				"proxy": top(func(s *Sandbox) { s.Network = NetworkProxy }),
			},
		},
		{
			name: "limits",
			src: `server "a" {
  command = "x"
  sandbox {
    limits {
      open_files = 64
      memory     = "2GB"
      pids       = 32
      cpu        = 600
    }
  }
}
server "b" {
  command = "x"
  sandbox {
    limits {
      memory = 536870912
    }
  }
}
server "c" {
  command = "x"
  sandbox {
    limits {
      memory = "64MiB"
    }
  }
}
`,
			top: top(nil),
			servers: map[string]Sandbox{
				"a": top(func(s *Sandbox) { s.Limits = SandboxLimits{OpenFiles: 64, Memory: 2e9, Pids: 32, CPU: 600} }),
				"b": top(func(s *Sandbox) { s.Limits = SandboxLimits{Memory: 512 << 20} }),
				"c": top(func(s *Sandbox) { s.Limits = SandboxLimits{Memory: MinSandboxMemory} }),
			},
		},
		{
			name: "inherit_env adds to the top level",
			src:  "sandbox {\n  inherit_env = [\"LANG\"]\n}\nserver \"a\" {\n  command = \"x\"\n  sandbox {\n    inherit_env = [\"TZ\", \"LANG\"]\n  }\n}\n",
			top:  top(func(s *Sandbox) { s.InheritEnv = []string{"LANG"} }),
			servers: map[string]Sandbox{
				"a": top(func(s *Sandbox) { s.InheritEnv = []string{"LANG", "TZ"} }),
			},
		},
	}
	ignore := cmp.Options{cmpopts.IgnoreFields(Sandbox{}, "DeclRange", "Protected"), cmp.Comparer(func(a, b egress.Rule) bool { return a == b }), cmpopts.EquateEmpty()}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, diags := loadSandbox(t, root, tt.src)
			if len(diags) > 0 {
				t.Fatalf("diagnostics:%s", diagText(diags))
			}
			if diff := cmp.Diff(tt.top, cfg.Sandbox, ignore); diff != "" {
				t.Errorf("top-level sandbox (-want +got):\n%s", diff)
			}
			for name, want := range tt.servers {
				if diff := cmp.Diff(want, cfg.Server(name).Sandbox, ignore); diff != "" {
					t.Errorf("server %s sandbox (-want +got):\n%s", name, diff)
				}
			}
		})
	}
}

// TestSandboxPaths checks how read and write grants and roots resolve.
func TestSandboxPaths(t *testing.T) {
	root := sandboxTree(t)
	p := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	tests := []struct {
		name, src   string
		read, write []string
	}{
		{
			name:  "home, relative and absolute",
			src:   "server \"a\" {\n  command = \"x\"\n  sandbox {\n    read  = [\"~/notes\", \"../srv/ro/file.txt\"]\n    write = [\"~\", \"ROOT/srv/rw\"]\n  }\n}\n",
			read:  []string{p("home/me/notes"), p("srv/ro/file.txt")},
			write: []string{p("home/me"), p("srv/rw")},
		},
		{
			name: "symlinks, cleaning and duplicates",
			src:  "server \"a\" {\n  command = \"x\"\n  sandbox {\n    read  = [\"../link-ro\", \"../srv/rw/../ro/\", \"ROOT/srv/ro\"]\n  }\n}\n",
			read: []string{p("srv/ro")},
		},
		{
			// Beside the data directory is not inside it.
			name:  "a sibling of the data directory",
			src:   "server \"a\" {\n  command = \"x\"\n  sandbox {\n    write = [\"../state/mcphost-old\"]\n  }\n}\n",
			write: []string{p("state/mcphost-old")},
		},
		{
			// Roots that exist join write, after the grants; one that
			// does not exist is left out.
			name:  "roots",
			src:   "server \"a\" {\n  command = \"x\"\n  roots   = [\"file://ROOT/srv/rw\", \"file://ROOT/link-ro\", \"file:///nonexistent/mcphost-test-root\"]\n  sandbox {\n    write = [\"../srv/rw\", \"~/notes\"]\n  }\n}\n",
			write: []string{p("srv/rw"), p("home/me/notes"), p("srv/ro")},
		},
		{
			name:  "roots without a sandbox block",
			src:   "server \"a\" {\n  command = \"x\"\n  roots   = [\"file://ROOT/home/me/notes\"]\n}\n",
			write: []string{p("home/me/notes")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, diags := loadSandbox(t, root, tt.src)
			if len(diags) > 0 {
				t.Fatalf("diagnostics:%s", diagText(diags))
			}
			sb := cfg.Server("a").Sandbox
			if diff := cmp.Diff(tt.read, sb.Read, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Read (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.write, sb.Write, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Write (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSandboxProtected checks the protected set: the data directory, the
// configuration file and the files read with file(), in every local
// server's Sandbox and in none of a remote one.
func TestSandboxProtected(t *testing.T) {
	root := sandboxTree(t)
	src := "server \"a\" {\n  command = \"x\"\n}\nserver \"r\" {\n  url = \"https://mcp.example.com/mcp\"\n}\nprincipal \"p\" {\n  token = file(\"../secrets/token.txt\")\n}\n"
	cfg, diags := loadSandbox(t, root, src)
	if len(diags) > 0 {
		t.Fatalf("diagnostics:%s", diagText(diags))
	}
	want := []string{filepath.Join(root, "state", "mcphost"), filepath.Join(root, "conf", "mcphost.hcl"), filepath.Join(root, "secrets", "token.txt")}
	if diff := cmp.Diff(want, cfg.Sandbox.Protected); diff != "" {
		t.Errorf("Config.Sandbox.Protected (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, cfg.Server("a").Sandbox.Protected); diff != "" {
		t.Errorf("stdio server's Protected (-want +got):\n%s", diff)
	}
	if got := cfg.Server("r").Sandbox.Protected; got != nil {
		t.Errorf("remote server's Protected = %q, want none", got)
	}

	// Through an fs.FS, paths are BaseDir's; from memory there is no file.
	fsys := fstest.MapFS{
		"conf/mcphost.hcl": {Data: []byte("data_dir = \"/nonexistent/state\"\nprincipal \"p\" {\n  token = file(\"../token.txt\")\n}\n")},
		"token.txt":        {Data: []byte("p-0123456789abcdef")},
	}
	cfg, diags = Load(fsys, "conf/mcphost.hcl", Options{LookupEnv: testEnv(), BaseDir: "/nonexistent/etc/mcphost"})
	if len(diags) > 0 {
		t.Fatalf("diagnostics:%s", diagText(diags))
	}
	want = []string{"/nonexistent/state", "/nonexistent/etc/mcphost/mcphost.hcl", "/nonexistent/etc/token.txt"}
	if diff := cmp.Diff(want, cfg.Sandbox.Protected); diff != "" {
		t.Errorf("Load: Protected (-want +got):\n%s", diff)
	}
	cfg, diags = Parse([]byte("data_dir = \"/nonexistent/state\"\n"), "inline.hcl", testOptions())
	if len(diags) > 0 {
		t.Fatalf("diagnostics:%s", diagText(diags))
	}
	if diff := cmp.Diff([]string{"/nonexistent/state"}, cfg.Sandbox.Protected); diff != "" {
		t.Errorf("Parse: Protected (-want +got):\n%s", diff)
	}
}

func TestWithin(t *testing.T) {
	tests := []struct {
		p, dir string
		want   bool
	}{
		{"/data", "/data", true},
		{"/data/x", "/data", true},
		{"/data/x/y", "/data", true},
		{"/database", "/data", false},
		{"/data", "/database", false},
		{"/dat", "/data", false},
		{"/data", "/data/x", false},
		{"/", "/data", false},
		{"/data", "/", true},
		{"/", "/", true},
	}
	for _, tt := range tests {
		if got := within(filepath.FromSlash(tt.p), filepath.FromSlash(tt.dir)); got != tt.want {
			t.Errorf("within(%q, %q) = %v, want %v", tt.p, tt.dir, got, tt.want)
		}
	}
}

// TestRuntimeHosts checks that every preset's hosts parse as allow_hosts
// entries (decodeServerSandbox would drop one that does not).
func TestRuntimeHosts(t *testing.T) {
	for runtime, hosts := range runtimeHosts {
		for _, h := range hosts {
			if _, err := egress.ParseRule(h); err != nil {
				t.Errorf("runtime %q: %v", runtime, err)
			}
		}
	}
	if len(runtimeHosts) != 2 || runtimeHosts[RuntimeNode] == nil || runtimeHosts[RuntimePython] == nil {
		t.Errorf("runtimeHosts = %v, want the node and python presets", runtimeHosts)
	}
}
