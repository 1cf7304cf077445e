package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/apiclient"
	"github.com/mcphost/mcphost/internal/gotool"
	"github.com/mcphost/mcphost/internal/shellquote"
	"github.com/mcphost/mcphost/internal/sysinfo"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the run failed: a leak, a failed call, a lost entry, or a setup error
	exitUsage   = 2
)

// warmupCalls is how many calls each side makes to each target before the
// load curve is timed (../shared/docs/performance.md).
const warmupCalls = 50

// run is the whole program; it never calls os.Exit, so the smoke test can
// drive it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, code := parseOptions(args, stderr)
	if code >= 0 {
		return code
	}
	level := slog.LevelInfo
	if o.Verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	if o.Out == "" {
		dir, err := os.MkdirTemp("", "mcphost-load-"+time.Now().UTC().Format("20060102-150405")+"-")
		if err != nil {
			fmt.Fprintf(stderr, "mcphost-load: %v\n", err)
			return exitFailure
		}
		o.Out = dir
	}
	if abs, err := filepath.Abs(o.Out); err == nil {
		o.Out = abs
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		fmt.Fprintf(stderr, "mcphost-load: -out: %v\n", err)
		return exitFailure
	}

	r := &runner{o: o, logger: logger, own: newOwned()}
	r.res = &results{
		Tool:    "mcphost-load",
		Command: command(args),
		Options: o.view(),
		Started: time.Now().UTC(),
	}
	logger.Info("mcphost-load starting", "out", o.Out, "servers", o.Servers, "steps", fmt.Sprint(o.Steps), "soak", o.Soak)
	if err := os.WriteFile(filepath.Join(o.Out, "command.txt"), []byte(r.res.Command+"\n"), 0o644); err != nil {
		fmt.Fprintf(stderr, "mcphost-load: %v\n", err)
		return exitFailure
	}
	err := r.run(ctx)
	if err != nil {
		r.fail("%v", err)
	}
	r.res.Finished = time.Now().UTC()
	r.res.Machine.LoadAvgEnd = sysinfo.LoadAvg()
	r.res.Pass = len(r.res.Failures) == 0
	summary := r.res.summary()
	if err := r.res.write(o.Out, summary); err != nil {
		fmt.Fprintf(stderr, "mcphost-load: writing results: %v\n", err)
		return exitFailure
	}
	fmt.Fprint(stdout, summary)
	if !r.res.Pass {
		return exitFailure
	}
	return exitOK
}

// command renders the invocation to repeat the run.
func command(args []string) string {
	return shellquote.Join(append([]string{"go", "run", "./cmd/mcphost-load"}, args...)...)
}

// runner holds one run's state.
type runner struct {
	o        options
	logger   *slog.Logger
	own      *owned
	res      *results
	fixtures []*httpFixture // running HTTP fixtures
}

func (r *runner) stopFixtures() {
	if r.fixtures != nil {
		r.logger.Info("stopping HTTP fixture servers", "count", len(r.fixtures))
		stopFixtures(r.fixtures)
		r.fixtures = nil
	}
}

func (r *runner) fail(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	r.res.Failures = append(r.res.Failures, msg)
	r.logger.Error("FAIL", "reason", msg)
}

