//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcphost/mcphost/cluster"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/pgserver"
	"github.com/mcphost/mcphost/internal/roundrobin"
)

// The cluster run's replicas: "a" is never killed (its counters are the
// soak's verdict), "b" is killed and started again.
const (
	replicaA = "a"
	replicaB = "b"
)

// How the cluster run's balancer checks its replicas (GET /readyz), as a
// Kubernetes readiness probe or nginx's health check would, only faster.
const (
	healthPath  = "/readyz"
	healthEvery = 250 * time.Millisecond
)

// faultGrace is how long after a fault has ended a failed call still counts
// as the fault's: calls that were sent before it ended, and a 2025-11-25
// client whose session died with its replica connecting again.
const faultGrace = 5 * time.Second

// replicaProc is one `mcphost serve` process of the cluster run.
type replicaProc struct {
	id     string
	cmd    *exec.Cmd
	base   string // http://127.0.0.1:PORT, from -ready-file
	exited chan struct{}
	log    *os.File
}

func (p *replicaProc) pid() int { return p.cmd.Process.Pid }

// clusterRun is the state of one cluster run.
type clusterRun struct {
	r        *runner
	bins     binaries
	cfgPath  string
	env      []string // the replicas' environment beyond the tool's
	dataRoot string
	admin    principalPlan
	pg       *pgserver.Server
	lb       *roundrobin.Balancer
	lbURL    string
	metrics  *http.Client

	mu   sync.Mutex
	reps map[string]*replicaProc
}

