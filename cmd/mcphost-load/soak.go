package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/host"
)

// counters is one reading of the process's resources.
type counters struct {
	HeapInuse  int64 `json:"heapInuseBytes"` // runtime.MemStats.HeapInuse
	HeapLive   int64 `json:"heapLiveBytes"`  // /gc/heap/live:bytes, as of the last GC
	RSS        int64 `json:"rssBytes"`       // VmRSS, SQLite's memory included
	Goroutines int   `json:"goroutines"`
	FDs        int   `json:"fds"`      // /proc/self/fd
	Children   int   `json:"children"` // the daemon's child processes (/proc)
	Zombies    int   `json:"zombies"`
}

// readCounters reads the counters now.
func readCounters(own *owned) counters {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	c := counters{
		HeapInuse:  int64(m.HeapInuse),
		RSS:        rssBytes(),
		Goroutines: runtime.NumGoroutine(),
		FDs:        countFDs(),
	}
	if live[0].Value.Kind() == metrics.KindUint64 {
		c.HeapLive = int64(live[0].Value.Uint64())
	}
	ch := children(own.has)
	c.Children, c.Zombies = ch.Children, ch.Zombies
	return c
}

// sample is one point of the soak curve.
type sample struct {
	T float64 `json:"t"` // seconds since the soak started
	counters
	Calls        int64   `json:"calls"`  // acknowledged so far
	Errors       int64   `json:"errors"` // failed so far
	Throughput   float64 `json:"throughput"`
	P50Ms        float64 `json:"p50Ms"`
	P99Ms        float64 `json:"p99Ms"`
	ServersReady int     `json:"serversReady"`
	Restarts     int     `json:"restarts"`
	// Replicas are the cluster run's replicas at this sample; the
	// counters above are then those of the first (the one never killed).
	Replicas []replicaCounters `json:"replicas,omitempty"`
	// IntervalErrors is the calls that failed since the last sample.
	IntervalErrors int64 `json:"intervalErrors"`
	// Sessions is the cluster run's 2025-11-25 gateway sessions replica a
	// owns: a client whose session died with replica b connects again,
	// maybe to a, which then holds one session more (a few goroutines)
	// without leaking anything.
	Sessions int `json:"sessions,omitempty"`
}

// soakConfig is what the soak needs.
type soakConfig struct {
	duration, warmup, every time.Duration
	conc                    int
	rate                    float64  // calls/s for all workers together; 0: unpaced
	call                    callFunc // call i of worker w goes to target (w+i) % targets
	targets                 int
	h                       *host.Host // the daemon in this process; nil in the cluster run
	own                     *owned
	// observe, when set, reads the counters of a sample instead of this
	// process and h (the cluster run's replicas).
	observe func(*sample)
	// onStart hears the time the soak's clock started (after priming).
	onStart func(time.Time)
	// onError hears every failed call with when it started and ended.
	onError func(start, end time.Time, err error)
}

// soakResult is the soak curve and its verdict.
type soakResult struct {
	DurationS float64  `json:"durationS"`
	WarmupS   float64  `json:"warmupS"`
	Calls     int64    `json:"calls"`
	Errors    int64    `json:"errors"`
	FirstErrs []string `json:"firstErrors,omitempty"`
	Samples   []sample `json:"samples"`
	Trends    []trend  `json:"trends"`
	Restarts  int      `json:"restarts"`
	Problems  []string `json:"problems,omitempty"`
	Notes     []string `json:"notes,omitempty"`
}

