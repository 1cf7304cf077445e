package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// callFunc makes call number i of worker w and returns the kind of server
// it went to.
type callFunc func(ctx context.Context, w, i int) (kind int, err error)

// window is what one timed run of workers did.
type window struct {
	lat     [][]time.Duration // by kind
	calls   int
	errors  int
	errs    []string // the first few
	elapsed time.Duration
	cpu     time.Duration // CPU of this process and its children over the window (cpuTime); -1 unknown
	part    probeReading  // the cluster run's parts over the window (probe after − before)
}

// probeReading is what the cluster run reads of its parts: the CPU time of
// the replicas (each with its stdio servers) and of PostgreSQL (with its
// backends), and the replicas' round trips to PostgreSQL.
type probeReading struct {
	Replicas   time.Duration
	Postgres   time.Duration
	RoundTrips int64
	OK         bool
}

func (a probeReading) sub(b probeReading) probeReading {
	if !a.OK || !b.OK {
		return probeReading{}
	}
	return probeReading{Replicas: a.Replicas - b.Replicas, Postgres: a.Postgres - b.Postgres, RoundTrips: a.RoundTrips - b.RoundTrips, OK: true}
}

// runWindow runs conc workers calling fn until d has passed, and waits for
// them to finish.
func runWindow(ctx context.Context, conc int, d time.Duration, fn callFunc, probe func() probeReading) window {
	type local struct {
		lat    [][]time.Duration
		errors int
		errs   []string
	}
	locals := make([]local, conc)
	var p0 probeReading
	if probe != nil {
		p0 = probe()
	}
	cpu0 := cpuTime()
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for w := range conc {
		wg.Go(func() {
			l := &locals[w]
			l.lat = make([][]time.Duration, len(kinds))
			for i := 0; time.Now().Before(deadline) && ctx.Err() == nil; i++ {
				t0 := time.Now()
				k, err := fn(ctx, w, i)
				dt := time.Since(t0)
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					l.errors++
					if len(l.errs) < 3 {
						l.errs = append(l.errs, err.Error())
					}
					continue
				}
				l.lat[k] = append(l.lat[k], dt)
			}
		})
	}
	wg.Wait()
	out := window{lat: make([][]time.Duration, len(kinds)), elapsed: time.Since(start), cpu: -1}
	if cpu1 := cpuTime(); cpu0 >= 0 && cpu1 >= 0 {
		out.cpu = cpu1 - cpu0
	}
	if probe != nil {
		out.part = probe().sub(p0)
	}
	for _, l := range locals {
		for k := range kinds {
			out.lat[k] = append(out.lat[k], l.lat[k]...)
			out.calls += len(l.lat[k])
		}
		out.errors += l.errors
		out.errs = append(out.errs, l.errs...)
	}
	return out
}

// side is one side of a step: direct or through the daemon's API.
type side struct {
	Calls      int                `json:"calls"`
	Errors     int                `json:"errors"`
	Throughput float64            `json:"throughput"` // calls/s
	P50Ms      float64            `json:"p50Ms"`
	P99Ms      float64            `json:"p99Ms"`
	ByKind     map[string]latency `json:"byKind"`
	FirstErrs  []string           `json:"firstErrors,omitempty"`
	// CPUPerCallUs is the CPU time per call of every process of the run
	// (this one, with the daemon and the clients, and its children, the
	// servers): on the host side minus the direct side it is what a call
	// through the daemon costs beyond the call itself. 0 when unknown.
	CPUPerCallUs float64 `json:"cpuPerCallUs"`
	// The cluster run's parts of it, per call: the replicas (with their
	// stdio servers) and PostgreSQL (with its backends); and the
	// replicas' round trips to PostgreSQL (the append path).
	ReplicasCPUPerCallUs float64 `json:"replicasCpuPerCallUs,omitempty"`
	PostgresCPUPerCallUs float64 `json:"postgresCpuPerCallUs,omitempty"`
	RoundTripsPerCall    float64 `json:"roundTripsPerCall,omitempty"`
}

// latency is a per-kind part of a side.
type latency struct {
	Calls int     `json:"calls"`
	P50Ms float64 `json:"p50Ms"`
	P99Ms float64 `json:"p99Ms"`
}

// step is one concurrency level of the load curve.
type step struct {
	Concurrency int  `json:"concurrency"`
	Direct      side `json:"direct"`
	Host        side `json:"host"`
	// Ratios of the host side to the direct side of this step.
	ThroughputXDirect float64 `json:"throughputXDirect"`
	P50XDirect        float64 `json:"p50XDirect"`
	P99XDirect        float64 `json:"p99XDirect"`
}

