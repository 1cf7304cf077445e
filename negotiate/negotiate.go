package negotiate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os/exec"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Verdict is what negotiation decided for one server.
type Verdict struct {
	Era             string // "modern" | "legacy"
	ProtocolVersion string // "2026-07-28" or "2025-11-25" (after Connect: what the session negotiated)
	// Evidence is human-readable, e.g. "modern: server/discover offered
	// 2026-07-28", "legacy: probe answered -32601", "legacy: probe skipped,
	// budget 150ms", "legacy: cached verdict from 2026-11-30T09:00:00Z".
	Evidence string
	// Label is the stable evidence label for tests and logs: a Decision label
	// ("discover", "rpc:-32601", "http:400:nonjson", "stdio:timeout", …) or
	// one of "config" (legacy mode), "sse" (SSE transport), "budget" (probe
	// skipped), "cache" (cached verdict), "http:timeout" (provisional),
	// "inplace:sdk", "inplace:respawn", "verify:legacy" (a modern verdict
	// whose session ended legacy), "initialize:-32022" (a legacy verdict
	// whose initialize was refused, re-probed as modern).
	Label      string
	ObservedAt time.Time
	// Provisional marks the HTTP-timeout fallback: memory only, never
	// persisted.
	Provisional bool
}

// EraCache stores verdicts across restarts (the host backs it with its
// SQLite store); nil means no caching.
//
// Keys are Spec.CacheKey with "|" and ModernVersion appended, so that a
// mcphost preferring a newer version re-probes. Connect calls Put only with
// verdicts worth keeping (never provisional ones, budget skips, in-place
// respawns, auth, transient or network failures) and Delete when a cached
// verdict proved wrong. Errors are logged and otherwise ignored: the cache
// is an optimisation.
type EraCache interface {
	Get(ctx context.Context, key string) (Verdict, bool, error)
	Put(ctx context.Context, key string, v Verdict) error
	Delete(ctx context.Context, key string) error
}

// Spec describes one server connection.
type Spec struct {
	Name             string
	Mode             string        // "legacy" (default when empty) | "auto"
	Transport        string        // "stdio" | "streamable_http" | "sse" | "in_process"
	DiscoveryTimeout time.Duration // D, already clamped by the config loader (Connect clamps to [100ms, 300s] again)
	StdioProbe       string        // "sibling" (default) | "in_place"
	HTTPProbeTimeout string        // "fallback" (default) | "error"
	// stdio: NewCommand returns a fresh, unstarted *exec.Cmd each call (own
	// process group, env, dir and stderr set by the host); the negotiator
	// starts probe siblings from it and gives the session's one to
	// mcp.CommandTransport.
	NewCommand func() *exec.Cmd
	// in_process: NewTransport starts a fresh server inside mcphost (a
	// WebAssembly module) for each session and returns the transport to
	// it; closing the transport's connection ends that server. Such a
	// server is connected in legacy mode only.
	NewTransport func(ctx context.Context) (mcp.Transport, error)
	// remote
	URL        string
	HTTPClient *http.Client // the session's client (headers, auth); the probe uses the same one
	// Client builds the go-sdk client (host's handlers, capabilities);
	// called once per connect attempt.
	Client   func() *mcp.Client
	CacheKey string           // stable key of the server configuration (host computes it; include transport, command/args/env/cwd or URL)
	Cache    EraCache         // may be nil
	Logger   *slog.Logger     // nil = discard
	Now      func() time.Time // nil = time.Now (for cache expiry tests)

	// WrapTransport, when set, wraps the transport of each session Connect
	// dials (never a probe's); the host checks the ids of answers there.
	WrapTransport func(mcp.Transport) mcp.Transport
}

// Result is a connected session.
type Result struct {
	Session *mcp.ClientSession
	Verdict Verdict
	Cmd     *exec.Cmd // the session process for stdio (nil otherwise)
}

// Values of the Spec string fields.
const (
	ModeLegacy = "legacy"
	ModeAuto   = "auto"

	TransportStdio          = "stdio"
	TransportStreamableHTTP = "streamable_http"
	TransportSSE            = "sse"
	TransportInProcess      = "in_process"

	StdioProbeSibling = "sibling"
	StdioProbeInPlace = "in_place"

	HTTPProbeTimeoutFallback = "fallback"
	HTTPProbeTimeoutError    = "error"
)

