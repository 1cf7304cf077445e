package plugins

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	extism "github.com/extism/go-sdk"
	"github.com/mcphost/mcphost/internal/wasmguest"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/sys"
)

// Bounds of the pool's own housekeeping.
const (
	outputBufferBytes = 4 << 10 // a guest's stdout and stderr, per call
	maxMessageBytes   = 1 << 10 // a plugin's error message in an Outcome
	maxLogBytes       = 512     // one plugin log line
	minWarmupTimeout  = 10 * time.Second
	minBackoff        = 50 * time.Millisecond
	maxBackoff        = 5 * time.Second
)

// errTimedOut is a call that ran past its deadline; invoke adds the timeout.
var errTimedOut = errors.New("timed out")

// warm-up inputs: the minimal input of each stage (server and tool "").
var warmupInput = map[string][]byte{
	StageResult:  []byte(`{"server":"","tool":"","arguments":{},"principal":{"name":"","groups":[]},"result":{"content":[]}}`),
	StageDisplay: []byte(`{"server":"","tool":"","arguments":{},"principal":{"name":"","groups":[]},"result":{"content":[]},"display":{"type":"mcp_app","resourceUri":"","html":"","fallbackText":""}}`),
}

func exportOf(stage string) string {
	if stage == StageDisplay {
		return ExportDisplay
	}
	return ExportResult
}

// instance is one plugin instance; a goroutine owns it between get and
// release.
type instance struct {
	p     *extism.Plugin
	calls int
	out   *boundedBuffer
}

// pool holds the instances of one plugin: at most spec.PoolSize alive
// (idle, in use or being made). A failed call retires its instance and the
// filler goroutine makes a replacement.
type pool struct {
	spec     Spec
	compiled *extism.CompiledPlugin
	logger   *slog.Logger
	logs     wasmguest.LogLimiter // one per plugin
	// validSource is the runtime's CSP source validator.
	validSource func(string) error

	idle       chan *instance // capacity spec.PoolSize: sends never block
	wake       chan struct{}  // capacity 1
	ctx        context.Context
	cancel     context.CancelFunc
	fillerDone chan struct{}

	mu      sync.Mutex
	live    int
	lastErr error
	started bool
}

func newPool(sp Spec, compiled *extism.CompiledPlugin, validSource func(string) error, logger *slog.Logger, bg context.Context) *pool {
	ctx, cancel := context.WithCancel(bg)
	return &pool{
		spec:        sp,
		compiled:    compiled,
		logger:      logger,
		validSource: validSource,
		idle:        make(chan *instance, sp.PoolSize),
		wake:        make(chan struct{}, 1),
		ctx:         ctx,
		cancel:      cancel,
		fillerDone:  make(chan struct{}),
	}
}

// newInstance instantiates the plugin and runs the warm-up call of each of
// its stages, all under one deadline (instantiating runs the module's start
// function, which may not return either). With checkExports it first
// reports a missing export.
func (p *pool) newInstance(ctx context.Context, checkExports bool) (*instance, error) {
	wt := max(4*p.spec.Timeout, minWarmupTimeout)
	ctx, cancel := context.WithTimeout(ctx, wt)
	defer cancel()
	buf := &boundedBuffer{max: outputBufferBytes}
	// wazero's defaults grant nothing: no files, no environment, no
	// arguments, fake clocks, deterministic randomness.
	mc := wazero.NewModuleConfig().WithStdout(buf).WithStderr(buf)
	// The runtime closes a module whose context ends (see compile), which
	// stops a start function that loops.
	pl, err := p.compiled.Instance(wasmguest.WithMemoryAllocator(ctx), extism.PluginInstanceConfig{ModuleConfig: mc})
	if err != nil {
		if exit := (*sys.ExitError)(nil); errors.As(err, &exit) && exit.ExitCode() == sys.ExitCodeDeadlineExceeded {
			return nil, fmt.Errorf("instantiate: %w after %v: the module's start function did not return", errTimedOut, wt)
		}
		return nil, fmt.Errorf("instantiate: %w", err)
	}
	pl.SetLogger(p.log)
	pl.Timeout = 0 // the deadline is our context's (see invoke)
	in := &instance{p: pl, out: buf}
	if checkExports {
		for _, st := range p.spec.Stages {
			if !pl.FunctionExists(exportOf(st)) {
				in.close(p.ctx)
				return nil, fmt.Errorf("the module does not export %q, which stage %q calls", exportOf(st), st)
			}
		}
	}
	for _, st := range p.spec.Stages {
		if _, err := in.call(ctx, exportOf(st), warmupInput[st]); err != nil {
			in.close(p.ctx)
			if errors.Is(err, errTimedOut) {
				err = fmt.Errorf("%w (warm-up deadline %v)", err, wt)
			}
			return nil, &warmupError{export: exportOf(st), err: err}
		}
	}
	return in, nil
}

