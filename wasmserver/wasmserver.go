package wasmserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tetratelabs/wazero"
)

// Kind is the ABI a module speaks, found by [Detect] from its exports.
type Kind string

const (
	// KindWASICommand is a WASI preview 1 command (it exports _start) that
	// serves MCP on stdin and stdout, newline-delimited JSON-RPC, like a
	// stdio server process.
	KindWASICommand Kind = "wasi-command"
	// KindExtismV2 is an Extism plugin with hyper-mcp's v2 ABI: it exports
	// list_tools and call_tool, and optionally list_prompts, get_prompt,
	// list_resources, list_resource_templates, read_resource, complete and
	// on_roots_list_changed.
	KindExtismV2 Kind = "extism-v2"
	// KindExtismV1 is an Extism plugin with hyper-mcp's v1 ABI: it exports
	// describe and call.
	KindExtismV1 Kind = "extism-v1"
)

// Defaults and bounds. A page of WebAssembly memory is 64 KiB.
const (
	// DefaultCommandMemoryPages caps a WASI command's memory at 1 GiB: a Go
	// MCP server compiled to wasm needs some tens of MiB, and the cap is
	// reserved lazily (memory grows as the guest asks).
	DefaultCommandMemoryPages = 16384
	// DefaultPluginMemoryPages caps an Extism plugin's memory at 512 MiB,
	// hyper-mcp's example limit.
	DefaultPluginMemoryPages = 8192
	// MaxMemoryPages is what 32-bit WebAssembly can address: 4 GiB.
	MaxMemoryPages = 65536
	// DefaultCallTimeout bounds one call into an Extism plugin.
	DefaultCallTimeout = 30 * time.Second
	// MaxWasmBytes bounds the size of a .wasm file (a Go MCP server
	// compiled to wasm is about 15 MB).
	MaxWasmBytes = 256 << 20
	// MaxLineBytes bounds one line a WASI command writes to stdout: a
	// longer one ends the session and stops the module (see [Server.Err]).
	MaxLineBytes = 16 << 20
	// MaxHTTPResponseBytes bounds the body of one HTTP response an Extism
	// plugin receives through the host.
	MaxHTTPResponseBytes = 16 << 20
)

// closeGrace is how long Close waits for a WASI command to exit after its
// stdin ends before it stops the module, and stopWait how long it then
// waits for the module to stop. It matches negotiate.SessionTerminateDuration.
const (
	closeGrace = time.Second
	stopWait   = 5 * time.Second
)

// Spec is one wasm server, as the host's config gives it. The zero value of
// every field but Path is usable.
type Spec struct {
	// Name names the server in errors and logs.
	Name string
	// Path is the .wasm file.
	Path string
	// Args are the arguments after argv[0] (the file's base name) of a WASI
	// command. An Extism plugin has no arguments: Start logs a warning and
	// ignores them.
	Args []string
	// Env is a WASI command's environment, and nothing else of the host's
	// environment reaches it. For an Extism plugin the same map is its
	// config (pdk.GetConfig), like hyper-mcp's env_vars; a plugin has no
	// environment variables.
	Env map[string]string
	// Read and Write are host directories the module may read, and read
	// and write, each visible at the same absolute path inside. For a
	// plugin they become Extism allowed paths, Read ones mounted read-only
	// (Extism's "ro:" prefix). Each must be an existing directory.
	Read, Write []string
	// AllowHosts are the hosts an Extism plugin may send HTTP requests to,
	// through Extism's HTTP host function: a name ("api.example.com"), a
	// pattern ("*.example.com", where * also matches dots) or "*". mcphost's
	// rules are "host:port": the port is stripped, since Extism matches
	// names only, so a rule grants every port of its host. A WASI command
	// has no network at all (WASI preview 1 has no sockets): Start logs a
	// warning and ignores them.
	AllowHosts []string
	// CacheDir is a directory for wazero's compilation cache, kept across
	// runs: with it, a restart skips compiling the module (seconds for a Go
	// server). "" compiles in memory every time.
	CacheDir string
	// MemoryLimitPages caps the module's linear memory in 64 KiB pages. 0
	// means [DefaultCommandMemoryPages] or [DefaultPluginMemoryPages].
	MemoryLimitPages uint32
	// CallTimeout bounds one call into an Extism plugin (a tool call, a
	// prompt, a resource read); 0 means [DefaultCallTimeout]. A call that
	// runs past it becomes an error result and the instance is replaced. A
	// WASI command's calls are bounded by the caller's context, as for any
	// stdio server.
	CallTimeout time.Duration
	// Stderr receives a WASI command's stderr, or an Extism plugin's WASI
	// stdout and stderr, as the guest writes them; a write that blocks
	// blocks the guest. nil discards them. The last lines are kept either
	// way for [Server.Err] and call errors. A plugin's log lines
	// (pdk.Log) and log notifications go to Logger instead.
	Stderr io.Writer
	// Logger receives the plugin's log lines and notifications, and
	// warnings. nil discards.
	Logger *slog.Logger
}