// accumulate merges windows into a side.
func accumulate(ws []window) side {
	var (
		all     []time.Duration
		byKind  = make([][]time.Duration, len(kinds))
		elapsed time.Duration
		cpu     time.Duration
		part    = probeReading{OK: true}
		s       = side{ByKind: map[string]latency{}}
	)
	for _, w := range ws {
		for k := range kinds {
			byKind[k] = append(byKind[k], w.lat[k]...)
			all = append(all, w.lat[k]...)
		}
		s.Calls += w.calls
		s.Errors += w.errors
		s.FirstErrs = append(s.FirstErrs, w.errs...)
		elapsed += w.elapsed
		if w.cpu < 0 || cpu < 0 {
			cpu = -1
		} else {
			cpu += w.cpu
		}
		if part.OK && w.part.OK {
			part = probeReading{Replicas: part.Replicas + w.part.Replicas, Postgres: part.Postgres + w.part.Postgres,
				RoundTrips: part.RoundTrips + w.part.RoundTrips, OK: true}
		} else {
			part.OK = false
		}
	}
	if part.OK && len(ws) > 0 && s.Calls > 0 {
		s.ReplicasCPUPerCallUs = float64(part.Replicas.Microseconds()) / float64(s.Calls)
		s.PostgresCPUPerCallUs = float64(part.Postgres.Microseconds()) / float64(s.Calls)
		s.RoundTripsPerCall = float64(part.RoundTrips) / float64(s.Calls)
	}
	if cpu > 0 && s.Calls > 0 {
		s.CPUPerCallUs = float64(cpu.Microseconds()) / float64(s.Calls)
	}
	if len(s.FirstErrs) > 5 {
		s.FirstErrs = s.FirstErrs[:5]
	}
	s.Throughput = ratio(float64(s.Calls), elapsed.Seconds())
	s.P50Ms, s.P99Ms = msPercentiles(all)
	for k, ds := range byKind {
		if len(ds) == 0 {
			continue
		}
		p50, p99 := msPercentiles(ds)
		s.ByKind[kinds[k].Name] = latency{Calls: len(ds), P50Ms: p50, P99Ms: p99}
	}
	return s
}

// loadConfig is what the load curve needs.
type loadConfig struct {
	steps    []int
	stepTime time.Duration
	rounds   int
	direct   callFunc
	host     callFunc
	probe    func() probeReading // the cluster run's; nil for a single daemon
}

// runLoad measures every concurrency step: rounds of one direct window and
// one host window each, the order swapped every round so that drift hits
// both sides alike.
func runLoad(ctx context.Context, lc loadConfig, logger *slog.Logger) []step {
	var out []step
	for _, c := range lc.steps {
		if ctx.Err() != nil {
			break
		}
		var dws, hws []window
		for r := range lc.rounds {
			order := []bool{false, true} // false: direct
			if r%2 == 1 {
				slices.Reverse(order)
			}
			for _, isHost := range order {
				if isHost {
					hws = append(hws, runWindow(ctx, c, lc.stepTime, lc.host, lc.probe))
				} else {
					dws = append(dws, runWindow(ctx, c, lc.stepTime, lc.direct, lc.probe))
				}
			}
		}
		st := step{Concurrency: c, Direct: accumulate(dws), Host: accumulate(hws)}
		st.ThroughputXDirect = ratio(st.Host.Throughput, st.Direct.Throughput)
		st.P50XDirect = ratio(st.Host.P50Ms, st.Direct.P50Ms)
		st.P99XDirect = ratio(st.Host.P99Ms, st.Direct.P99Ms)
		logger.Info("load step",
			"concurrency", c,
			"host_calls_per_s", round1(st.Host.Throughput), "host_p50_ms", round3(st.Host.P50Ms), "host_p99_ms", round3(st.Host.P99Ms),
			"direct_calls_per_s", round1(st.Direct.Throughput), "direct_p50_ms", round3(st.Direct.P50Ms), "direct_p99_ms", round3(st.Direct.P99Ms),
			"p50_x_direct", round2(st.P50XDirect), "errors", st.Host.Errors+st.Direct.Errors)
		out = append(out, st)
	}
	return out
}

// kneeInfo says where a side's latency starts to outgrow its throughput,
// and where its throughput peaked.
type kneeInfo struct {
	Concurrency      int     `json:"concurrency"` // 0: none within the steps
	From             int     `json:"from,omitempty"`
	ThroughputFactor float64 `json:"throughputFactor,omitempty"`
	P50Factor        float64 `json:"p50Factor,omitempty"`
	PeakThroughput   float64 `json:"peakThroughput"`
	PeakConcurrency  int     `json:"peakConcurrency"`
}

// kneeOf finds the knee of the host side (host) or the direct side.
func kneeOf(steps []step, host bool) kneeInfo {
	ks := make([]kneeStep, len(steps))
	var ki kneeInfo
	for i, s := range steps {
		sd := s.Direct
		if host {
			sd = s.Host
		}
		ks[i] = kneeStep{Concurrency: s.Concurrency, Throughput: sd.Throughput, P50: sd.P50Ms}
		if sd.Throughput > ki.PeakThroughput {
			ki.PeakThroughput, ki.PeakConcurrency = sd.Throughput, s.Concurrency
		}
	}
	if i := knee(ks); i > 0 {
		ki.Concurrency, ki.From = ks[i].Concurrency, ks[i-1].Concurrency
		ki.ThroughputFactor = ks[i].Throughput / ks[i-1].Throughput
		ki.P50Factor = ks[i].P50 / ks[i-1].P50
	}
	return ki
}

func (k kneeInfo) String() string {
	if k.Concurrency == 0 {
		return fmt.Sprintf("none within the steps (peak %.0f calls/s at %d)", k.PeakThroughput, k.PeakConcurrency)
	}
	return fmt.Sprintf("at %d (from %d: throughput ×%.2f, p50 ×%.2f); peak %.0f calls/s at %d",
		k.Concurrency, k.From, k.ThroughputFactor, k.P50Factor, k.PeakThroughput, k.PeakConcurrency)
}

func round1(x float64) float64 { return float64(int64(x*10+0.5)) / 10 }
func round2(x float64) float64 { return float64(int64(x*100+0.5)) / 100 }
func round3(x float64) float64 { return float64(int64(x*1000+0.5)) / 1000 }
