package confine

import (
	"fmt"
	"strings"
)

// Network modes.
const (
	NetNone  = "none"  // no network at all, not even loopback to the host
	NetProxy = "proxy" // only the egress proxy, at ProxyAddr inside the server's namespace
	NetHost  = "host"  // the machine's network
)

// ProxyAddr is where a server with NetProxy finds the egress proxy: a
// listener inside its own network namespace whose connections mcphost
// accepts in its own.
const ProxyAddr = "127.0.0.1:3128"

// Spec is what one stdio server is granted. Paths are absolute and clean.
type Spec struct {
	// Server names the server, for errors and status.
	Server string
	// Off runs the server without a sandbox (environment allowlist only).
	Off bool
	// Warn starts the server with the layers the machine has when one it
	// needs is missing, instead of refusing.
	Warn bool
	// Network is NetNone, NetProxy or NetHost.
	Network string
	// Read are files and directories the server may read and execute;
	// Write those it may also write.
	Read, Write []string
	// Protected are paths the server must never reach: mcphost's data
	// directory, its config, the files the config reads. A command or
	// system directory that would expose one is narrowed or masked.
	Protected []string
	// Dir is the server's own directory (it gets home/ and tmp/ inside,
	// read-write): under mcphost's data directory, and the one part of it
	// the server sees.
	Dir string
	// UID is the uid and gid the server runs as when mcphost runs as root.
	UID int
	// Limits bound the server's resources (zero: no bound).
	Limits Limits
	// Runtime is a package runner's preset ("node", "python" or ""): the
	// variables that keep its caches in the server's own home.
	Runtime string
}

// runtimeEnv are the variables of a runtime preset; "~" stands for the
// server's own home.
var runtimeEnv = map[string]map[string]string{
	"node": {
		"npm_config_cache":           "~/.npm",
		"npm_config_update_notifier": "false",
		"npm_config_fund":            "false",
		"npm_config_audit":           "false",
		"npm_config_prefer_offline":  "true",
		"npm_config_userconfig":      "~/.npmrc",
	},
	"python": {
		"UV_CACHE_DIR":   "~/.cache/uv",
		"XDG_CACHE_HOME": "~/.cache",
		"XDG_DATA_HOME":  "~/.local/share",
		"PIP_CACHE_DIR":  "~/.cache/pip",
	},
}

// Limits are a server's resource bounds, applied as rlimits.
type Limits struct {
	OpenFiles int   // RLIMIT_NOFILE
	Memory    int64 // RLIMIT_AS, bytes
	Pids      int   // RLIMIT_NPROC (per uid)
	CPU       int   // RLIMIT_CPU, seconds
}

// DefaultPids bounds the processes of a server that runs as the sandbox
// uid when its block sets no `pids`: a fork bomb ends there.
const DefaultPids = 512

// Layer is one layer of containment and whether it is in force.
type Layer struct {
	// Name is one of "env", "fs", "net", "unix", "uid", "signals",
	// "privileges", "limits", "masks".
	Name string `json:"name"`
	// Active reports whether the layer is enforced.
	Active bool `json:"active"`
	// Detail says how ("landlock v7", "own network namespace, proxy") or,
	// when not active, why not.
	Detail string `json:"detail"`
}

func (l Layer) String() string {
	state := "on"
	if !l.Active {
		state = "off"
	}
	return fmt.Sprintf("%s: %s (%s)", l.Name, state, l.Detail)
}

// Summary is one line naming the layers: "fs, net, unix, uid, signals,
// privileges, limits" or "unsandboxed".
func Summary(layers []Layer) string {
	var on, off []string
	for _, l := range layers {
		if l.Name == "env" {
			continue
		}
		if l.Active {
			on = append(on, l.Name)
		} else {
			off = append(off, l.Name)
		}
	}
	if len(on) == 0 {
		return "unsandboxed"
	}
	s := strings.Join(on, ", ")
	if len(off) > 0 {
		s += " (dropped: " + strings.Join(off, ", ") + ")"
	}
	return s
}

// UnsupportedError is Prepare's refusal: the machine cannot enforce layers
// the server's sandbox needs, and the spec does not say Warn.
type UnsupportedError struct {
	Server  string
	Missing []Layer
}

func (e *UnsupportedError) Error() string {
	var parts []string
	for _, l := range e.Missing {
		parts = append(parts, l.Name+" ("+l.Detail+")")
	}
	return fmt.Sprintf("sandbox: this machine cannot enforce %s for server %q; it was not started. "+
		"To start it with the layers there are, set sandbox { on_unsupported = \"warn\" } in its block; "+
		"to run it unsandboxed, sandbox { mode = \"off\" }. `mcphost doctor` shows what this machine can enforce",
		strings.Join(parts, ", "), e.Server)
}