// warmupError is the failure of a warm-up call: the module instantiated
// and has its exports, but cannot run.
type warmupError struct {
	export string
	err    error
}

func (e *warmupError) Error() string { return fmt.Sprintf("warm-up call of %s: %v", e.export, e.err) }
func (e *warmupError) Unwrap() error { return e.err }

// call runs export once. Any error means the instance must be retired.
func (in *instance) call(ctx context.Context, export string, input []byte) ([]byte, error) {
	in.out.Reset()
	in.calls++
	rc, out, err := in.p.CallWithContext(ctx, export, input)
	if err != nil {
		return nil, describe(ctx, err, in.out.FirstLine())
	}
	if rc != 0 {
		return nil, fmt.Errorf("plugin returned status %d without a message", rc)
	}
	return out, nil
}

// describe turns an error from CallWithContext into a short message.
func describe(ctx context.Context, err error, stderr string) error {
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		switch exit.ExitCode() {
		case sys.ExitCodeDeadlineExceeded:
			return errTimedOut
		case sys.ExitCodeContextCanceled:
			return cancelled(ctx)
		}
		return withStderr(fmt.Errorf("exited with code %d", exit.ExitCode()), stderr)
	}
	msg, _, _ := strings.Cut(err.Error(), "\nwasm stack trace:")
	if strings.HasPrefix(msg, "wasm error:") {
		return withStderr(fmt.Errorf("trap: %s", clip(msg, maxMessageBytes)), stderr)
	}
	if m, ok := strings.CutSuffix(msg, " (recovered by wazero)"); ok {
		// A host function refused: an HTTP request, a variable.
		return fmt.Errorf("host call refused: %s", clip(m, maxMessageBytes))
	}
	if ctx.Err() != nil {
		return cancelled(ctx)
	}
	return fmt.Errorf("plugin error: %s", clip(msg, maxMessageBytes))
}

// cancelled is the error of a call whose context ended: a timeout when its
// deadline passed (also when that happened before the guest ran, as on a
// loaded machine, where wazero's exit code does not say it), else the
// caller's cancellation.
func cancelled(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return errTimedOut
	}
	return fmt.Errorf("cancelled: %w", context.Cause(ctx))
}

func withStderr(err error, stderr string) error {
	if stderr == "" {
		return err
	}
	return fmt.Errorf("%w (output: %s)", err, stderr)
}

func (in *instance) close(ctx context.Context) {
	_ = in.p.Close(context.WithoutCancel(ctx))
}

// put adds a new instance to the pool.
func (p *pool) put(in *instance) {
	p.mu.Lock()
	p.live++
	p.mu.Unlock()
	p.idle <- in
}

// start starts the filler, which brings the pool to its size.
func (p *pool) start() {
	p.mu.Lock()
	p.started = true
	p.mu.Unlock()
	go p.fill()
	p.kick()
}

func (p *pool) kick() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *pool) fill() {
	defer close(p.fillerDone)
	backoff := minBackoff
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-p.wake:
		}
		for {
			p.mu.Lock()
			if p.live >= p.spec.PoolSize || p.ctx.Err() != nil {
				p.mu.Unlock()
				break
			}
			p.live++
			p.mu.Unlock()
			in, err := p.newInstance(p.ctx, false)
			if err != nil {
				p.mu.Lock()
				p.live--
				p.lastErr = err
				p.mu.Unlock()
				if p.ctx.Err() != nil {
					return
				}
				p.logger.Warn("plugin instance creation failed", "err", err, "retry_in", backoff)
				t := time.NewTimer(backoff)
				select {
				case <-p.ctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
				backoff = min(2*backoff, maxBackoff)
				continue
			}
			backoff = minBackoff
			p.mu.Lock()
			p.lastErr = nil
			p.mu.Unlock()
			p.idle <- in
		}
	}
}

