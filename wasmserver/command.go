package wasmserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/internal/wasmguest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

// command is a running WASI command. Its stdin and stdout are OS pipes:
// wazero polls a pipe for readiness (an io.Reader it would report always
// ready, and a guest waiting for input would spin), and a blocking write
// to a full pipe is how a guest that outruns the host waits.
type command struct {
	s      *Server
	base   context.Context // Start's values, never cancelled
	rt     wazero.Runtime
	cache  wazero.CompilationCache
	cancel context.CancelFunc

	stdinR, stdoutW *os.File    // the module's ends
	stdin           *onceWriter // the host's end of stdin
	stdout          *onceReader // the host's end of stdout, line-limited
	stderr          *tail
	sleep           sleeper // closed by stop: ends the module's sleeps

	connected atomic.Bool
	closing   atomic.Bool
	stopOnce  sync.Once
	reason    atomic.Pointer[error] // why the host stopped it, if it did
	exited    chan struct{}         // closed when _start has returned
}

func startCommand(ctx context.Context, s *Server, sp Spec, wasm []byte) (*command, error) {
	for k := range sp.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return nil, fmt.Errorf("environment variable name %q is empty or holds '=' or NUL", k)
		}
	}
	cache, err := newCache(sp.CacheDir)
	if err != nil {
		return nil, err
	}
	base := context.WithoutCancel(ctx)
	// NewRuntimeConfig picks the compiler where wazero has one (amd64,
	// arm64) and the interpreter elsewhere. CloseOnContextDone makes
	// cancelling the run context stop a guest that never returns.
	rc := wazero.NewRuntimeConfig().
		WithCompilationCache(cache).
		WithCloseOnContextDone(true).
		WithMemoryLimitPages(pages(sp, DefaultCommandMemoryPages))
	rt := wazero.NewRuntimeWithConfig(base, rc)
	fail := func(err error) (*command, error) {
		_ = rt.Close(base)
		_ = cache.Close(base)
		return nil, err
	}
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		return fail(fmt.Errorf("instantiate WASI: %w", err))
	}
	start := time.Now()
	compiled, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		return fail(fmt.Errorf("compile %s: %w", sp.Path, err))
	}
	for _, f := range compiled.ImportedFunctions() {
		if mod, name, _ := f.Import(); mod != wasi_snapshot_preview1.ModuleName {
			return fail(fmt.Errorf("%s imports %s.%s, but a WASI command gets only %s", sp.Path, mod, name, wasi_snapshot_preview1.ModuleName))
		}
	}
	s.logger.Debug("wasm server compiled", "duration", time.Since(start))

	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return fail(err)
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return fail(err)
	}
	c := &command{
		s: s, base: base, rt: rt, cache: cache,
		stdinR: stdinR, stdoutW: stdoutW,
		stdin:  &onceWriter{f: stdinW},
		stderr: &tail{w: sp.Stderr},
		sleep:  make(sleeper),
		exited: make(chan struct{}),
	}
	tooLong := fmt.Errorf("wasmserver: %q wrote a line over %d bytes to stdout", s.name, MaxLineBytes)
	c.stdout = &onceReader{f: stdoutR, r: &lineLimit{r: stdoutR, limit: MaxLineBytes, err: tooLong, over: c.lineTooLong}}

	fsc := wazero.NewFSConfig()
	for _, d := range sp.Read {
		fsc = fsc.WithReadOnlyDirMount(d, d)
	}
	for _, d := range sp.Write {
		fsc = fsc.WithDirMount(d, d)
	}
	// A real clock and randomness, unlike wazero's defaults: a server is a
	// program that may stamp times, time out and make keys. Sleeping is
	// real too (a Go guest waits for input with poll_oneoff and a timeout;
	// a fake sleep would make it spin), but ends when the server stops.
	mc := wazero.NewModuleConfig().
		WithName("").
		WithArgs(append([]string{filepath.Base(sp.Path)}, sp.Args...)...).
		WithStdin(stdinR).
		WithStdout(stdoutW).
		WithStderr(c.stderr).
		WithFSConfig(fsc).
		WithSysWalltime().
		WithSysNanotime().
		WithNanosleep(c.sleep.sleep).
		WithRandSource(rand.Reader)
	for _, k := range slices.Sorted(maps.Keys(sp.Env)) {
		mc = mc.WithEnv(k, sp.Env[k])
	}
	runCtx, cancel := context.WithCancel(base)
	c.cancel = cancel
	go c.run(wasmguest.WithMemoryAllocator(runCtx), compiled, mc)
	return c, nil
}

// run instantiates the module, which runs _start until the module exits.
func (c *command) run(ctx context.Context, compiled wazero.CompiledModule, mc wazero.ModuleConfig) {
	defer close(c.exited)
	mod, err := c.rt.InstantiateModule(ctx, compiled, mc)
	if mod != nil {
		_ = mod.Close(c.base)
	}
	// The host's reader sees EOF, and its writes fail instead of blocking
	// on a pipe nobody reads.
	c.stdoutW.Close()
	c.stdinR.Close()
	err = c.describe(err)
	if err != nil {
		c.s.logger.Warn("wasm server stopped", "err", err)
	} else {
		c.s.logger.Debug("wasm server exited")
	}
	c.s.exit(err)
}

