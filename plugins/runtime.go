package plugins

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
)

// Runtime owns what every plugin of the process shares: the wazero
// compilation cache (in memory, and on disk when Options.CacheDir is set).
// Make one per process, load each config generation with [Runtime.Load],
// and close it last: compiled code belongs to the cache.
type Runtime struct {
	cache       wazero.CompilationCache
	logger      *slog.Logger
	validSource func(string) error

	mu      sync.Mutex
	closed  bool
	loads   sync.WaitGroup // Loads in progress; Close waits for them
	sets    map[*Set]struct{}
	modules map[[sha256.Size]byte]*moduleLock // one compile at a time per module; see lockModule

	pinMu sync.Mutex
	pin   *extism.CompiledPlugin // keeps the Extism kernel compiled; see pinKernel
}

// wazero v1.12.0 publishes a module it reads from the on-disk cache to the
// in-memory cache before it has finished preparing it (wazero/wazero#2547):
// a second runtime compiling the same module at that moment gets it half
// ready, and instantiating it races (or panics). Every plugin embeds the
// same Extism kernel module, and two specs may name the same file, so Load
// compiles the kernel once before anything runs in parallel and keeps it
// referenced (pinKernel), and compiles each distinct module one at a time
// (lockModule), up to its first instance: wazero also memoizes lazily in
// structures such a compiled module shares (wazero/wazero#2520). Distinct
// modules still load in parallel.

// emptyModule is the smallest valid wasm module: compiling it as a plugin
// compiles only the kernel.
var emptyModule = []byte("\x00asm\x01\x00\x00\x00")

func (r *Runtime) pinKernel(ctx context.Context) error {
	r.pinMu.Lock()
	defer r.pinMu.Unlock()
	if r.pin != nil {
		return nil
	}
	c, err := compile(ctx, r.cache, normalize(Spec{}), emptyModule)
	if err != nil {
		return fmt.Errorf("compile the Extism kernel: %w", err)
	}
	r.pin = c
	return nil
}

// moduleLock serializes the loads of one module. refs counts the loads
// holding or waiting for it (under Runtime.mu): the last one removes it from
// Runtime.modules, so the map holds only modules being loaded.
type moduleLock struct {
	mu   sync.Mutex
	refs int
}

// lockModule waits until no other load of the module wasm is compiling or
// making its first instance, and returns the function that lets the next
// one go.
func (r *Runtime) lockModule(wasm []byte) (unlock func()) {
	sum := sha256.Sum256(wasm)
	r.mu.Lock()
	m := r.modules[sum]
	if m == nil {
		m = new(moduleLock)
		r.modules[sum] = m
	}
	m.refs++
	r.mu.Unlock()
	m.mu.Lock()
	return func() {
		m.mu.Unlock()
		r.mu.Lock()
		if m.refs--; m.refs == 0 {
			delete(r.modules, sum)
		}
		r.mu.Unlock()
	}
}