// runSoak calls at a steady pace for cfg.duration and samples the counters
// every cfg.every. Each sample is taken between calls: the sampler waits
// for the running calls to return and holds new ones back while it reads,
// so in-flight work does not blur the counts.
func runSoak(ctx context.Context, cfg soakConfig, logger *slog.Logger) soakResult {
	if err := prime(ctx, cfg); err != nil {
		return soakResult{Problems: []string{"priming the connections: " + err.Error()}}
	}
	var (
		gate    sync.RWMutex
		latMu   sync.Mutex
		lats    []time.Duration
		calls   atomic.Int64
		errs    atomic.Int64
		errMu   sync.Mutex
		first   []string
		res     = soakResult{DurationS: cfg.duration.Seconds(), WarmupS: cfg.warmup.Seconds()}
		started = time.Now()
	)
	if cfg.onStart != nil {
		cfg.onStart(started)
	}
	// sctx ends the soak; the calls themselves run under ctx, so that the
	// last call of each worker completes (and is acknowledged) rather than
	// being cancelled half-way and recorded behind the tool's back.
	sctx, cancel := context.WithDeadline(ctx, started.Add(cfg.duration))
	defer cancel()
	var pace <-chan time.Time
	if cfg.rate > 0 {
		t := time.NewTicker(time.Duration(float64(time.Second) / cfg.rate))
		defer t.Stop()
		pace = t.C
	}
	var wg sync.WaitGroup
	for w := range cfg.conc {
		wg.Go(func() {
			for i := 0; ; i++ {
				if pace != nil {
					select {
					case <-pace:
					case <-sctx.Done():
						return
					}
				}
				if sctx.Err() != nil {
					return
				}
				gate.RLock()
				t0 := time.Now()
				_, err := cfg.call(ctx, w, i)
				dt := time.Since(t0)
				gate.RUnlock()
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					if cfg.onError != nil {
						cfg.onError(t0, t0.Add(dt), err)
					}
					errs.Add(1)
					errMu.Lock()
					if len(first) < 5 {
						first = append(first, err.Error())
					}
					errMu.Unlock()
					continue
				}
				calls.Add(1)
				latMu.Lock()
				lats = append(lats, dt)
				latMu.Unlock()
			}
		})
	}

	tick := time.NewTicker(cfg.every)
	defer tick.Stop()
	last, lastErrs := started, int64(0)
	for done := false; !done; {
		select {
		case <-tick.C:
		case <-sctx.Done():
			done = true
		}
		if done {
			wg.Wait() // the final sample sees no call running
		} else {
			gate.Lock()
		}
		now := time.Now()
		var s sample
		if cfg.observe != nil {
			cfg.observe(&s)
		} else {
			s.counters = readCounters(cfg.own)
			for _, st := range cfg.h.Servers() {
				if st.State == host.StateReady {
					s.ServersReady++
				}
				s.Restarts += st.Restarts
			}
		}
		if !done {
			gate.Unlock()
		}
		latMu.Lock()
		window := lats
		lats = nil
		latMu.Unlock()
		if done && now.Sub(last) < cfg.every/2 {
			break // the deadline came just after a sample: too short an interval to say anything
		}
		s.T, s.Calls, s.Errors = now.Sub(started).Seconds(), calls.Load(), errs.Load()
		s.Throughput = ratio(float64(len(window)), now.Sub(last).Seconds())
		s.IntervalErrors = s.Errors - lastErrs
		last, lastErrs = now, s.Errors
		s.P50Ms, s.P99Ms = msPercentiles(window)
		res.Samples = append(res.Samples, s)
		logger.Info("soak sample", "t", fmt.Sprintf("%.0fs", s.T), "calls", s.Calls, "errors", s.Errors,
			"calls_per_s", round1(s.Throughput), "p50_ms", round3(s.P50Ms), "p99_ms", round3(s.P99Ms),
			"heap_live_mib", round2(mib(s.HeapLive)), "heap_inuse_mib", round2(mib(s.HeapInuse)), "rss_mib", round2(mib(s.RSS)),
			"goroutines", s.Goroutines, "fds", s.FDs, "children", s.Children, "servers_ready", s.ServersReady)
	}
	res.Calls, res.Errors, res.FirstErrs = calls.Load(), errs.Load(), first
	if n := len(res.Samples); n > 0 {
		res.Restarts = res.Samples[n-1].Restarts - res.Samples[0].Restarts
	}
	analyse(&res, cfg.warmup)
	return res
}