// LegacyVerdictTTL is how long a cached legacy verdict stays fresh, so that
// a server upgraded to dual-era is eventually spoken to as modern. Modern
// verdicts have no clock expiry.
const LegacyVerdictTTL = 24 * time.Hour

// SessionTerminateDuration is the mcp.CommandTransport.TerminateDuration of
// session processes: how long closing the session waits after closing stdin
// before SIGTERM, and again before SIGKILL (go-sdk's default of 5 s makes
// every stop of a stuck server slow; trap T2). It matches the host's grace.
const SessionTerminateDuration = time.Second

// sessionMaxRetries is the StreamableClientTransport.MaxRetries of remote
// sessions (the host's value before negotiation existed).
const sessionMaxRetries = 2

// Connect negotiates and connects within spec.DiscoveryTimeout (one absolute
// deadline; the probe gets its own shorter deadline per §3.3) and returns
// the connected session. Legacy mode: no probe,
// ClientSessionOptions{ProtocolVersion: "2025-11-25"}, one process. Auto:
// era cache → probe → Classify → connect pinned to the verdict on a NEW
// transport → verify (§3.9) → store the verdict unless never-stored.
//
// Errors: a *ProbeError for probe outcomes that must be surfaced (auth,
// transient HTTP, network, -32020/-32021, incompatible versions, a second
// -32022); a *ProbeTimeoutError for an HTTP probe timeout under
// http_probe_timeout = "error" (or when the fallback connect failed too);
// otherwise the connect error. On error nothing Connect started is left
// running: stdio processes are killed (whole group) and waited for.
//
// On success the caller owns Result.Session and, for stdio, Result.Cmd:
// close the session, then kill the process group (the session process is
// started from spec.NewCommand and keeps whatever SysProcAttr the host set).
//
// Modern Streamable HTTP sessions: go-sdk sends the Mcp-Param-* headers of
// a tools/call only for tools listed in the same session (trap T6), so the
// caller must list tools right after Connect (and after every
// tools/list_changed) before the first tools/call.
func Connect(ctx context.Context, spec Spec) (*Result, error) {
	n, err := newNegotiator(spec)
	if err != nil {
		return nil, err
	}
	n.start = time.Now()
	n.window = clampWindow(spec.DiscoveryTimeout)
	dctx, cancel := context.WithDeadline(ctx, n.start.Add(n.window))
	defer cancel()
	res, err := n.connect(dctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, errors.Join(ctx.Err(), err)
		}
		if dctx.Err() != nil && !errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w (discovery_timeout %s exceeded)", err, n.window)
		}
		return nil, err
	}
	return res, nil
}

type negotiator struct {
	spec   Spec
	log    *slog.Logger
	now    func() time.Time
	start  time.Time
	window time.Duration
}

func newNegotiator(spec Spec) (*negotiator, error) {
	if spec.Mode == "" {
		spec.Mode = ModeLegacy
	}
	if spec.StdioProbe == "" {
		spec.StdioProbe = StdioProbeSibling
	}
	if spec.HTTPProbeTimeout == "" {
		spec.HTTPProbeTimeout = HTTPProbeTimeoutFallback
	}
	switch {
	case spec.Mode != ModeLegacy && spec.Mode != ModeAuto:
		return nil, fmt.Errorf("negotiate: unknown mode %q", spec.Mode)
	case spec.StdioProbe != StdioProbeSibling && spec.StdioProbe != StdioProbeInPlace:
		return nil, fmt.Errorf("negotiate: unknown stdio_probe %q", spec.StdioProbe)
	case spec.HTTPProbeTimeout != HTTPProbeTimeoutFallback && spec.HTTPProbeTimeout != HTTPProbeTimeoutError:
		return nil, fmt.Errorf("negotiate: unknown http_probe_timeout %q", spec.HTTPProbeTimeout)
	case spec.Client == nil:
		return nil, errors.New("negotiate: Spec.Client is nil")
	}
	switch spec.Transport {
	case TransportStdio:
		if spec.NewCommand == nil {
			return nil, errors.New("negotiate: stdio needs Spec.NewCommand")
		}
	case TransportInProcess:
		if spec.NewTransport == nil {
			return nil, errors.New("negotiate: in_process needs Spec.NewTransport")
		}
		if spec.Mode != ModeLegacy {
			return nil, errors.New("negotiate: an in-process server is connected in legacy mode only")
		}
	case TransportStreamableHTTP, TransportSSE:
		if spec.URL == "" {
			return nil, fmt.Errorf("negotiate: %s needs Spec.URL", spec.Transport)
		}
		if spec.HTTPClient == nil {
			spec.HTTPClient = http.DefaultClient
		}
	default:
		return nil, fmt.Errorf("negotiate: unknown transport %q", spec.Transport)
	}
	n := &negotiator{spec: spec, log: spec.Logger, now: spec.Now}
	if n.log == nil {
		n.log = slog.New(slog.DiscardHandler)
	}
	if n.now == nil {
		n.now = time.Now
	}
	return n, nil
}