// runCluster is the cluster run: PostgreSQL, the HTTP fixtures, two
// replicas and the balancer, then the load curve, the soak with its faults
// and the read-back of the transcript through the balancer.
func (r *runner) runCluster(ctx context.Context, bins binaries) (err error) {
	o, logger := r.o, r.logger
	c := &clusterRun{r: r, bins: bins, reps: map[string]*replicaProc{}, dataRoot: filepath.Join(o.Out, "data"),
		metrics: &http.Client{Timeout: 5 * time.Second}}
	res := &clusterResult{}
	r.res.Cluster = res
	r.res.Lifecycle.Before = readCounters(r.own)

	logger.Info("starting PostgreSQL")
	if c.pg, err = pgserver.Start(); err != nil {
		return fmt.Errorf("PostgreSQL: %w", err)
	}
	defer c.pg.Stop()
	r.own.add(c.pg.PID())
	dsn, err := c.pg.CreateDatabase(ctx, "mcphost_load")
	if err != nil {
		return err
	}
	res.Postgres = fmt.Sprintf("127.0.0.1:%d", c.pg.Port())

	// The HTTP fixtures are shared by both replicas, as a cluster's remote
	// servers are.
	plan, err := r.planWithFixtures(ctx, bins)
	if err != nil {
		return err
	}
	defer r.stopFixtures()

	// The balancer listens first: its URL is the replicas' public URL.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	c.lb = &roundrobin.Balancer{}
	c.lbURL = "http://" + ln.Addr().String()
	res.Balancer = c.lbURL
	lbSrv := &http.Server{Handler: c.lb, ReadHeaderTimeout: 10 * time.Second}
	go lbSrv.Serve(ln)
	defer lbSrv.Close()
	hctx, stopHealth := context.WithCancel(ctx)
	defer stopHealth()

	principals := planPrincipals(o.Principals)
	c.admin = principals[0]
	c.cfgPath = filepath.Join(o.Out, "config.hcl")
	src := configHCL("", plan, principals, bins, o.Plugin, o.PluginTime, o.Policies) +
		fmt.Sprintf("\n# The cluster run: one PostgreSQL, reached through the balancer.\npublic_urls = [%q]\n\nstore {\n  postgres = env(\"DATABASE_URL\")\n}\n", c.lbURL)
	if err := os.WriteFile(c.cfgPath, []byte(src), 0o600); err != nil {
		return err
	}
	env := map[string]string{"DATABASE_URL": dsn, "MCPHOST_DATA_DIR": c.dataRoot}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	if _, diags := config.LoadFile(c.cfgPath, config.Options{LookupEnv: lookup}); diags.HasErrors() {
		return fmt.Errorf("the generated config %s does not load: %v", c.cfgPath, diags)
	}
	if !o.KeepData {
		defer os.RemoveAll(c.dataRoot)
	}
	c.env = []string{
		"DATABASE_URL=" + dsn,
		"MCPHOST_CLUSTER_SECRET=" + hex.EncodeToString(randomBytes(32)),
		"MCPHOST_SECRET_KEY=" + base64.StdEncoding.EncodeToString(randomBytes(32)),
	}

	defer c.stopAll()
	for _, id := range []string{replicaA, replicaB} {
		t0 := time.Now()
		p, err := c.startReplica(ctx, id)
		if err != nil {
			return err
		}
		res.Replicas = append(res.Replicas, fmt.Sprintf("%s at %s (pid %d)", id, p.base, p.pid()))
		logger.Info("replica ready", "replica", id, "url", p.base, "ms", time.Since(t0).Milliseconds())
	}
	c.setTargets()
	go c.lb.Check(hctx, healthPath, healthEvery)

	admin := newAPIClient(strings.TrimPrefix(c.lbURL, "http://"), 4)
	defer admin.CloseIdleConnections()
	if err := r.gatewaySanity(ctx, c.lbURL, principals, plan[0].Name); err != nil {
		return err
	}

	load := principals[:o.Principals]
	targets := plan[:o.Targets]
	var gws []*gwClient
	for w := range o.slots() {
		gws = append(gws, newGWClient(c.lbURL, w, load[w%len(load)]))
	}
	closeGateway := func() {
		for _, g := range gws {
			g.close()
		}
	}
	defer closeGateway()
	call := gatewayCalls(gws, targets, o.TextBytes)

	if len(o.Steps) > 0 {
		if err := r.loadPhase(ctx, bins, targets, strings.Repeat("x", o.TextBytes), call, c.probe, min(2, len(gws))); err != nil {
			return err
		}
	}
	if o.Soak > 0 {
		if err := c.soak(ctx, call, len(targets), gws); err != nil {
			return err
		}
	}

	logger.Info("checking the transcript of the gateway's calls through the balancer", "clients", len(gws))
	gt := checkGatewayTranscript(ctx, admin, gws, false)
	r.res.GatewayTranscript = &gt
	for _, p := range gt.Problems {
		r.fail("gateway transcript: %s", p)
	}
	closeGateway()
	if sr := r.res.Soak; sr != nil && len(sr.Problems) > 0 {
		// SIGQUIT makes the Go runtime write every goroutine's stack to
		// the replica's log before it exits: what grew, for the reader.
		if a := c.replica(replicaA); a != nil {
			logger.Info("replica a grew: SIGQUIT for its goroutine stacks", "log", filepath.Join(o.Out, "replica-a.log"))
			a.cmd.Process.Signal(syscall.SIGQUIT)
			<-a.exited
		}
	}

	// Shutdown: every replica stops on SIGTERM within its grace, and
	// leaves no process behind.
	var procs []int
	running := scanProcs()
	c.mu.Lock()
	for _, p := range c.reps {
		procs = append(procs, running.tree(p.pid())...)
	}
	c.mu.Unlock()
	c.stopAll()
	if left := waitGone(procs, 10*time.Second); len(left) > 0 {
		r.fail("shutdown: %d processes of the replicas still run after they stopped: %v", len(left), left)
		killAll(left)
	}
	r.stopFixtures()
	stopHealth()
	lbSrv.Close()
	c.pg.Stop()
	after := readCounters(r.own)
	r.res.Lifecycle.After = map[string]counters{"final": after}
	if procSupported && after.Children > 0 {
		r.fail("shutdown: %d child processes still exist (%d zombies)", after.Children, after.Zombies)
	}
	return nil
}