// describe turns what InstantiateModule returned into the server's Err.
func (c *command) describe(err error) error {
	if r := c.reason.Load(); r != nil {
		return *r
	}
	if c.closing.Load() {
		return nil
	}
	if err == nil {
		return nil
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		if exit.ExitCode() == 0 {
			return nil
		}
		return &stopError{msg: c.stderr.withTail(fmt.Sprintf("wasmserver: %q exited with code %d", c.s.name, exit.ExitCode())), err: err}
	}
	msg, _, _ := strings.Cut(err.Error(), "\nwasm stack trace:")
	return &stopError{msg: c.stderr.withTail(fmt.Sprintf("wasmserver: %q trapped: %s", c.s.name, clip(msg, 512))), err: err}
}

// stopError is a module's exit or trap: its message is the server's, and
// it unwraps to wazero's error (a *sys.ExitError for an exit).
type stopError struct {
	msg string
	err error
}

func (e *stopError) Error() string { return e.msg }
func (e *stopError) Unwrap() error { return e.err }

// lineTooLong stops a module that broke the framing of stdio: once a line
// is over the limit, nothing after it can be trusted to be a message.
func (c *command) lineTooLong() {
	err := fmt.Errorf("wasmserver: %q wrote more than %d bytes to stdout without a newline; an MCP stdio message is one line, so the server was stopped", c.s.name, MaxLineBytes)
	c.reason.CompareAndSwap(nil, &err)
	c.stop()
}

// stop stops the module: it cancels the run context (wazero then closes
// the module at its next function call or loop iteration), ends its
// sleeps, and closes the host's ends of the pipes, which ends a read of
// stdin or a write to stdout that blocks.
func (c *command) stop() {
	c.stopOnce.Do(func() {
		c.cancel()
		close(c.sleep)
		c.stdin.Close()
		c.stdout.Close()
	})
}

func (c *command) close() error {
	c.closing.Store(true)
	// The MCP stdio transport's shutdown: close stdin, wait for the
	// server to exit, then stop it.
	c.stdin.Close()
	grace := time.NewTimer(closeGrace)
	defer grace.Stop()
	select {
	case <-c.exited:
	case <-grace.C:
	}
	c.stop()
	var err error
	wait := time.NewTimer(stopWait)
	defer wait.Stop()
	select {
	case <-c.exited:
	case <-wait.C:
		err = fmt.Errorf("wasmserver: %q did not stop within %v of being closed", c.s.name, closeGrace+stopWait)
	}
	if rerr := c.rt.Close(c.base); rerr != nil && err == nil {
		err = fmt.Errorf("wasmserver: %q: close runtime: %w", c.s.name, rerr)
	}
	_ = c.cache.Close(c.base)
	return err
}

func (c *command) transport() mcp.Transport { return commandTransport{c} }

// commandTransport connects the host to the command's stdin and stdout.
type commandTransport struct{ c *command }

func (t commandTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c := t.c
	if !c.connected.CompareAndSwap(false, true) {
		return nil, fmt.Errorf("wasmserver: %q is already connected: a WASI command serves one session", c.s.name)
	}
	select {
	case <-c.s.done:
		if err := c.s.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("wasmserver: %q has stopped", c.s.name)
	default:
	}
	// The line bound is ours (lineLimit), which also stops the module and
	// names it; go-sdk's own is off.
	return (&mcp.IOTransport{Reader: c.stdout, Writer: c.stdin, MaxLineLength: -1}).Connect(ctx)
}

// lineLimit fails reads with err once more than limit bytes have come
// without a newline, and then calls over, once.
type lineLimit struct {
	r     io.Reader
	limit int
	err   error
	over  func()
	run   int  // bytes since the last newline
	hit   bool // the limit was passed
}

func (l *lineLimit) Read(p []byte) (int, error) {
	if l.hit {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	if i := bytes.LastIndexByte(p[:n], '\n'); i >= 0 {
		l.run = n - i - 1
	} else {
		l.run += n
	}
	if l.run > l.limit {
		l.hit = true
		l.over()
		return n, l.err
	}
	return n, err
}

// onceReader and onceWriter close their file once: both the session and
// Close close the host's ends of the pipes.
type onceReader struct {
	f    *os.File
	r    io.Reader
	once sync.Once
}

func (o *onceReader) Read(p []byte) (int, error) { return o.r.Read(p) }

func (o *onceReader) Close() error {
	o.once.Do(func() { o.f.Close() })
	return nil
}

type onceWriter struct {
	f    *os.File
	once sync.Once
}

func (o *onceWriter) Write(p []byte) (int, error) { return o.f.Write(p) }

func (o *onceWriter) Close() error {
	o.once.Do(func() { o.f.Close() })
	return nil
}