// connect runs the flow of §3.2 under ctx, which carries the window deadline.
func (n *negotiator) connect(ctx context.Context) (*Result, error) {
	s := n.spec
	switch {
	case s.Mode == ModeLegacy:
		return n.session(ctx, n.legacyVerdict("config", `version_negotiation = "legacy"`), sessionOpts{})
	case s.Transport == TransportSSE:
		return n.session(ctx, n.legacyVerdict("sse", `transport "sse" is never probed`), sessionOpts{})
	}

	sibling := s.Transport == TransportStdio && s.StdioProbe == StdioProbeSibling
	p, skip := PlanProbe(n.window, sibling)
	if skip {
		n.log.Info("negotiation: probe skipped", "window", n.window, "probe", p)
		v := n.legacyVerdict("budget", fmt.Sprintf("probe skipped, budget %s", n.window))
		return n.session(ctx, v, sessionOpts{reprobe: true})
	}

	if v, ok := n.cached(ctx); ok {
		return n.session(ctx, v, sessionOpts{reprobe: true})
	}

	probeDeadline := n.start.Add(p)
	var (
		d   Decision
		err error
	)
	switch {
	case s.Transport == TransportStdio && s.StdioProbe == StdioProbeInPlace:
		return n.inPlace(ctx, probeDeadline, p)
	case s.Transport == TransportStdio:
		d, err = n.probeSibling(ctx, probeDeadline, p)
	default:
		d, err = n.probeHTTP(ctx, probeDeadline, p)
	}
	if err != nil {
		return nil, err
	}
	n.log.Info("negotiation: probe classified", "decision", d.Kind, "label", d.Label, "evidence", d.Evidence)

	switch d.Kind {
	case Modern:
		v := Verdict{Era: EraModern, ProtocolVersion: d.Version, Evidence: "modern: " + d.Evidence, Label: d.Label, ObservedAt: n.now()}
		return n.session(ctx, v, sessionOpts{store: true})
	case Legacy:
		v := Verdict{Era: EraLegacy, ProtocolVersion: LegacyVersion, Evidence: "legacy: " + d.Evidence, Label: d.Label, ObservedAt: n.now()}
		return n.session(ctx, v, sessionOpts{store: true, reprobe: true})
	case Inconclusive:
		if s.HTTPProbeTimeout == HTTPProbeTimeoutError {
			return nil, d.Err
		}
		v := Verdict{Era: EraLegacy, ProtocolVersion: LegacyVersion, Label: d.Label, ObservedAt: n.now(), Provisional: true,
			Evidence: "legacy (provisional): " + d.Evidence}
		res, err := n.session(ctx, v, sessionOpts{})
		if err != nil {
			return nil, &ProbeTimeoutError{After: p, ConnectErr: err}
		}
		return res, nil
	case Fail:
		return nil, d.Err
	}
	return nil, fmt.Errorf("negotiate: unexpected decision %v", d.Kind)
}

func (n *negotiator) legacyVerdict(label, evidence string) Verdict {
	return Verdict{Era: EraLegacy, ProtocolVersion: LegacyVersion, Evidence: "legacy: " + evidence, Label: label, ObservedAt: n.now()}
}

// sessionOpts says how session treats a verdict.
type sessionOpts struct {
	store   bool // Put the verdict after a verified connect
	reprobe bool // a legacy initialize refused with -32022 may be re-probed as modern
}