// Server is a running wasm MCP server. Its methods are safe for concurrent
// use.
type Server struct {
	name   string
	kind   Kind
	logger *slog.Logger
	impl   interface {
		transport() mcp.Transport
		close() error
	}

	done     chan struct{}
	exitOnce sync.Once
	mu       sync.Mutex
	err      error

	closeOnce sync.Once
	closeErr  error
}

// Transport returns the transport the host connects its mcp.Client to. A
// WASI command serves one session: a second Connect fails. An Extism
// plugin serves any number, each connected to the same instance.
func (s *Server) Transport() mcp.Transport { return s.impl.transport() }

// Kind reports the ABI the module speaks.
func (s *Server) Kind() Kind { return s.kind }

// Done is closed when the server has stopped: a WASI command exited or
// trapped, or Close was called. An Extism plugin stops only at Close: a
// failed call replaces its instance.
func (s *Server) Done() <-chan struct{} { return s.done }

// Err reports why the server stopped: nil while it runs, after Close, and
// after a WASI command exited with code 0; otherwise the exit code or trap,
// with the last lines of its stderr (or its Go panic message), or the line
// bound it broke.
func (s *Server) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close stops the module and frees its memory and the compilation cache's.
// A WASI command first gets its stdin closed and a second to exit, as the
// MCP stdio transport asks; then it is stopped at its next function call or
// loop iteration, and any sleep it is in ends. Sessions on the transport
// end. Close is idempotent; it fails only when the module did not stop in
// time.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.closeErr = s.impl.close()
		s.exit(nil)
	})
	return s.closeErr
}

// exit records why the server stopped, once, and closes Done.
func (s *Server) exit(err error) {
	s.exitOnce.Do(func() {
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
		close(s.done)
	})
}

// Start reads, checks and compiles the module at spec.Path, then starts it:
// a WASI command runs its _start in a goroutine with stdin and stdout as
// the transport's pipes; an Extism plugin is instantiated and asked for its
// tools (and prompts and resources when it exports them), which an
// in-process MCP server then serves. ctx bounds this start-up, but not the
// server, which runs until Close or until the module exits.
//
// Start fails, naming the server, when the spec is invalid, the file is not
// a WebAssembly MCP server (see [Detect]), the module fails to compile or
// imports what the host does not provide, or a plugin's first instance or
// listing fails. A WASI command that exits or traps at once is not a Start
// error: Done closes and Err says why.
func Start(ctx context.Context, spec Spec) (*Server, error) {
	if spec.Name == "" {
		spec.Name = strings.TrimSuffix(filepath.Base(spec.Path), ".wasm")
	}
	logger := spec.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("component", "wasmserver", "server", spec.Name)
	if err := checkSpec(spec); err != nil {
		return nil, fmt.Errorf("wasmserver: %q: %w", spec.Name, err)
	}
	wasm, err := readWasm(spec.Path)
	if err != nil {
		return nil, fmt.Errorf("wasmserver: %q: %w", spec.Name, err)
	}
	exports, err := funcExports(wasm)
	if err != nil {
		return nil, fmt.Errorf("wasmserver: %q: %s %w", spec.Name, spec.Path, err)
	}
	kind, err := kindOf(exports)
	if err != nil {
		return nil, fmt.Errorf("wasmserver: %q: %s %w", spec.Name, spec.Path, err)
	}
	s := &Server{name: spec.Name, kind: kind, logger: logger, done: make(chan struct{})}
	if kind == KindWASICommand {
		if len(spec.AllowHosts) > 0 {
			logger.Warn("allow_hosts ignored: a WASI command has no network", "allow_hosts", spec.AllowHosts)
		}
		s.impl, err = startCommand(ctx, s, spec, wasm)
	} else {
		if len(spec.Args) > 0 {
			logger.Warn("args ignored: an Extism plugin has no arguments", "args", spec.Args)
		}
		s.impl, err = startPlugin(ctx, s, spec, wasm, exports)
	}
	if err != nil {
		return nil, fmt.Errorf("wasmserver: %q: %w", spec.Name, err)
	}
	return s, nil
}