// NewRuntime makes a Runtime. It fails when Options.CacheDir cannot be
// created or is writable by group or others.
//
// It warns when EXTISM_ENABLE_WASI_OUTPUT is set in the environment: the SDK
// then sends every plugin's stdout and stderr to the daemon's own.
func NewRuntime(opts Options) (*Runtime, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("component", "plugins")
	var cache wazero.CompilationCache
	if opts.CacheDir == "" {
		cache = wazero.NewCompilationCache()
	} else {
		if err := os.MkdirAll(opts.CacheDir, 0o700); err != nil {
			return nil, fmt.Errorf("plugins: cache dir: %w", err)
		}
		fi, err := os.Stat(opts.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("plugins: cache dir: %w", err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("plugins: cache dir %s is not a directory", opts.CacheDir)
		}
		if fi.Mode().Perm()&0o022 != 0 {
			return nil, fmt.Errorf("plugins: cache dir %s is writable by group or others (mode %v); it holds native code the daemon runs, make it 0700", opts.CacheDir, fi.Mode().Perm())
		}
		if cache, err = wazero.NewCompilationCacheWithDir(opts.CacheDir); err != nil {
			return nil, fmt.Errorf("plugins: cache dir: %w", err)
		}
	}
	if _, ok := os.LookupEnv("EXTISM_ENABLE_WASI_OUTPUT"); ok {
		logger.Warn("EXTISM_ENABLE_WASI_OUTPUT is set: plugins' stdout and stderr go to the daemon's own, unbounded; unset it")
	}
	return &Runtime{
		cache:       cache,
		logger:      logger,
		validSource: opts.ValidSource,
		sets:        map[*Set]struct{}{},
		modules:     map[[sha256.Size]byte]*moduleLock{},
	}, nil
}

// Close waits for Loads in progress, closes every Set still open (waiting
// for their calls), then the compilation cache. It is safe to call more than
// once.
func (r *Runtime) Close(ctx context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	r.loads.Wait()
	r.mu.Lock()
	sets := make([]*Set, 0, len(r.sets))
	for s := range r.sets {
		sets = append(sets, s)
	}
	r.mu.Unlock()
	for _, s := range sets {
		s.Close()
	}
	r.pinMu.Lock()
	if r.pin != nil {
		_ = r.pin.Close(ctx)
		r.pin = nil
	}
	r.pinMu.Unlock()
	if err := r.cache.Close(ctx); err != nil {
		return fmt.Errorf("plugins: close cache: %w", err)
	}
	return nil
}

// Load compiles every spec (in parallel, through the shared cache), checks
// that each module exports the function of each of its stages, and makes
// one instance per plugin whose warm-up call (see [Set]) must succeed; the
// rest of each pool fills in the background.
//
// When any spec fails, Load closes what it built and returns a nil Set with
// every problem found, in spec order. ctx bounds compilation and the
// warm-up calls.
func (r *Runtime) Load(ctx context.Context, specs []Spec) (*Set, []LoadError) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, []LoadError{{Plugin: -1, Field: "path", Err: errors.New("runtime closed")}}
	}
	r.loads.Add(1)
	r.mu.Unlock()
	defer r.loads.Done()
	norm := make([]Spec, len(specs))
	var errs []LoadError
	seen := map[string]int{}
	for i, sp := range specs {
		norm[i] = normalize(sp)
		if err := checkSpec(norm[i]); err != nil {
			err.Plugin = i
			errs = append(errs, *err)
		}
		if j, dup := seen[sp.Name]; dup {
			errs = append(errs, LoadError{Plugin: i, Name: sp.Name, Field: "name", Err: fmt.Errorf("duplicate plugin name (first at index %d)", j)})
		} else {
			seen[sp.Name] = i
		}
	}
	if errs != nil {
		return nil, errs
	}
	if err := r.pinKernel(ctx); err != nil {
		return nil, []LoadError{{Plugin: -1, Field: "path", Err: err}}
	}

	// Pools live beyond Load's ctx, but keep its values.
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &Set{rt: r, byName: map[string]*pool{}, cancel: cancel}
	s.pools = make([]*pool, len(norm))
	loadErrs := make([]*LoadError, len(norm))
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	var wg sync.WaitGroup
	for i := range norm {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			p, lerr := r.load(ctx, bg, norm[i])
			if lerr != nil {
				lerr.Plugin = i
				loadErrs[i] = lerr
				return
			}
			s.pools[i] = p
		}()
	}
	wg.Wait()
	for _, e := range loadErrs {
		if e != nil {
			errs = append(errs, *e)
		}
	}
	if errs != nil {
		for _, p := range s.pools {
			if p != nil {
				p.close()
			}
		}
		cancel()
		return nil, errs
	}
	for _, p := range s.pools {
		s.byName[p.spec.Name] = p
		p.start()
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		s.closeNow()
		return nil, []LoadError{{Plugin: -1, Field: "path", Err: errors.New("runtime closed")}}
	}
	r.sets[s] = struct{}{}
	r.mu.Unlock()
	return s, nil
}

// normalize applies the defaults to zero values.
func normalize(sp Spec) Spec {
	if sp.Timeout <= 0 {
		sp.Timeout = DefaultTimeout
	}
	if sp.Timeout%time.Millisecond != 0 {
		sp.Timeout = sp.Timeout.Truncate(time.Millisecond) + time.Millisecond
	}
	if sp.MemoryLimit == 0 {
		sp.MemoryLimit = DefaultMemoryLimit
	}
	if sp.PoolSize == 0 {
		sp.PoolSize = DefaultPoolSize
	}
	if sp.OnError == "" {
		sp.OnError = OnErrorFail
	}
	return sp
}