// prime opens the connections a steady soak uses before it starts, so that
// pools filling up slowly (two calls overlap for the first time minutes in)
// are not mistaken for growth: all workers call at once, so the API
// client's pool holds one connection per worker, then each target gets two
// calls at once, so the daemon's pool to a remote server holds the two idle
// connections it keeps. Three rounds each.
func prime(ctx context.Context, cfg soakConfig) error {
	burst := func(calls [][2]int) error {
		start := make(chan struct{})
		errs := make([]error, len(calls))
		var wg sync.WaitGroup
		for j, c := range calls {
			wg.Go(func() {
				<-start
				_, errs[j] = cfg.call(ctx, c[0], c[1])
			})
		}
		close(start)
		wg.Wait()
		return errors.Join(errs...)
	}
	var workers, pairs [][2]int
	for w := range cfg.conc {
		workers = append(workers, [2]int{w, 0})
	}
	for t := range cfg.targets {
		// Worker 0's call t and worker 1's call t-1 both go to target t.
		second := [2]int{0, t}
		if cfg.conc > 1 {
			second = [2]int{1, (t - 1 + cfg.targets) % cfg.targets}
		}
		pairs = append(pairs, [2]int{0, t}, second)
	}
	for range 3 {
		if err := burst(workers); err != nil {
			return err
		}
		if err := burst(pairs); err != nil {
			return err
		}
	}
	return nil
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// trend compares one counter after warm-up with its value at the end.
type trend struct {
	Metric string `json:"metric"`
	// Baseline and End are medians of the first and last quarter of the
	// samples taken after warm-up.
	Baseline     float64 `json:"baseline"`
	End          float64 `json:"end"`
	Growth       float64 `json:"growth"`
	Ratio        float64 `json:"ratio"`
	SlopePerHour float64 `json:"slopePerHour"` // least squares over the samples after warm-up
	// Tolerance is the growth allowed; a negative one means reported only.
	Tolerance float64 `json:"tolerance"`
	OK        bool    `json:"ok"`
	Unit      string  `json:"unit"`
}

// Tolerances of the soak verdict (growth after warm-up, end vs baseline).
const (
	goroutineSlack  = 5        // or 2%, whichever is larger
	fdSlack         = 4        // or 2%
	heapGrowthRatio = 1.5      // heap may grow by half …
	heapGrowthFloor = 32 << 20 // … or by 32 MiB, before it counts
)

// goroutinesPerSession bounds what one more 2025-11-25 gateway session
// holds on the replica that owns it: go-sdk's read loop and the standalone
// stream's handler and connection.
const goroutinesPerSession = 4

// sessions is the median of the samples' Sessions.
func sessions(ss []sample) float64 {
	v := make([]float64, len(ss))
	for i, s := range ss {
		v[i] = float64(s.Sessions)
	}
	return median(v)
}

// analyse fills res.Trends and res.Problems from the samples after warm-up.
func analyse(res *soakResult, warmup time.Duration) {
	var post []sample
	for _, s := range res.Samples {
		if s.T >= warmup.Seconds() {
			post = append(post, s)
		}
	}
	if len(post) < 4 {
		res.Notes = append(res.Notes, fmt.Sprintf("only %d samples after warm-up; the growth verdicts need at least 4 (raise -soak or lower -sample)", len(post)))
		if len(post) < 2 {
			return
		}
	}
	q := max(1, len(post)/4)
	x := make([]float64, len(post))
	for i, s := range post {
		x[i] = s.T / 3600
	}
	mk := func(name, unit string, get func(sample) float64, tol func(base float64) float64) trend {
		ys := make([]float64, len(post))
		for i, s := range post {
			ys[i] = get(s)
		}
		t := trend{Metric: name, Unit: unit, Baseline: median(ys[:q]), End: median(ys[len(ys)-q:])}
		t.Growth = t.End - t.Baseline
		t.Ratio = ratio(t.End, t.Baseline)
		t.SlopePerHour = slope(x, ys)
		t.Tolerance = tol(t.Baseline)
		t.OK = t.Tolerance < 0 || t.Growth <= t.Tolerance
		return t
	}
	// A counter the run could not read (the replicas' in-use heap) is -1.
	known := func(get func(sample) float64) bool { return get(post[0]) >= 0 }
	pct := func(slack, p float64) func(float64) float64 {
		return func(b float64) float64 { return math.Max(slack, b*p) }
	}
	res.Trends = []trend{
		mk("heap_live", "MiB", func(s sample) float64 { return mib(s.HeapLive) }, func(b float64) float64 {
			return math.Max(b*(heapGrowthRatio-1), mib(heapGrowthFloor))
		}),
	}
	if inuse := func(s sample) float64 { return mib(s.HeapInuse) }; known(inuse) {
		res.Trends = append(res.Trends, mk("heap_inuse", "MiB", inuse, func(float64) float64 { return -1 }))
	}
	res.Trends = append(res.Trends,
		mk("rss", "MiB", func(s sample) float64 { return mib(s.RSS) }, func(float64) float64 { return -1 }),
		mk("goroutines", "", func(s sample) float64 { return float64(s.Goroutines) }, func(b float64) float64 {
			return pct(goroutineSlack, 0.02)(b) + goroutinesPerSession*math.Max(0, sessions(post[len(post)-q:])-sessions(post[:q]))
		}),
	)
	if procSupported {
		res.Trends = append(res.Trends,
			mk("fds", "", func(s sample) float64 { return float64(s.FDs) }, pct(fdSlack, 0.02)),
			mk("children", "", func(s sample) float64 { return float64(s.Children) }, func(float64) float64 { return 0 }),
			mk("zombies", "", func(s sample) float64 { return float64(s.Zombies) }, func(float64) float64 { return 0 }),
		)
	} else {
		res.Notes = append(res.Notes, "no /proc: file descriptors and child processes were not counted")
	}
	for _, t := range res.Trends {
		if !t.OK {
			res.Problems = append(res.Problems, fmt.Sprintf("%s grew after warm-up: %.4g → %.4g %s (+%.4g, tolerance %.4g; slope %+.4g/h)",
				t.Metric, t.Baseline, t.End, t.Unit, t.Growth, t.Tolerance, t.SlopePerHour))
		}
	}
}