// get waits for an idle instance until ctx ends.
func (p *pool) get(ctx context.Context) (*instance, error) {
	select {
	case in := <-p.idle:
		return in, nil
	default:
	}
	p.kick()
	select {
	case in := <-p.idle:
		return in, nil
	case <-ctx.Done():
		p.mu.Lock()
		last := p.lastErr
		p.mu.Unlock()
		if last != nil {
			return nil, fmt.Errorf("no instance free in time; the last attempt to make one failed: %v", last)
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w waiting for a free instance", errTimedOut)
		}
		return nil, fmt.Errorf("cancelled waiting for a free instance: %w", context.Cause(ctx))
	}
}

// release returns in to the pool after a clean call, or retires it.
func (p *pool) release(in *instance, clean bool) {
	if clean && in.calls < RecycleAfter && p.ctx.Err() == nil {
		p.idle <- in
		return
	}
	in.close(p.ctx)
	p.mu.Lock()
	p.live--
	p.mu.Unlock()
	p.kick()
}

// invoke runs export on input with one instance, under the plugin's
// timeout (waiting for the instance included), and checks the output with
// validate. Any error retires the instance.
func (p *pool) invoke(ctx context.Context, export string, input []byte, validate func([]byte) error) ([]byte, error) {
	limit := MaxIOBytes
	if export == ExportDisplay {
		limit = MaxDisplayIOBytes
	}
	if len(input) > limit {
		return nil, fmt.Errorf("input is %d bytes, over the %d-byte limit", len(input), limit)
	}
	ctx, cancel := context.WithTimeout(ctx, p.spec.Timeout)
	defer cancel()
	in, err := p.get(ctx)
	if err != nil {
		return nil, p.timeoutErr(err)
	}
	out, err := in.call(ctx, export, input)
	err = p.timeoutErr(err)
	if err == nil && validate != nil {
		if verr := validate(out); verr != nil {
			err = fmt.Errorf("invalid output: %w", verr)
		}
	}
	p.release(in, err == nil)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// timeoutErr names the plugin's timeout in a timeout error.
func (p *pool) timeoutErr(err error) error {
	if err != nil && errors.Is(err, errTimedOut) {
		return fmt.Errorf("%w (timeout %v)", err, p.spec.Timeout)
	}
	return err
}

// close stops the filler and closes every idle instance and the compiled
// plugin. The caller makes sure no call is in flight.
func (p *pool) close() {
	p.cancel()
	p.mu.Lock()
	started := p.started
	p.mu.Unlock()
	if started {
		<-p.fillerDone
	}
	for {
		select {
		case in := <-p.idle:
			in.close(p.ctx)
			continue
		default:
		}
		break
	}
	_ = p.compiled.Close(context.WithoutCancel(p.ctx))
}

// log receives the plugin's log lines (and the SDK's own about it).
func (p *pool) log(level extism.LogLevel, msg string) {
	ok, dropped := p.logs.Allow(time.Now())
	if !ok {
		return
	}
	var l slog.Level
	switch level {
	case extism.LogLevelTrace, extism.LogLevelDebug:
		l = slog.LevelDebug
	case extism.LogLevelInfo:
		l = slog.LevelInfo
	case extism.LogLevelWarn:
		l = slog.LevelWarn
	default:
		l = slog.LevelError
	}
	attrs := []any{"text", clip(msg, maxLogBytes)}
	if dropped > 0 {
		attrs = append(attrs, "dropped", dropped)
	}
	p.logger.Log(p.ctx, l, "plugin log", attrs...)
}

// SetLogLevel sets the lowest level of plugin log lines that reach the
// Logger. Extism keeps this level process-wide, so only main should call
// it; until then plugin log lines are dropped (the SDK's default).
func SetLogLevel(level slog.Level) {
	switch {
	case level <= slog.LevelDebug:
		extism.SetLogLevel(extism.LogLevelDebug)
	case level <= slog.LevelInfo:
		extism.SetLogLevel(extism.LogLevelInfo)
	case level <= slog.LevelWarn:
		extism.SetLogLevel(extism.LogLevelWarn)
	default:
		extism.SetLogLevel(extism.LogLevelError)
	}
}

// boundedBuffer keeps the first max bytes written to it and drops the rest.
type boundedBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - len(b.b); room > 0 {
		b.b = append(b.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (b *boundedBuffer) Reset() {
	b.mu.Lock()
	b.b = b.b[:0]
	b.mu.Unlock()
}

// FirstLine returns the first non-empty line written, clipped.
func (b *boundedBuffer) FirstLine() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, line := range strings.Split(string(b.b), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return clip(line, 200)
		}
	}
	return ""
}

// clip makes s valid UTF-8 without control characters (a plugin's text
// goes to logs and the WebShell) and at most n bytes, marking a cut with "…".
func clip(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