func checkSpec(sp Spec) *LoadError {
	bad := func(field string, format string, args ...any) *LoadError {
		return &LoadError{Name: sp.Name, Field: field, Err: fmt.Errorf(format, args...)}
	}
	if len(sp.Stages) == 0 {
		return bad("stages", "no stage (use %q or %q)", StageResult, StageDisplay)
	}
	for i, st := range sp.Stages {
		if st != StageResult && st != StageDisplay {
			return bad("stages", "unknown stage %q (use %q or %q)", st, StageResult, StageDisplay)
		}
		if slices.Index(sp.Stages, st) != i {
			return bad("stages", "stage %q listed twice", st)
		}
	}
	for _, g := range sp.Servers {
		if _, err := path.Match(g, ""); err != nil {
			return bad("servers", "bad pattern %q: %v", g, err)
		}
	}
	for _, g := range sp.Tools {
		if _, err := path.Match(g, ""); err != nil {
			return bad("tools", "bad pattern %q: %v", g, err)
		}
	}
	if sp.MemoryLimit < pageSize || sp.MemoryLimit/pageSize > 65536 {
		return bad("memory_limit", "must be between 64KiB and 4GiB, not %d bytes", sp.MemoryLimit)
	}
	if sp.PoolSize < 1 || sp.PoolSize > MaxPoolSize {
		return bad("pool_size", "must be between 1 and %d, not %d", MaxPoolSize, sp.PoolSize)
	}
	if sp.OnError != OnErrorFail && sp.OnError != OnErrorSkip {
		return bad("on_error", "must be %q or %q, not %q", OnErrorFail, OnErrorSkip, sp.OnError)
	}
	return nil
}

// load compiles one plugin and makes its first instance. bg is the context
// its pool keeps.
func (r *Runtime) load(ctx, bg context.Context, sp Spec) (*pool, *LoadError) {
	bad := func(field string, err error) *LoadError {
		return &LoadError{Name: sp.Name, Field: field, Err: err}
	}
	badModule := func(err error) *LoadError {
		return &LoadError{Name: sp.Name, Field: "path", BadModule: true, Err: err}
	}
	wasm, err := readWasm(sp.Path)
	if err != nil {
		return nil, badModule(err)
	}
	start := time.Now()
	defer r.lockModule(wasm)()
	compiled, err := compile(ctx, r.cache, sp, wasm)
	if err != nil {
		if msg := err.Error(); strings.Contains(msg, "section memory") && strings.Contains(msg, "over limit") {
			return nil, bad("memory_limit", fmt.Errorf("compile: %w", err))
		}
		return nil, badModule(fmt.Errorf("compile: %w", err))
	}
	logger := r.logger.With("plugin", sp.Name)
	p := newPool(sp, compiled, r.validSource, logger, bg)
	compileTook := time.Since(start)

	in, err := p.newInstance(ctx, true)
	if err != nil {
		p.close()
		var warm *warmupError
		if errors.As(err, &warm) {
			return nil, bad("path", err)
		}
		return nil, badModule(err)
	}
	p.put(in)
	logger.Debug("plugin loaded", "compile", compileTook, "duration", time.Since(start))
	return p, nil
}

// compile compiles one plugin's module (and the Extism kernel) in its own
// wazero runtime, through the shared cache.
func compile(ctx context.Context, cache wazero.CompilationCache, sp Spec, wasm []byte) (*extism.CompiledPlugin, error) {
	manifest := extism.Manifest{
		Wasm: []extism.Wasm{extism.WasmData{Data: wasm, Name: "main"}},
		Memory: &extism.ManifestMemory{
			MaxPages:             uint32(sp.MemoryLimit / pageSize),
			MaxVarBytes:          0, // vars off
			MaxHttpResponseBytes: 0, // no allowed hosts anyway
		},
		Config: sp.Config,
		// Non-zero would turn on WithCloseOnContextDone, which the runtime
		// config sets anyway; the deadline of each call is our own
		// context's (see pool.invoke).
		Timeout: uint64(sp.Timeout / time.Millisecond),
	}
	cfg := extism.PluginConfig{
		// WithCloseOnContextDone: a module whose context ends is closed,
		// which stops a call, or a start function run by instantiation,
		// that never returns (see pool.newInstance).
		RuntimeConfig: wazero.NewRuntimeConfig().WithCompilationCache(cache).WithCloseOnContextDone(true),
		EnableWasi:    true, // Go guests import WASI and need _initialize
	}
	return extism.NewCompiledPlugin(ctx, manifest, cfg, nil)
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
