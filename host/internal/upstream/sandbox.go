package upstream

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/mcphost/mcphost/confine"
	"github.com/mcphost/mcphost/egress"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/wasmserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SandboxStatus is what a stdio server's card and its entry of
// GET /api/v1/servers say of its sandbox.
type SandboxStatus struct {
	// Summary names the active layers ("fs, net, unix, uid, …"), or says
	// "unsandboxed" (mode = "off"), or lists those dropped.
	Summary string `json:"summary"`
	// Layers are the layers of the last start, each active or not.
	Layers []confine.Layer `json:"layers,omitempty"`
	// Network is "none", "proxy" or "host"; AllowHosts what the proxy lets
	// through.
	Network    string   `json:"network"`
	AllowHosts []string `json:"allowHosts,omitempty"`
	// Denied counts connections the egress proxy refused; Denials are the
	// last few, newest last.
	Denied  uint64          `json:"denied,omitempty"`
	Denials []egress.Denial `json:"denials,omitempty"`
	// Hints are what the server's stderr said it was refused, with the
	// grant that would allow it (the last few).
	Hints []string `json:"hints,omitempty"`
}

// Dropped names the layers the server runs without although its block
// asks for them (on_unsupported = "warn"); a server with mode = "off"
// reports every layer but env.
func (st *SandboxStatus) Dropped() []string {
	var out []string
	for _, l := range st.Layers {
		if !l.Active && l.Name != "env" && !(l.Name == "net" && st.Network == config.NetworkHost) {
			out = append(out, l.Name)
		}
	}
	return out
}

// maxHints bounds the hints a server's status keeps.
const maxHints = 5

// Box is one stdio server's sandbox, kept across its sessions: the plan of
// each start, its egress proxy, and what the server was refused.
type Box struct {
	server string
	spec   confine.Spec
	hosts  []string
	logger *slog.Logger
	proxy  *egress.Proxy

	wasm *wasmGrant // a WebAssembly server's grants (nil for a process)

	mu     sync.Mutex
	layers []confine.Layer
	hints  []string
}

// NewBox prepares the sandbox of the stdio server s, whose own directory
// lies in dir (the data directory's sandboxes/), with the data directory
// protected besides what the config protects. Its egress proxy, when it
// has one, logs and counts each refused connection.
func NewBox(s *config.Server, dir, dataDir string, logger *slog.Logger) *Box {
	sb := s.Sandbox
	spec := confine.Spec{
		Server:    s.Name,
		Off:       sb.Mode == config.SandboxOff,
		Warn:      sb.OnUnsupported == config.UnsupportedWarn,
		Network:   cmp.Or(sb.Network, config.NetworkNone),
		Read:      sb.Read,
		Write:     withRoots(sb.Write, s.Roots),
		Protected: slices.Clone(sb.Protected),
		Dir:       filepath.Join(dir, s.Name),
		UID:       cmp.Or(sb.UID, config.DefaultSandboxUID),
		Runtime:   sb.Runtime,
		Limits: confine.Limits{OpenFiles: sb.Limits.OpenFiles, Memory: sb.Limits.Memory,
			Pids: sb.Limits.Pids, CPU: sb.Limits.CPU},
	}
	if dataDir != "" && !slices.Contains(spec.Protected, dataDir) {
		spec.Protected = append(spec.Protected, dataDir)
	}
	b := &Box{server: s.Name, spec: spec, logger: logger}
	for _, r := range sb.AllowHosts {
		b.hosts = append(b.hosts, r.String())
	}
	if spec.Network == config.NetworkProxy && !spec.Off {
		b.proxy = &egress.Proxy{Server: s.Name, Rules: sb.AllowHosts, Logger: logger}
	}
	return b
}

