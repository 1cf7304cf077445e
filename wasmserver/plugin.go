package wasmserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/mcphost/mcphost/internal/wasmguest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tetratelabs/wazero"
)

// plugin is a running Extism plugin behind an in-process MCP server. It
// has one instance, and calls into it take turns (an instance is one
// guest thread): sem is its token. An instance that fails a call in any
// way is closed, and the next call makes a new one.
type plugin struct {
	s        *Server
	base     context.Context
	abi      Kind
	exports  map[string]bool
	timeout  time.Duration
	compiled *extism.CompiledPlugin
	cache    wazero.CompilationCache
	server   *mcp.Server
	version  string // serverInfo.version: the module's hash
	output   *tail  // the guest's WASI stdout and stderr
	sleep    sleeper
	logs     wasmguest.LogLimiter // the plugin's log lines and log notifications

	life   context.Context // cancelled by close: ends a call in flight
	cancel context.CancelFunc
	sem    chan struct{}  // capacity 1
	inst   *extism.Plugin // under sem; nil until made or after a failure
	closed bool           // under sem
	nextID atomic.Int64   // the "id" of the context a call gets

	connMu  sync.Mutex
	closing bool // under connMu: no new session
}

func startPlugin(ctx context.Context, s *Server, sp Spec, wasm []byte, exports map[string]bool) (*plugin, error) {
	if _, ok := os.LookupEnv("EXTISM_ENABLE_WASI_OUTPUT"); ok {
		s.logger.Warn("EXTISM_ENABLE_WASI_OUTPUT is set: the plugin's stdout and stderr go to the daemon's own, unbounded; unset it")
	}
	hosts, err := allowedHosts(sp.AllowHosts)
	if err != nil {
		return nil, err
	}
	paths := map[string]string{}
	for _, d := range sp.Read {
		paths["ro:"+d] = d
	}
	for _, d := range sp.Write {
		paths[d] = d
	}
	cache, err := newCache(sp.CacheDir)
	if err != nil {
		return nil, err
	}
	base := context.WithoutCancel(ctx)
	p := &plugin{
		s:       s,
		base:    base,
		abi:     s.kind,
		exports: exports,
		timeout: sp.CallTimeout,
		cache:   cache,
		output:  &tail{w: sp.Stderr},
		sleep:   make(sleeper),
		sem:     make(chan struct{}, 1),
		version: fmt.Sprintf("sha256:%x", sha256.Sum256(wasm))[:19],
	}
	if p.timeout == 0 {
		p.timeout = DefaultCallTimeout
	}
	p.life, p.cancel = context.WithCancel(base)
	manifest := extism.Manifest{
		Wasm: []extism.Wasm{extism.WasmData{Data: wasm, Name: "main"}},
		Memory: &extism.ManifestMemory{
			MaxPages:             pages(sp, DefaultPluginMemoryPages),
			MaxHttpResponseBytes: MaxHTTPResponseBytes,
			MaxVarBytes:          1 << 20, // Extism's default
		},
		Config:       maps.Clone(sp.Env),
		AllowedHosts: hosts,
		AllowedPaths: paths,
		// Timeout stays 0: each call's deadline is our context's (see
		// call), and the runtime config below closes a module whose
		// context ends.
	}
	cfg := extism.PluginConfig{
		RuntimeConfig: wazero.NewRuntimeConfig().WithCompilationCache(cache).WithCloseOnContextDone(true),
		EnableWasi:    true, // Go and Rust guests import WASI
	}
	start := time.Now()
	p.compiled, err = extism.NewCompiledPlugin(ctx, manifest, cfg, p.hostFunctions())
	if err != nil {
		_ = cache.Close(base)
		return nil, fmt.Errorf("compile %s: %w", sp.Path, err)
	}
	s.logger.Debug("wasm server compiled", "duration", time.Since(start))
	if err := p.build(ctx); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// allowedHosts turns mcphost's "host:port" rules into the host names and
// patterns Extism matches (gobwas/glob, which panics on a bad pattern, so
// only letters, digits, '-', '.', ':' and a leading "*." or a lone "*"
// pass).
func allowedHosts(rules []string) ([]string, error) {
	var out []string
	for _, r := range rules {
		h := r
		if host, _, err := net.SplitHostPort(r); err == nil {
			h = host
		}
		name := strings.TrimPrefix(h, "*.")
		ok := h == "*" || name != ""
		for _, c := range name {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == ':') {
				ok = h == "*"
				break
			}
		}
		if !ok {
			return nil, fmt.Errorf("allowed host %q is not a host name, \"*.domain\" or \"*\" (an optional :port is ignored)", r)
		}
		out = append(out, strings.ToLower(h))
	}
	return out, nil
}