// session connects pinned to v on a new transport, verifies what the SDK
// negotiated (§3.9) and stores the verdict when o.store says so.
func (n *negotiator) session(ctx context.Context, v Verdict, o sessionOpts) (*Result, error) {
	pin := LegacyVersion
	if v.Era == EraModern {
		pin = ModernVersion
	}
	cs, cmd, err := n.dial(ctx, pin, nil)
	if err != nil {
		if v.Era == EraLegacy && o.reprobe && refusesLegacy(err) && ctx.Err() == nil {
			return n.reprobeModern(ctx, v, err)
		}
		if n.spec.Mode == ModeLegacy {
			return nil, err // nothing was negotiated: the initialize failure is the whole story
		}
		return nil, fmt.Errorf("%s session at %s (%s): %w", v.Era, pin, v.Evidence, err)
	}
	negotiated := cs.InitializeResult().ProtocolVersion
	if v.Era == EraModern && !isModern(negotiated) {
		// The SDK falls back to initialize silently: keep the session, but
		// the verdict was wrong.
		n.log.Warn("negotiation: modern verdict, but the session negotiated a legacy version; dropping the cached verdict",
			"verdict", v.Evidence, "negotiated", negotiated)
		n.deleteCached(ctx)
		v = Verdict{Era: EraLegacy, Label: "verify:legacy", ObservedAt: n.now(),
			Evidence: fmt.Sprintf("legacy: the modern verdict (%s) ended in a %s session", v.Evidence, negotiated)}
		o.store = false
	}
	v.ProtocolVersion = negotiated
	if o.store {
		n.put(ctx, v)
	}
	n.log.Info("negotiation: connected", "era", v.Era, "protocol_version", v.ProtocolVersion, "evidence", v.Evidence, "label", v.Label)
	return &Result{Session: cs, Verdict: v, Cmd: cmd}, nil
}

// reprobeModern handles a legacy initialize refused with -32022: the server
// is modern after all (a slow starter that looked silent, or a stale cached
// verdict). It connects once pinned modern in the remaining window.
func (n *negotiator) reprobeModern(ctx context.Context, old Verdict, initErr error) (*Result, error) {
	n.log.Info("negotiation: initialize refused with a version error; re-probing as modern", "verdict", old.Evidence, "err", initErr)
	n.deleteCached(ctx)
	cs, cmd, err := n.dial(ctx, ModernVersion, nil)
	if err != nil {
		return nil, fmt.Errorf("initialize refused (%v), and the modern connect that followed failed: %w", initErr, err)
	}
	negotiated := cs.InitializeResult().ProtocolVersion
	v := Verdict{Era: EraModern, ProtocolVersion: negotiated, Label: "initialize:-32022", ObservedAt: n.now(),
		Evidence: fmt.Sprintf("modern: initialize answered %s, server/discover offered %s", versionErrCode(initErr), negotiated)}
	if !isModern(negotiated) {
		v.Era, v.Label = EraLegacy, "verify:legacy"
		v.Evidence = fmt.Sprintf("legacy: initialize answered %s, but the modern connect ended in a %s session", versionErrCode(initErr), negotiated)
	} else {
		n.put(ctx, v)
	}
	n.log.Info("negotiation: connected", "era", v.Era, "protocol_version", v.ProtocolVersion, "evidence", v.Evidence, "label", v.Label)
	return &Result{Session: cs, Verdict: v, Cmd: cmd}, nil
}

// refusesLegacy reports whether a legacy connect error is a version error
// naming versions (-32022, or -32004 with data.supported): modern evidence.
func refusesLegacy(err error) bool {
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		return false
	}
	switch we.Code {
	case codeUnsupportedVersion:
		return true
	case codeUnsupportedVersionPreGA:
		_, ok := supportedList(we.Data)
		return ok
	}
	return false
}

func versionErrCode(err error) string {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return fmt.Sprint(we.Code)
	}
	return "a version error"
}