// withRoots adds the paths of a server's file roots to its write grants
// (the config loader does so for a loaded config; a server built in code
// gets the same).
func withRoots(write, roots []string) []string {
	out := slices.Clone(write)
	for _, r := range roots {
		u, err := url.Parse(r)
		if err != nil || u.Scheme != "file" || u.Path == "" {
			continue
		}
		p := filepath.Clean(u.Path)
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// Command turns the server's plain command into its contained one. A
// start the machine cannot contain as the config asks comes back as a
// command whose Err says why, so that starting it fails with that.
func (b *Box) Command(base *exec.Cmd) *exec.Cmd {
	plan, err := confine.Prepare(b.spec, confine.Detect())
	if err != nil {
		base.Err = err
		return base
	}
	b.mu.Lock()
	b.layers = plan.Layers()
	b.mu.Unlock()
	for _, l := range plan.Layers() {
		hostNet := l.Name == "net" && b.spec.Network == config.NetworkHost
		if !b.spec.Off && !l.Active && !hostNet {
			b.logger.Warn("server starts without a sandbox layer (on_unsupported = \"warn\")", "layer", l.Name, "reason", l.Detail)
		}
	}
	var serve func(net.Listener)
	if b.proxy != nil {
		serve = func(ln net.Listener) { _ = b.proxy.Serve(ln) }
	}
	cmd, err := plan.Command(base, serve)
	if err != nil {
		base.Err = err
		return base
	}
	return cmd
}

// Status is the sandbox part of the server's status.
func (b *Box) Status() *SandboxStatus {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := &SandboxStatus{Layers: slices.Clone(b.layers), Network: b.spec.Network, AllowHosts: b.hosts, Hints: slices.Clone(b.hints)}
	switch {
	case b.wasm != nil:
		st.Summary = "webassembly: " + confine.Summary(b.layers)
	case b.spec.Off:
		st.Summary = "unsandboxed"
	case len(b.layers) == 0:
		st.Summary = "not started yet"
	default:
		st.Summary = confine.Summary(b.layers)
	}
	if b.proxy != nil {
		_, st.Denied = b.proxy.Counts()
		st.Denials = b.proxy.Denials()
	}
	return st
}

// deniedLine finds a path in a line that reports a refused file access.
var deniedLine = regexp.MustCompile(`(?i)(?:EACCES|EPERM|EROFS|permission denied|operation not permitted|read-only file system)`)
var pathInLine = regexp.MustCompile(`(?:^|[\s'"(:])(/[^\s'"():,]+)`)

// StderrLine looks at one line of the server's stderr: a refused access
// to a path outside its grants becomes a hint naming the grant that would
// allow it, kept for the server's status.
func (b *Box) StderrLine(line string) {
	if b.spec.Off || !deniedLine.MatchString(line) || strings.HasPrefix(line, "sandbox: ") {
		return
	}
	m := pathInLine.FindStringSubmatch(line)
	if m == nil {
		return
	}
	path := filepath.Clean(m[1])
	for _, p := range b.spec.Protected {
		if path == p || strings.HasPrefix(path, p+"/") {
			return // mcphost's own state: never granted, no hint
		}
	}
	hint := fmt.Sprintf("the sandbox refused %s; to allow it, grant it in the server's block: sandbox { read = [%q] } (or write = [...] to modify it)", path, path)
	b.mu.Lock()
	defer b.mu.Unlock()
	if slices.Contains(b.hints, hint) {
		return
	}
	if len(b.hints) == maxHints {
		b.hints = b.hints[1:]
	}
	b.hints = append(b.hints, hint)
	b.logger.Info("sandbox refused a path the server asked for", "path", path)
}

// NewWasmBox is the sandbox of a WebAssembly server: the module itself,
// run inside mcphost, which reaches only what it is granted. Its compiled
// code is kept in cacheDir ("" for none).
func NewWasmBox(s *config.Server, cacheDir string, logger *slog.Logger) *Box {
	sb := s.Sandbox
	b := &Box{server: s.Name, logger: logger, wasm: &wasmGrant{path: s.Wasm, args: s.Args, env: s.Env, cacheDir: cacheDir,
		read: sb.Read, write: withRoots(sb.Write, s.Roots)}}
	b.spec = confine.Spec{Server: s.Name, Off: sb.Mode == config.SandboxOff, Network: config.NetworkNone}
	for _, r := range sb.AllowHosts {
		b.hosts = append(b.hosts, r.String())
		b.wasm.hosts = append(b.wasm.hosts, r.Host)
		if r.Subdomains {
			b.wasm.hosts[len(b.wasm.hosts)-1] = "*." + r.Host
		}
	}
	if len(b.hosts) > 0 {
		b.spec.Network = config.NetworkProxy
	}
	b.layers = []confine.Layer{
		{Name: "env", Active: true, Detail: "its env only"},
		{Name: "fs", Active: true, Detail: fmt.Sprintf("WebAssembly: only its %d granted directories", len(b.wasm.read)+len(b.wasm.write))},
		{Name: "net", Active: true, Detail: wasmNetDetail(b.hosts)},
		{Name: "memory", Active: true, Detail: "a bounded linear memory, no access to mcphost's"},
	}
	return b
}

func wasmNetDetail(hosts []string) string {
	if len(hosts) == 0 {
		return "no sockets"
	}
	return "HTTP requests of an Extism plugin to its allow_hosts only (by name, every port)"
}

// wasmGrant is what a WebAssembly server is started with.
type wasmGrant struct {
	path, cacheDir string
	args           []string
	env            map[string]string
	read, write    []string
	hosts          []string
}

// WasmTransport starts the WebAssembly server of a session and returns the
// transport to it; closing the session's connection stops the module.
func (b *Box) WasmTransport(ctx context.Context, stderr io.Writer) (mcp.Transport, error) {
	w := b.wasm
	srv, err := wasmserver.Start(ctx, wasmserver.Spec{Name: b.server, Path: w.path, Args: w.args, Env: w.env,
		Read: w.read, Write: w.write, AllowHosts: w.hosts, CacheDir: w.cacheDir, Stderr: stderr, Logger: b.logger})
	if err != nil {
		return nil, err
	}
	return ownedTransport{srv.Transport(), srv}, nil
}

// ownedTransport is a wasm server's transport whose connection, closed,
// stops the server.
type ownedTransport struct {
	mcp.Transport
	srv *wasmserver.Server
}

func (t ownedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		t.srv.Close()
		return nil, err
	}
	return ownedConn{c, t.srv}, nil
}

type ownedConn struct {
	mcp.Connection
	srv *wasmserver.Server
}

func (c ownedConn) Close() error {
	err := c.Connection.Close()
	if cerr := c.srv.Close(); err == nil {
		err = cerr
	}
	return err
}