// startReplica starts replica id (again: the same id and data_dir, a new
// port) and waits until it is ready with every server.
func (c *clusterRun) startReplica(ctx context.Context, id string) (*replicaProc, error) {
	o := c.r.o
	ready := filepath.Join(o.Out, "replica-"+id+".ready")
	os.Remove(ready)
	flags := os.O_CREATE | os.O_WRONLY | os.O_APPEND // a restart goes on in the same log
	if c.replica(id) == nil {
		flags |= os.O_TRUNC
	}
	lf, err := os.OpenFile(filepath.Join(o.Out, "replica-"+id+".log"), flags, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(c.bins.Mcphost, "serve", "-config", c.cfgPath, "-replica-id", id, "-ready-file", ready)
	cmd.Env = append(os.Environ(), append(slices.Clone(c.env), "MCPHOST_DATA_DIR="+filepath.Join(c.dataRoot, id))...)
	cmd.Stdout, cmd.Stderr = lf, lf
	// A group of its own, so that killing the replica as a crash would
	// (the group, with SIGKILL) spares the tool; and it dies with the tool.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("replica %s: %w", id, err)
	}
	c.r.own.add(cmd.Process.Pid)
	p := &replicaProc{id: id, cmd: cmd, exited: make(chan struct{}), log: lf}
	go func() { cmd.Wait(); lf.Close(); close(p.exited) }()
	c.mu.Lock()
	c.reps[id] = p
	c.mu.Unlock()

	deadline := time.Now().Add(o.SettleLimit)
	for p.base == "" {
		if b, err := os.ReadFile(ready); err == nil && len(b) > 0 {
			p.base = strings.TrimSpace(string(b))
			break
		}
		select {
		case <-p.exited:
			return nil, fmt.Errorf("replica %s exited at start; see %s", id, lf.Name())
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("replica %s did not listen within %v; see %s", id, o.SettleLimit, lf.Name())
		}
	}
	for {
		rc := c.read(p, scanProcs())
		if rc.Up && rc.ServersUp == o.Servers && c.ready(p) {
			return p, nil
		}
		select {
		case <-p.exited:
			return nil, fmt.Errorf("replica %s exited at start; see %s", id, lf.Name())
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("replica %s: %d of %d servers ready after %v; see %s", id, rc.ServersUp, o.Servers, o.SettleLimit, lf.Name())
		}
	}
}

// ready says whether the replica's /readyz answers 200.
func (c *clusterRun) ready(p *replicaProc) bool {
	res, err := c.metrics.Get(p.base + healthPath)
	if err != nil {
		return false
	}
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}

// replica returns replica id's process.
func (c *clusterRun) replica(id string) *replicaProc {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reps[id]
}

// setTargets points the balancer at the replicas that run, as an endpoint
// update does.
func (c *clusterRun) setTargets() {
	c.mu.Lock()
	var us []*url.URL
	for _, id := range []string{replicaA, replicaB} {
		if p := c.reps[id]; p != nil {
			u, _ := url.Parse(p.base)
			us = append(us, u)
		}
	}
	c.mu.Unlock()
	c.lb.Set(us...)
}

// kill kills replica id as a crash would: SIGKILL to its process group.
// Its stdio servers are in groups of their own and must end by
// themselves when their stdin closes. It returns the processes that ran,
// the replica first.
func (c *clusterRun) kill(id string) []int {
	c.mu.Lock()
	p := c.reps[id]
	c.mu.Unlock()
	if p == nil {
		return nil
	}
	procs := scanProcs().tree(p.pid())
	syscall.Kill(-p.pid(), syscall.SIGKILL)
	<-p.exited
	return procs
}