// instance makes an instance. Its module config grants what a WASI command
// gets (a real clock, randomness, sleeps that end at close); Extism adds
// the allowed paths.
func (p *plugin) instance(ctx context.Context) (*extism.Plugin, error) {
	mc := wazero.NewModuleConfig().
		WithStdout(p.output).
		WithStderr(p.output).
		WithSysWalltime().
		WithSysNanotime().
		WithNanosleep(p.sleep.sleep).
		WithRandSource(rand.Reader)
	in, err := p.compiled.Instance(wasmguest.WithMemoryAllocator(ctx), extism.PluginInstanceConfig{ModuleConfig: mc})
	if err != nil {
		return nil, fmt.Errorf("instantiate: %w", err)
	}
	in.SetLogger(p.log)
	in.Timeout = 0
	return in, nil
}

// call runs export on input under the call timeout, waiting its turn for
// the instance under ctx. Any failure closes the instance: a guest whose
// call trapped, timed out or was refused a host call may be left in any
// state.
func (p *plugin) call(ctx context.Context, export string, input []byte) ([]byte, error) {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the plugin: %w", context.Cause(ctx))
	case <-p.life.Done():
		return nil, errors.New("the server is closed")
	}
	defer func() { <-p.sem }()
	if p.closed {
		return nil, errors.New("the server is closed")
	}
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	defer context.AfterFunc(p.life, cancel)()
	if p.inst == nil {
		in, err := p.instance(ctx)
		if err != nil {
			return nil, p.describe(ctx, err)
		}
		p.inst = in
	}
	p.output.reset()
	rc, out, err := p.inst.CallWithContext(ctx, export, input)
	if err == nil && rc != 0 {
		err = fmt.Errorf("%s returned %d without an error message", export, int32(rc))
	}
	if err != nil {
		_ = p.inst.Close(p.base)
		p.inst = nil
		return nil, p.describe(ctx, err)
	}
	return out, nil
}

// describe turns a failed call into a short message.
func (p *plugin) describe(ctx context.Context, err error) error {
	switch {
	case p.life.Err() != nil:
		return errors.New("the server is closed")
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("timed out after %v", p.timeout)
	case ctx.Err() != nil:
		return fmt.Errorf("cancelled: %w", context.Cause(ctx))
	}
	msg, _, _ := strings.Cut(err.Error(), "\nwasm stack trace:")
	if m, ok := strings.CutSuffix(msg, " (recovered by wazero)"); ok {
		// A host function refused: an HTTP request, a host call.
		return fmt.Errorf("host call refused: %s", clip(m, 1024))
	}
	return errors.New(p.output.withTail(clip(msg, 1024)))
}

// callContext is the "context" of hyper-mcp's v2 input: the request's
// _meta and an id. go-sdk does not show a handler the JSON-RPC id, so the
// id is a number unique to this server.
func (p *plugin) callContext(meta mcp.Meta) map[string]any {
	if meta == nil {
		meta = mcp.Meta{}
	}
	return map[string]any{"_meta": meta, "id": p.nextID.Add(1)}
}

func (p *plugin) transport() mcp.Transport { return pluginTransport{p} }

// pluginTransport connects each session to the plugin's MCP server over
// a fresh in-memory pipe.
type pluginTransport struct{ p *plugin }

func (t pluginTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	p := t.p
	p.connMu.Lock()
	defer p.connMu.Unlock()
	if p.closing {
		return nil, fmt.Errorf("wasmserver: %q is closed", p.s.name)
	}
	client, server := mcp.NewInMemoryTransports()
	if _, err := p.server.Connect(p.base, server, nil); err != nil {
		return nil, fmt.Errorf("wasmserver: %q: %w", p.s.name, err)
	}
	return client.Connect(ctx)
}

func (p *plugin) close() error {
	p.connMu.Lock()
	p.closing = true
	p.connMu.Unlock()
	p.cancel() // ends a call in flight
	close(p.sleep)
	var err error
	wait := time.NewTimer(stopWait)
	defer wait.Stop()
	select {
	case p.sem <- struct{}{}:
		p.closed = true
		if p.inst != nil {
			_ = p.inst.Close(p.base)
			p.inst = nil
		}
		<-p.sem
	case <-wait.C:
		err = fmt.Errorf("wasmserver: %q: a call did not stop within %v of being closed", p.s.name, stopWait)
	}
	if p.server != nil {
		for ss := range p.server.Sessions() {
			_ = ss.Close()
		}
	}
	if cerr := p.compiled.Close(p.base); cerr != nil && err == nil {
		err = fmt.Errorf("wasmserver: %q: close: %w", p.s.name, cerr)
	}
	_ = p.cache.Close(p.base)
	return err
}