// run runs every phase. A returned error is a setup failure that stopped
// the run; failures of a phase that ran to the end are recorded with fail.
func (r *runner) run(ctx context.Context) error {
	o, logger := r.o, r.logger
	r.res.Machine = describeMachine()

	// Fixtures.
	var (
		bins binaries
		err  error
		root string
	)
	if o.BinDir != "" {
		bins, err = prebuilt(o.BinDir, o.Plugin, o.Cluster)
	} else {
		root, err = gotool.RepoRoot()
		if err == nil {
			bins, err = buildFixtures(ctx, root, filepath.Join(o.Out, "bin"), o.Plugin, o.Cluster, logger)
		}
	}
	if err != nil {
		return fmt.Errorf("fixtures: %w", err)
	}
	if root == "" {
		root, _ = gotool.RepoRoot()
	}
	r.res.Machine.Commit = commitOf(root)
	if o.Cluster {
		return r.runCluster(ctx, bins)
	}

	plan, err := r.planWithFixtures(ctx, bins)
	if err != nil {
		return err
	}
	defer r.stopFixtures()

	// Config: written out so that the run can be repeated by hand with
	// `mcphost serve -config` (the tokens are random per run).
	principals := planPrincipals(o.Principals)
	dataDir := filepath.Join(o.Out, "data")
	if !o.KeepData {
		defer os.RemoveAll(dataDir)
	}
	cfgPath := filepath.Join(o.Out, "config.hcl")
	src := configHCL(dataDir, plan, principals, bins, o.Plugin, o.PluginTime, o.Policies) +
		fmt.Sprintf("\nstore {\n  sync = %q\n}\n", o.StoreSync)
	if err := os.WriteFile(cfgPath, []byte(src), 0o600); err != nil {
		return err
	}
	cfg, diags := config.LoadFile(cfgPath, config.Options{})
	if diags.HasErrors() {
		return fmt.Errorf("the generated config %s does not load: %v", cfgPath, diags)
	}

	// Start-up, cold and then warm: first the curve of -startup-curve
	// (stdio servers only), then the daemon of -servers.
	r.res.Lifecycle.Before = readCounters(r.own)
	r.dump("before")
	if err := r.startupCurve(ctx, bins, principals); err != nil {
		return err
	}
	label := "cold"
	if o.WarmStart {
		d, err := r.startup(ctx, cfg, label, plan)
		if err != nil {
			return err
		}
		r.shutdown(d, "cold", false)
		label = "warm"
	}
	d, err := r.startup(ctx, cfg, label, plan)
	if err != nil {
		return err
	}
	defer func() {
		if d != nil {
			r.shutdown(d, "final", true)
		}
	}()

	// Sessions: the sanity checks' and one per worker slot.
	admin := newAPIClient(d.addr, 4)
	var sessions []*session
	newSession := func(p principalPlan, title string) (*session, error) {
		s, err := createSession(ctx, admin, p, title)
		if err == nil {
			sessions = append(sessions, s)
		}
		return s, err
	}
	if err := r.sanity(ctx, admin, principals, plan, newSession); err != nil {
		return err
	}
	load := principals[:o.Principals]
	slots := make([]*session, o.slots())
	for w := range slots {
		if slots[w], err = newSession(load[w%len(load)], fmt.Sprintf("worker %d", w)); err != nil {
			return fmt.Errorf("creating sessions: %w", err)
		}
	}

	targets := plan[:o.Targets]
	text := strings.Repeat("x", o.TextBytes)
	calls := make([]apiclient.CallRequest, len(targets))
	for t, s := range targets {
		calls[t] = echoCall(s.Name, text)
	}
	apiCall := func(c *apiclient.Client) callFunc {
		as := make([]*apiclient.Client, len(slots)) // each slot's principal
		for w, s := range slots {
			as[w] = c.WithToken(s.token)
		}
		return func(ctx context.Context, w, i int) (int, error) {
			t := (w + i) % len(targets)
			e, code, err := call(ctx, as[w], slots[w], calls[t])
			if err != nil {
				return 0, err
			}
			if code != http.StatusOK || e.Status != "ok" {
				return 0, fmt.Errorf("call to %s: %d, entry status %q: %s", targets[t].Name, code, e.Status, e.Error)
			}
			return targets[t].Kind, nil
		}
	}
	// The gateway door: one MCP client per worker slot, the eras in turn,
	// as the principal of the slot's session.
	var (
		gws    []*gwClient
		gwCall callFunc // one for the run: its calls are numbered across phases
	)
	closeGateway := func() {
		for _, g := range gws {
			g.close()
		}
	}
	if o.Door == doorGateway {
		if err := r.gatewaySanity(ctx, "http://"+d.addr, principals, plan[0].Name); err != nil {
			return err
		}
		for w := range slots {
			gws = append(gws, newGWClient("http://"+d.addr, w, load[w%len(load)]))
		}
		gwCall = gatewayCalls(gws, targets, o.TextBytes)
		defer closeGateway()
	}
	// hostCall is the door's callFunc; conns sizes the API client's pool.
	hostCall := func(conns int) (callFunc, func()) {
		if o.Door == doorGateway {
			return gwCall, func() {}
		}
		c := newAPIClient(d.addr, conns)
		return apiCall(c), c.CloseIdleConnections
	}

	if len(o.Steps) > 0 {
		hc, done := hostCall(o.Steps[len(o.Steps)-1] + 4)
		err := r.loadPhase(ctx, bins, targets, text, hc, nil, min(2, len(slots)))
		done()
		if err != nil {
			return err
		}
	}
	if o.Soak > 0 {
		hc, done := hostCall(o.SoakConc + 4)
		logger.Info("soak", "door", o.Door, "duration", o.Soak, "warmup", o.SoakWarmup, "sample", o.Sample, "concurrency", o.SoakConc, "rate", o.SoakRate)
		stopProfile := r.startProfile()
		res := runSoak(ctx, soakConfig{
			duration: o.Soak, warmup: o.SoakWarmup, every: o.Sample,
			conc: o.SoakConc, rate: o.SoakRate, call: hc, targets: len(targets), h: d.h, own: r.own,
		}, logger)
		stopProfile()
		done()
		r.res.Soak = &res
		for _, p := range res.Problems {
			r.fail("soak: %s", p)
		}
		if res.Errors > 0 {
			r.fail("soak: %d calls failed; first: %s", res.Errors, strings.Join(res.FirstErrs, " | "))
		}
		if res.Restarts > 0 {
			r.fail("soak: servers restarted %d times (a server died)", res.Restarts)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}

	if len(gws) > 0 {
		logger.Info("checking the transcript of the gateway's calls", "clients", len(gws))
		gt := checkGatewayTranscript(ctx, admin, gws, true)
		r.res.GatewayTranscript = &gt
		for _, p := range gt.Problems {
			r.fail("gateway transcript: %s", p)
		}
		for _, g := range gws {
			if g.connects > 1 {
				r.fail("gateway: client %s connected %d times (a session was lost with no fault in the run)", g.name, g.connects)
			}
		}
		closeGateway()
	}
	logger.Info("checking the transcript", "sessions", len(sessions))
	tc := checkTranscript(ctx, admin, sessions, principals)
	r.res.Transcript = &tc
	for _, p := range tc.Problems {
		r.fail("transcript: %s", p)
	}
	admin.CloseIdleConnections()
	r.shutdown(d, "final", true)
	d = nil
	return nil
}

// planWithFixtures plans -servers servers and starts the HTTP fixtures of
// its HTTP kinds (remote services, shared by every daemon of the run); the
// caller stops them with stopFixtures.
func (r *runner) planWithFixtures(ctx context.Context, bins binaries) ([]serverPlan, error) {
	plan := planServers(r.o.Servers)
	var (
		httpIdx []int
		argvs   [][]string
	)
	for i, s := range plan {
		if kinds[s.Kind].HTTP {
			httpIdx = append(httpIdx, i)
			argvs = append(argvs, bins.httpCommand(kinds[s.Kind]))
		}
	}
	r.logger.Info("starting HTTP fixture servers", "count", len(httpIdx))
	fixtures, err := startHTTPFixtures(ctx, argvs, r.own)
	if err != nil {
		return nil, fmt.Errorf("HTTP fixtures: %w", err)
	}
	r.fixtures = fixtures
	for j, i := range httpIdx {
		plan[i].URL = fixtures[j].URL
	}
	r.res.Servers = describeServers(plan, r.o.Targets)
	return plan, nil
}

// startup starts one daemon and records how long it took.
func (r *runner) startup(ctx context.Context, cfg *config.Config, label string, plan []serverPlan) (*daemon, error) {
	r.logger.Info("starting the daemon", "era_cache", label, "servers", len(plan))
	d, su, err := startDaemon(ctx, cfg, label, filepath.Join(r.o.Out, "daemon-"+label+".log"), plan, r.o.SettleLimit)
	if err != nil {
		return nil, fmt.Errorf("daemon (%s): %w", label, err)
	}
	r.res.Startup = append(r.res.Startup, su)
	r.logger.Info("daemon ready", "era_cache", label, "ready", su.Ready, "servers", su.Servers,
		"total_ms", round1(su.TotalMs), "host_new_ms", round1(su.HostNewMs), "connect_ms", round1(su.ConnectMs), "eras", fmt.Sprint(su.Eras))
	for _, p := range su.Problems {
		r.fail("start-up (%s): %s", label, p)
	}
	if su.Ready < su.Servers {
		d.close()
		return nil, fmt.Errorf("start-up (%s): %d of %d servers ready; see %s", label, su.Ready, su.Servers, filepath.Join(r.o.Out, "daemon-"+label+".log"))
	}
	return d, nil
}

// lifecycle compares the process before the first daemon started with the
// process after each daemon shut down.
type lifecycle struct {
	Before counters            `json:"before"`
	After  map[string]counters `json:"after"` // by daemon: "cold", "final"
}

// shutdown closes d and checks that it left nothing behind. No child
// process may remain, and file descriptors and goroutines must be back to
// where they were before the first daemon started (they are read again for
// up to 10 s, as connections take a moment to wind down): after the cold
// daemon too, whose remote servers' HTTP connections must be closed even
// though the fixtures still run. After the final daemon the HTTP fixtures
// are stopped first.
func (r *runner) shutdown(d *daemon, label string, final bool) {
	r.logger.Info("shutting the daemon down", "daemon", label)
	if err := d.close(); err != nil {
		r.fail("shutdown (%s): %v", label, err)
	}
	if final {
		r.stopFixtures()
	}
	before := r.res.Lifecycle.Before
	var c counters
	wait := 10 * time.Second
	for deadline := time.Now().Add(wait); ; {
		runtime.GC()
		c = readCounters(r.own)
		settled := c.Children <= 0 && c.Goroutines <= before.Goroutines+goroutineSlack && c.FDs <= before.FDs+fdSlack
		if settled || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r.res.Lifecycle.After == nil {
		r.res.Lifecycle.After = map[string]counters{}
	}
	r.res.Lifecycle.After[label] = c
	r.dump("after-" + label)
	r.logger.Info("daemon stopped", "daemon", label, "children", c.Children, "fds", c.FDs, "fds_before", before.FDs,
		"goroutines", c.Goroutines, "goroutines_before", before.Goroutines)
	if procSupported && c.Children > 0 {
		r.fail("shutdown (%s): %d child processes of the daemon still exist (%d zombies)", label, c.Children, c.Zombies)
	}
	// Every daemon, the cold one too, must give back what it took: the
	// HTTP fixtures that outlive the cold daemon were counted in before.
	if procSupported && c.FDs > before.FDs+fdSlack {
		r.fail("shutdown (%s): %d file descriptors open, %d before the daemon started (see after-%s-fds.txt)", label, c.FDs, before.FDs, label)
	}
	if c.Goroutines > before.Goroutines+goroutineSlack {
		r.fail("shutdown (%s): %d goroutines, %d before the daemon started (see after-%s-goroutines.txt)", label, c.Goroutines, before.Goroutines, label)
	}
}

// startProfile starts the CPU profile of the soak when -profile is set; the
// function it returns stops it and writes the heap profile.
func (r *runner) startProfile() func() {
	if !r.o.Profile {
		return func() {}
	}
	f, err := os.Create(filepath.Join(r.o.Out, "soak-cpu.pprof"))
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		r.logger.Warn("no CPU profile", "err", err)
		f = nil
	}
	return func() {
		if f != nil {
			pprof.StopCPUProfile()
			f.Close()
		}
		if h, err := os.Create(filepath.Join(r.o.Out, "soak-heap.pprof")); err == nil {
			pprof.Lookup("heap").WriteTo(h, 0)
			h.Close()
		}
	}
}

// dump writes the goroutine stacks and the open file descriptors of the
// process to OUT/NAME-goroutines.txt and OUT/NAME-fds.txt, for finding
// what a leak check counted.
func (r *runner) dump(name string) {
	if f, err := os.Create(filepath.Join(r.o.Out, name+"-goroutines.txt")); err == nil {
		pprof.Lookup("goroutine").WriteTo(f, 1)
		f.Close()
	}
	if procSupported {
		var b strings.Builder
		ents, _ := os.ReadDir("/proc/self/fd")
		for _, e := range ents {
			target, _ := os.Readlink("/proc/self/fd/" + e.Name())
			fmt.Fprintf(&b, "%s -> %s\n", e.Name(), target)
		}
		os.WriteFile(filepath.Join(r.o.Out, name+"-fds.txt"), []byte(b.String()), 0o644)
	}
}

// sanity proves the policies and the plugin are on: the blocked principal
// is denied by rule r6, and a secret in an echo is redacted (or at least
// passes through the plugin).
func (r *runner) sanity(ctx context.Context, c *apiclient.Client, principals []principalPlan, plan []serverPlan, newSession func(principalPlan, string) (*session, error)) error {
	for _, p := range principals {
		var me struct{ Name string }
		if err := c.WithToken(p.Token).Me(ctx, &me); err != nil {
			return fmt.Errorf("sanity: %w", describe(err))
		}
		if me.Name != p.Name {
			return fmt.Errorf("sanity: the token of %s authenticates as %q", p.Name, me.Name)
		}
	}
	var ss []struct {
		Name, Status, Era string
	}
	if err := c.WithToken(principals[0].Token).Servers(ctx, &ss); err != nil {
		return fmt.Errorf("sanity: %w", describe(err))
	}
	ready := 0
	for _, s := range ss {
		if s.Status == "ready" {
			ready++
		}
	}
	if ready != len(plan) {
		r.fail("sanity: GET /api/v1/servers lists %d ready servers, want %d", ready, len(plan))
	}

	target := plan[0].Name
	blocked := principals[len(principals)-1]
	bs, err := newSession(blocked, "sanity: policy")
	if err != nil {
		return fmt.Errorf("sanity: %w", err)
	}
	e, code, err := call(ctx, c.WithToken(bs.token), bs, echoCall(target, "hello"))
	switch {
	case !r.o.Policies:
		if err != nil || code != http.StatusOK {
			r.fail("sanity: without policies the blocked principal's call got %d: %v", code, err)
		}
	case err != nil || code != http.StatusForbidden || e.Status != "denied":
		r.fail("sanity: rule r6 should deny the blocked principal's call with 403 and a denied entry; got %d: %v", code, err)
	default:
		r.res.Sanity.Policy = "rule r6 denied the blocked principal: " + e.Error
	}

	ps, err := newSession(principals[0], "sanity: plugin")
	if err != nil {
		return fmt.Errorf("sanity: %w", err)
	}
	e, code, err = call(ctx, c.WithToken(ps.token), ps, echoCall(target, secretText))
	if err != nil || code != http.StatusOK || e.Status != "ok" {
		r.fail("sanity: echo of a secret: %d: %v", code, err)
		return nil
	}
	ran := e.Trail != nil && len(e.Trail.Plugins) > 0 && e.Trail.Plugins[0].Plugin == r.o.Plugin && e.Trail.Plugins[0].Error == ""
	switch {
	case r.o.Plugin == pluginNone:
		r.res.Sanity.Plugin = "no plugin configured"
	case !ran:
		r.fail("sanity: the %s plugin is not in the entry's trail", r.o.Plugin)
	case r.o.Plugin == pluginRedact && (strings.Contains(string(e.Result), "sk-ABCDEF") || !strings.Contains(string(e.Result), "[REDACTED]")):
		r.fail("sanity: redact left the secret in the result: %s", e.Result)
	case r.o.Plugin == pluginRedact:
		r.res.Sanity.Plugin = "redact replaced the secret in an echo result with [REDACTED]"
	default:
		r.res.Sanity.Plugin = r.o.Plugin + " ran on an echo result (trail)"
	}
	return nil
}

// loadPhase connects the direct twins, warms both sides up and runs the
// concurrency steps.
//
// Warm-up goes through the first warmWorkers workers in turn (through the
// gateway, workers 0 and 1 are the two eras). probe, when set, reads the
// cluster run's parts around each window.
func (r *runner) loadPhase(ctx context.Context, bins binaries, targets []serverPlan, text string, hc callFunc, probe func() probeReading, warmWorkers int) error {
	o, logger := r.o, r.logger
	logger.Info("connecting direct go-sdk clients", "targets", len(targets))
	directs, err := openDirects(ctx, targets, bins, r.own)
	if err != nil {
		return fmt.Errorf("direct clients: %w", err)
	}
	defer closeDirects(directs)
	args := map[string]any{"text": text}
	directCall := func(ctx context.Context, w, i int) (int, error) {
		t := (w + i) % len(directs)
		if err := directs[t].call(ctx, args); err != nil {
			return 0, fmt.Errorf("direct call to %s twin: %w", kinds[directs[t].Kind].Name, err)
		}
		return directs[t].Kind, nil
	}
	logger.Info("warming up", "calls_per_target_and_side", warmupCalls)
	for t := range targets {
		for i := range warmupCalls {
			if _, err := directCall(ctx, t, i*len(targets)); err != nil {
				return fmt.Errorf("warm-up: %w", err)
			}
			if _, err := hc(ctx, i%warmWorkers, t+i*len(targets)); err != nil {
				return fmt.Errorf("warm-up: %w", err)
			}
		}
	}

	steps := runLoad(ctx, loadConfig{steps: o.Steps, stepTime: o.StepTime, rounds: o.Rounds, direct: directCall, host: hc, probe: probe}, logger)
	lr := &loadResult{Steps: steps, Targets: len(targets), TextBytes: o.TextBytes, KneeHost: kneeOf(steps, true), KneeDirect: kneeOf(steps, false)}
	r.res.Load = lr
	logger.Info("knee", "host", lr.KneeHost.String(), "direct", lr.KneeDirect.String())
	for _, s := range steps {
		if s.Host.Errors > 0 {
			r.fail("load at %d: %d host calls failed; first: %s", s.Concurrency, s.Host.Errors, strings.Join(s.Host.FirstErrs, " | "))
		}
		if s.Direct.Errors > 0 {
			r.fail("load at %d: %d direct calls failed; first: %s", s.Concurrency, s.Direct.Errors, strings.Join(s.Direct.FirstErrs, " | "))
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}