// stopAll stops every replica with SIGTERM (SIGKILL after 30 s).
func (c *clusterRun) stopAll() {
	c.mu.Lock()
	reps := c.reps
	c.reps = map[string]*replicaProc{}
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range reps {
		wg.Go(func() {
			p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.exited:
			case <-time.After(30 * time.Second):
				c.r.fail("replica %s did not stop within 30 s of SIGTERM; killed", p.id)
				syscall.Kill(-p.pid(), syscall.SIGKILL)
				<-p.exited
			}
		})
	}
	wg.Wait()
}

// read reads one replica's counters: /proc for the process (its children
// and CPU time from procs), its /metrics for the runtime and the store.
func (c *clusterRun) read(p *replicaProc, procs procTable) replicaCounters {
	pid := p.pid()
	rc := replicaCounters{ID: p.id, PID: pid, RSS: procRSS(strconv.Itoa(pid)), FDs: procFDs(strconv.Itoa(pid))}
	ch := procs.children(pid, nil)
	rc.Children, rc.Zombies = ch.Children, ch.Zombies
	if cpu := procs.treeCPU(pid); cpu >= 0 {
		rc.CPUms = cpu.Milliseconds()
	}
	req, _ := http.NewRequest(http.MethodGet, p.base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+c.admin.Token)
	res, err := c.metrics.Do(req)
	if err != nil {
		return rc
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return rc
	}
	rc.Up = true
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, v, ok := metricLine(sc.Text())
		if !ok {
			continue
		}
		switch {
		case name == "go_goroutines":
			rc.Goroutines = int(v)
		case name == "go_heap_live_bytes":
			rc.HeapLive = int64(v)
		case name == "mcphost_store_round_trips_total":
			rc.RoundTrips = int64(v)
		case strings.HasPrefix(name, "mcphost_server_up{"):
			rc.ServersUp += int(v)
		case strings.HasPrefix(name, "mcphost_server_restarts_total{"):
			rc.Restarts += int(v)
		}
	}
	return rc
}

// readAll reads every running replica, a first, from one scan of /proc.
func (c *clusterRun) readAll(procs procTable) []replicaCounters {
	c.mu.Lock()
	var ps []*replicaProc
	for _, id := range []string{replicaA, replicaB} {
		if p := c.reps[id]; p != nil {
			ps = append(ps, p)
		}
	}
	c.mu.Unlock()
	rot := map[string]bool{}
	for _, u := range c.lb.InRotation() {
		rot[u.String()] = true
	}
	out := make([]replicaCounters, len(ps))
	var wg sync.WaitGroup
	for i, p := range ps {
		wg.Go(func() {
			out[i] = c.read(p, procs)
			u, _ := url.Parse(p.base)
			out[i].InRotation = rot[u.String()]
		})
	}
	wg.Wait()
	return out
}

// probe is the load curve's reading of the cluster's parts.
func (c *clusterRun) probe() probeReading {
	pr := probeReading{OK: true}
	procs := scanProcs()
	for _, rc := range c.readAll(procs) {
		if !rc.Up {
			pr.OK = false
		}
		pr.Replicas += time.Duration(rc.CPUms) * time.Millisecond
		pr.RoundTrips += rc.RoundTrips
	}
	if pid := c.pg.PID(); pid > 0 {
		pr.Postgres = procs.treeCPU(pid)
	} else {
		pr.OK = false
	}
	return pr
}