// dial connects a new session pinned to version on a new transport (a new
// process for stdio). mw, when non-nil, is added to the client as a sending
// middleware. On error every process it started is killed and waited for;
// the returned cmd is then nil.
func (n *negotiator) dial(ctx context.Context, version string, mw mcp.Middleware) (*mcp.ClientSession, *exec.Cmd, error) {
	client := n.spec.Client()
	if client == nil {
		return nil, nil, errors.New("negotiate: Spec.Client returned nil")
	}
	if mw != nil {
		client.AddSendingMiddleware(mw)
	}
	var (
		t   mcp.Transport
		cmd *exec.Cmd
	)
	switch n.spec.Transport {
	case TransportStdio:
		cmd = n.spec.NewCommand()
		if cmd == nil {
			return nil, nil, errors.New("negotiate: Spec.NewCommand returned nil")
		}
		t = &mcp.CommandTransport{Command: cmd, TerminateDuration: SessionTerminateDuration}
	case TransportStreamableHTTP:
		t = &mcp.StreamableClientTransport{Endpoint: n.spec.URL, HTTPClient: n.spec.HTTPClient, MaxRetries: sessionMaxRetries}
	case TransportSSE:
		t = Detached(&mcp.SSEClientTransport{Endpoint: n.spec.URL, HTTPClient: n.spec.HTTPClient})
	case TransportInProcess:
		var err error
		if t, err = n.spec.NewTransport(ctx); err != nil {
			return nil, nil, err
		}
	}
	if n.spec.WrapTransport != nil {
		t = n.spec.WrapTransport(t)
	}
	type connected struct {
		cs  *mcp.ClientSession
		err error
	}
	done := make(chan connected, 1)
	go func() {
		cs, err := client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: version})
		done <- connected{cs, err}
	}()
	var r connected
	select {
	case r = <-done:
	case <-ctx.Done():
		if cmd != nil {
			r = <-done // a stdio Connect returns once its request is cancelled; the process is reaped below
		} else {
			// go-sdk's cleanup after a failed initialize over HTTP can wait
			// 5 s for its notifications/cancelled POST: let it finish in the
			// background, and close a session that came up too late.
			go func() {
				if r := <-done; r.cs != nil {
					_ = r.cs.Close()
				}
			}()
			r.err = ctx.Err()
		}
	}
	if r.err != nil {
		reapFailed(cmd)
		return nil, nil, r.err
	}
	return r.cs, cmd, nil
}

// detachedTransport connects inner with a context that outlives the
// Connect call but is still cancelled when ctx ends before the transport is
// up. go-sdk's SSEClientTransport ties its event stream to the context given
// to Connect, so connecting it under the window's deadline would end the
// session as soon as Connect returns and the window is released.
type detachedTransport struct{ inner mcp.Transport }

// Detached wraps a transport whose Connect ties the connection's lifetime to
// the context it is given (go-sdk's SSEClientTransport opens its event
// stream with it): the handshake stays bounded by that context, but the
// connection lives until it is closed. The host uses it for SSE sessions in
// legacy mode too.
func Detached(t mcp.Transport) mcp.Transport { return detachedTransport{t} }

func (t detachedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	conn, err := t.inner.Connect(lctx)
	if !stop() && err == nil { // ctx ended while connecting
		conn.Close()
		err = ctx.Err()
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return &cancelOnClose{Connection: conn, cancel: cancel}, nil
}

// cancelOnClose releases the detached context with the connection.
type cancelOnClose struct {
	mcp.Connection
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.Connection.Close()
	c.cancel()
	return err
}

// reapFailed ends a session process whose connect failed: go-sdk has
// normally closed (and waited for) it already; this kills the rest of its
// process group and waits when nobody has.
func reapFailed(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	if cmd.SysProcAttr != nil && cmd.SysProcAttr.Setpgid {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	} else {
		_ = cmd.Process.Kill()
	}
	if cmd.ProcessState == nil {
		_ = cmd.Wait()
	}
}

// discoverRequest is the probe's one JSON-RPC line (without the newline):
// server/discover with the _meta triple the session will send.
func discoverRequest(id, version string) []byte {
	req := map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"method":  "server/discover",
		"params": map[string]any{
			"_meta": map[string]any{
				mcp.MetaKeyProtocolVersion:    version,
				mcp.MetaKeyClientCapabilities: map[string]any{},
				mcp.MetaKeyClientInfo:         map[string]any{"name": ClientName, "version": clientVersion()},
			},
		},
	}
	b, err := json.Marshal(req)
	if err != nil {
		panic(err) // only our own values are marshalled
	}
	return b
}

// ClientName is the clientInfo name of the raw probes.
const ClientName = "mcphost"

// clientVersion is the raw probes' clientInfo version: the module version
// stamped by `go install`, else "dev" (as cmd/mcphost reports it).
func clientVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// probeID is the JSON-RPC id of probe attempt n (1 or 2).
func probeID(attempt int) string { return fmt.Sprintf("mcphost-probe-%d", attempt) }