// Detect reports the kind of the module at path from its exports, without
// compiling it: list_tools and call_tool make an Extism v2 plugin, describe
// and call a v1 plugin, _start a WASI command. The plugin ABIs come first,
// since a plugin built for a WASI target may export _start as well. Detect
// fails when the file cannot be read, is not a WebAssembly core module (a
// component-model component is not supported), or has none of these
// exports. ctx is unused today: reading the exports takes milliseconds.
func Detect(ctx context.Context, path string) (Kind, error) {
	wasm, err := readWasm(path)
	if err != nil {
		return "", fmt.Errorf("wasmserver: %w", err)
	}
	exports, err := funcExports(wasm)
	if err != nil {
		return "", fmt.Errorf("wasmserver: %s %w", path, err)
	}
	kind, err := kindOf(exports)
	if err != nil {
		return "", fmt.Errorf("wasmserver: %s %w", path, err)
	}
	return kind, nil
}

// errNotServer is the end of Detect's error for a module with neither ABI.
var errNotServer = errors.New("exports neither _start (a WASI command) nor list_tools/call_tool (an Extism MCP plugin): it is not an MCP server")

func kindOf(exports map[string]bool) (Kind, error) {
	switch {
	case exports["list_tools"] && exports["call_tool"]:
		return KindExtismV2, nil
	case exports["describe"] && exports["call"]:
		return KindExtismV1, nil
	case exports["_start"]:
		return KindWASICommand, nil
	}
	return "", errNotServer
}

func checkSpec(sp Spec) error {
	if sp.Path == "" {
		return errors.New("no path to a .wasm file")
	}
	if sp.MemoryLimitPages > MaxMemoryPages {
		return fmt.Errorf("memory limit of %d pages is over the %d pages (4 GiB) wasm can address", sp.MemoryLimitPages, MaxMemoryPages)
	}
	if sp.CallTimeout < 0 {
		return fmt.Errorf("negative call timeout %v", sp.CallTimeout)
	}
	for _, d := range sp.Read {
		if slices.Contains(sp.Write, d) {
			return fmt.Errorf("directory %s is granted both read-only and read-write", d)
		}
	}
	for _, dirs := range [][]string{sp.Read, sp.Write} {
		for _, d := range dirs {
			if !filepath.IsAbs(d) {
				return fmt.Errorf("granted directory %q is not an absolute path", d)
			}
			fi, err := os.Stat(d)
			if err != nil {
				return fmt.Errorf("granted directory: %w", err)
			}
			if !fi.IsDir() {
				return fmt.Errorf("granted path %s is not a directory", d)
			}
		}
	}
	return nil
}

func readWasm(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("not a regular file")}
	}
	if fi.Size() > MaxWasmBytes {
		return nil, fmt.Errorf("%s is %d bytes, over the %d-byte limit", name, fi.Size(), MaxWasmBytes)
	}
	buf, err := io.ReadAll(io.LimitReader(f, MaxWasmBytes+1))
	if err != nil {
		return nil, err
	}
	if len(buf) > MaxWasmBytes {
		return nil, fmt.Errorf("%s is over the %d-byte limit", name, MaxWasmBytes)
	}
	return buf, nil
}

// newCache opens the compilation cache of dir, creating it 0700; "" gives
// an in-memory cache. Like plugins.NewRuntime, it refuses a directory
// others can write: it holds native code the daemon runs.
func newCache(dir string) (wazero.CompilationCache, error) {
	if dir == "" {
		return wazero.NewCompilationCache(), nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cache dir: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("cache dir: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("cache dir %s is not a directory", dir)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return nil, fmt.Errorf("cache dir %s is writable by group or others (mode %v); it holds native code the daemon runs, make it 0700", dir, fi.Mode().Perm())
	}
	c, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		return nil, fmt.Errorf("cache dir: %w", err)
	}
	return c, nil
}

func pages(sp Spec, def uint32) uint32 {
	if sp.MemoryLimitPages == 0 {
		return def
	}
	return sp.MemoryLimitPages
}
