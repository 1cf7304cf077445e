package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/mcphost/mcphost/host/config"
)

// startupPoint is one size of the start-up curve: n stdio servers started
// cold (an empty data_dir: no era verdicts, the plugin compiled) and then
// warm (the same data_dir again), and the daemon's memory with every one of
// them ready and idle.
type startupPoint struct {
	Servers int     `json:"servers"`
	Cold    startup `json:"cold"`
	Warm    startup `json:"warm"`
	// HeapKB is the live heap the cold daemon holds, all servers ready and
	// idle, above what the process held before it started (after a GC);
	// RSSKB the same of the resident set. They include what a daemon holds
	// whatever its servers (the compiled plugin, the store): the cost of
	// one more server is the slope between two sizes (marginal).
	HeapKB float64 `json:"heapKB"`
	RSSKB  float64 `json:"rssKB"`
	// Children is the server processes the daemon ran (one per server).
	Children int `json:"children"`
}

// stdioPlan names n servers of the stdio kinds in turn.
func stdioPlan(n int) []serverPlan {
	var stdio []int
	for k, kd := range kinds {
		if !kd.HTTP {
			stdio = append(stdio, k)
		}
	}
	out := make([]serverPlan, n)
	for i := range out {
		k := stdio[i%len(stdio)]
		out[i] = serverPlan{Name: fmt.Sprintf("%s-%03d", kinds[k].Name, i), Kind: k}
	}
	return out
}

// startupCurve starts a daemon of each size of -startup-curve, cold and
// warm, each in a data_dir of its own under -out, and checks after each
// that it left nothing behind.
func (r *runner) startupCurve(ctx context.Context, bins binaries, principals []principalPlan) error {
	for _, n := range r.o.StartupCurve {
		plan := stdioPlan(n)
		dir := filepath.Join(r.o.Out, fmt.Sprintf("startup-%d", n))
		dataDir := filepath.Join(dir, "data")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		cfgPath := filepath.Join(dir, "config.hcl")
		if err := os.WriteFile(cfgPath, []byte(configHCL(dataDir, plan, principals, bins, r.o.Plugin, r.o.PluginTime, r.o.Policies)), 0o600); err != nil {
			return err
		}
		cfg, diags := config.LoadFile(cfgPath, config.Options{})
		if diags.HasErrors() {
			return fmt.Errorf("the generated config %s does not load: %v", cfgPath, diags)
		}
		p := startupPoint{Servers: n}
		for _, label := range []string{"cold", "warm"} {
			before := settledCounters(r.own)
			r.logger.Info("start-up curve: starting the daemon", "servers", n, "era_cache", label)
			d, su, err := startDaemon(ctx, cfg, label, filepath.Join(dir, "daemon-"+label+".log"), plan, r.o.SettleLimit)
			if err != nil {
				return fmt.Errorf("start-up curve, %d servers (%s): %w", n, label, err)
			}
			for _, pr := range su.Problems {
				r.fail("start-up curve, %d servers (%s): %s", n, label, pr)
			}
			if su.Ready < su.Servers {
				r.fail("start-up curve, %d servers (%s): %d of %d ready; see %s", n, label, su.Ready, su.Servers, filepath.Join(dir, "daemon-"+label+".log"))
			}
			if label == "cold" {
				p.Cold = su
				after := settledCounters(r.own)
				p.HeapKB = float64(after.HeapLive-before.HeapLive) / 1024
				p.RSSKB = float64(after.RSS-before.RSS) / 1024
				p.Children = after.Children
			} else {
				p.Warm = su
			}
			r.logger.Info("start-up curve: daemon ready", "servers", n, "era_cache", label, "ready", su.Ready, "total_ms", round1(su.TotalMs))
			r.shutdown(d, fmt.Sprintf("startup-%d-%s", n, label), false)
		}
		if !r.o.KeepData {
			os.RemoveAll(dataDir)
		}
		r.res.StartupCurve = append(r.res.StartupCurve, p)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

// settledCounters reads the counters after two GCs and a moment for
// finalizers, so the live heap is what is held.
func settledCounters(own *owned) counters {
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	runtime.GC()
	return readCounters(own)
}

// marginal returns the heap and RSS one more idle server costs between
// points a and b (KiB per server; b the larger).
func marginal(a, b startupPoint) (heapKB, rssKB float64) {
	d := float64(b.Servers - a.Servers)
	return (b.HeapKB - a.HeapKB) / d, (b.RSSKB - a.RSSKB) / d
}