// soak runs the soak through the balancer, with the faults of -faults: at
// 40% replica b is killed, stays down -fault-down and is started again (and
// put back behind the balancer once ready); at 65% PostgreSQL stops as a
// crash would, stays down -fault-down and starts again. A call may fail
// only within a fault's window and grace.
func (c *clusterRun) soak(ctx context.Context, call callFunc, targets int, gws []*gwClient) error {
	r, o, logger := c.r, c.r.o, c.r.logger
	res := r.res.Cluster
	var (
		mu      sync.Mutex
		started time.Time
		faults  []*faultEvent
		failed  []struct {
			t0, t1 time.Time
			err    string
		}
	)
	startedCh := make(chan struct{})
	faultsDone := make(chan struct{})
	since := func(t time.Time) float64 { return t.Sub(started).Seconds() }
	go func() {
		defer close(faultsDone)
		select {
		case <-startedCh:
		case <-ctx.Done():
			return
		}
		if !o.Faults {
			return
		}
		sleepUntil := func(frac float64) bool {
			select {
			case <-time.After(time.Until(started.Add(time.Duration(frac * float64(o.Soak))))):
				return true
			case <-ctx.Done():
				return false
			}
		}
		if !sleepUntil(0.40) {
			return
		}
		f := &faultEvent{What: "replica b killed (SIGKILL), started again after " + o.FaultDown.String(), AtS: since(time.Now())}
		logger.Info("fault: killing replica b")
		procs := c.kill(replicaB) // the replica, then its stdio servers
		time.Sleep(o.FaultDown)
		if _, err := c.startReplica(ctx, replicaB); err != nil {
			r.fail("fault: replica b did not start again: %v", err)
			return
		}
		c.setTargets()
		back := c.replica(replicaB).base
		for !slices.ContainsFunc(c.lb.InRotation(), func(u *url.URL) bool { return u.String() == back }) {
			if ctx.Err() != nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		f.EndS = since(time.Now())
		logger.Info("fault: replica b is back behind the balancer", "down_s", round2(f.EndS-f.AtS))
		if left := waitGone(procs[min(1, len(procs)):], 10*time.Second); len(left) > 0 {
			res.Orphans = len(left)
			r.fail("fault: %d processes of the killed replica b (its stdio servers) still run 10 s after it died: %v", len(left), left)
			killAll(left)
		}
		mu.Lock()
		faults = append(faults, f)
		mu.Unlock()

		if !sleepUntil(0.65) {
			return
		}
		f = &faultEvent{What: "PostgreSQL stopped (immediate, as a crash), started again after " + o.FaultDown.String(), AtS: since(time.Now())}
		logger.Info("fault: stopping PostgreSQL")
		if err := c.pg.Down(); err != nil {
			r.fail("fault: stopping PostgreSQL: %v", err)
		}
		time.Sleep(o.FaultDown)
		if err := c.pg.Up(); err != nil {
			r.fail("fault: PostgreSQL did not start again: %v", err)
			return
		}
		r.own.add(c.pg.PID())
		f.EndS = since(time.Now())
		logger.Info("fault: PostgreSQL accepts connections again", "down_s", round2(f.EndS-f.AtS))
		mu.Lock()
		faults = append(faults, f)
		mu.Unlock()
	}()

	logger.Info("soak through the balancer", "duration", o.Soak, "warmup", o.SoakWarmup, "sample", o.Sample, "concurrency", o.SoakConc, "rate", o.SoakRate, "faults", o.Faults)
	sr := runSoak(ctx, soakConfig{
		duration: o.Soak, warmup: o.SoakWarmup, every: o.Sample,
		conc: o.SoakConc, rate: o.SoakRate, call: call, targets: targets, own: r.own,
		onStart: func(t time.Time) { started = t; close(startedCh) },
		onError: func(t0, t1 time.Time, err error) {
			logger.Debug("call failed", "at_s", round2(since(t0)), "err", err)
			mu.Lock()
			failed = append(failed, struct {
				t0, t1 time.Time
				err    string
			}{t0, t1, err.Error()})
			mu.Unlock()
		},
		observe: func(s *sample) {
			for _, g := range gws {
				if ownedBy(g.sessionID(), replicaA) {
					s.Sessions++
				}
			}
			s.Replicas = c.readAll(scanProcs())
			for _, rc := range s.Replicas {
				s.ServersReady += rc.ServersUp
				if rc.ID == replicaA {
					s.counters = counters{HeapInuse: -1, HeapLive: rc.HeapLive, RSS: rc.RSS, Goroutines: rc.Goroutines, FDs: rc.FDs, Children: rc.Children, Zombies: rc.Zombies}
					s.Restarts = rc.Restarts
				}
			}
		},
	}, logger)
	<-faultsDone
	r.res.Soak = &sr
	for _, p := range sr.Problems {
		r.fail("soak (replica a): %s", p)
	}

	if sr.Restarts > 0 {
		r.fail("soak: replica a's servers restarted %d times (a server died)", sr.Restarts)
	}

	// Each failed call belongs to the fault whose window (and grace) it
	// overlaps; the others fail the run.
	mu.Lock()
	defer mu.Unlock()
	for _, fl := range failed {
		a, b := since(fl.t0), since(fl.t1)
		var owner *faultEvent
		for _, f := range faults {
			if b >= f.AtS && a <= f.EndS+faultGrace.Seconds() {
				owner = f
				break
			}
		}
		if owner == nil {
			res.FailuresOutside++
			if len(res.FirstOutside) < 5 {
				res.FirstOutside = append(res.FirstOutside, fmt.Sprintf("at %.1fs: %s", a, fl.err))
			}
			continue
		}
		owner.Failed++
		if len(owner.Errors) < 3 {
			owner.Errors = append(owner.Errors, fl.err)
		}
	}
	for _, g := range gws {
		for _, id := range g.missingSessions() {
			if ownedBy(id, replicaA) {
				res.LiveSessionsLost++
			}
		}
	}
	if res.LiveSessionsLost > 0 {
		r.fail("soak: %d 2025-11-25 sessions of replica a, which ran throughout, were answered 404 (session not found)", res.LiveSessionsLost)
	}
	if res.FailuresOutside > 0 {
		r.fail("soak: %d calls failed outside the faults' windows; first: %s", res.FailuresOutside, strings.Join(res.FirstOutside, " | "))
	}
	for _, f := range faults {
		f.RecoveredS = -1
		for _, s := range sr.Samples {
			if s.T > f.EndS && s.IntervalErrors == 0 && s.Throughput > 0 {
				f.RecoveredS = s.T
				break
			}
		}
		res.Faults = append(res.Faults, *f)
		if f.RecoveredS < 0 {
			r.fail("soak: no sample without failed calls after %q", f.What)
		}
	}
	if o.Faults && len(faults) != 2 && ctx.Err() == nil {
		r.fail("soak: %d of the 2 faults took place (the soak is too short for them?)", len(faults))
	}
	// The figures recover: the last quarter after warm-up beside the first.
	var post []sample
	for _, s := range sr.Samples {
		if s.T >= o.SoakWarmup.Seconds() {
			post = append(post, s)
		}
	}
	if q := len(post) / 4; q > 0 {
		thr := func(ss []sample) (t, p []float64) {
			for _, s := range ss {
				t, p = append(t, s.Throughput), append(p, s.P50Ms)
			}
			return t, p
		}
		t0, p0 := thr(post[:q])
		t1, p1 := thr(post[len(post)-q:])
		res.BeforeThroughput, res.BeforeP50Ms = median(t0), median(p0)
		res.AfterThroughput, res.AfterP50Ms = median(t1), median(p1)
		if o.SoakRate > 0 && res.AfterThroughput < 0.9*res.BeforeThroughput {
			r.fail("soak: throughput did not recover: %.0f calls/s in the last quarter, %.0f in the first", res.AfterThroughput, res.BeforeThroughput)
		}
	}
	return ctx.Err()
}

// waitGone waits up to d for the processes pids to end and returns those
// still running.
func waitGone(pids []int, d time.Duration) []int {
	deadline := time.Now().Add(d)
	for {
		left := scanProcs().running(pids)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func killAll(pids []int) {
	for _, p := range pids {
		syscall.Kill(p, syscall.SIGKILL)
	}
}

// ownedBy says whether the 2025-11-25 session id names replica as its
// owner (cluster.OwnerOf: the id starts with the replica id and a dot).
func ownedBy(id, replica string) bool {
	owner, ok := cluster.OwnerOf(id)
	return ok && owner == replica
}
