package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcphost/mcphost/internal/sysinfo"
)

// results is everything one run measured; it is written as results.json.
type results struct {
	Tool     string         `json:"tool"`
	Pass     bool           `json:"pass"`
	Failures []string       `json:"failures"`
	Command  string         `json:"command"`
	Options  map[string]any `json:"options"`
	Machine  machine        `json:"machine"`
	Started  time.Time      `json:"started"`
	Finished time.Time      `json:"finished"`
	Servers  serversInfo    `json:"servers"`
	Startup  []startup      `json:"startup"`
	// StartupCurve is the start-up curve (curve.go), smallest first.
	StartupCurve []startupPoint   `json:"startupCurve,omitempty"`
	Sanity       sanityInfo       `json:"sanity"`
	Load         *loadResult      `json:"load,omitempty"`
	Soak         *soakResult      `json:"soak,omitempty"`
	Transcript   *transcriptCheck `json:"transcript,omitempty"`
	// GatewayTranscript is the read-back of the gateway door's calls.
	GatewayTranscript *gatewayTranscript `json:"gatewayTranscript,omitempty"`
	// Cluster is the cluster run's (-cluster).
	Cluster   *clusterResult `json:"cluster,omitempty"`
	Lifecycle lifecycle      `json:"lifecycle"`
}

type sanityInfo struct {
	Policy        string   `json:"policy,omitempty"`
	Plugin        string   `json:"plugin,omitempty"`
	GatewayPolicy string   `json:"gatewayPolicy,omitempty"`
	GatewayPlugin []string `json:"gatewayPlugin,omitempty"`
}

type loadResult struct {
	Targets    int      `json:"targets"`
	TextBytes  int      `json:"textBytes"`
	Steps      []step   `json:"steps"`
	KneeHost   kneeInfo `json:"kneeHost"`
	KneeDirect kneeInfo `json:"kneeDirect"`
}

type serversInfo struct {
	Total   int            `json:"total"`
	ByKind  map[string]int `json:"byKind"`
	Targets []string       `json:"targets"`
}

func describeServers(plan []serverPlan, targets int) serversInfo {
	si := serversInfo{Total: len(plan), ByKind: map[string]int{}}
	for i, s := range plan {
		si.ByKind[kinds[s.Kind].Name]++
		if i < targets {
			si.Targets = append(si.Targets, s.Name)
		}
	}
	return si
}

// machine describes where the run ran.
type machine struct {
	OS            string            `json:"os"`
	Arch          string            `json:"arch"`
	CPUs          int               `json:"cpus"`
	GOMAXPROCS    int               `json:"gomaxprocs"`
	CPUModel      string            `json:"cpuModel,omitempty"`
	MemTotalBytes int64             `json:"memTotalBytes,omitempty"`
	Kernel        string            `json:"kernel,omitempty"`
	Go            string            `json:"go"`
	Modules       map[string]string `json:"modules,omitempty"`
	Commit        string            `json:"commit,omitempty"`
	LoadAvgStart  string            `json:"loadAvgStart,omitempty"`
	LoadAvgEnd    string            `json:"loadAvgEnd,omitempty"`
}

// reportedModules are the dependencies whose versions a figure depends on.
var reportedModules = []string{
	"github.com/modelcontextprotocol/go-sdk",
	"github.com/tetratelabs/wazero",
	"github.com/extism/go-sdk",
	"cel.dev/cel-go",
	"github.com/gin-gonic/gin",
	"modernc.org/sqlite",
}

func describeMachine() machine {
	m := machine{
		OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		CPUModel: sysinfo.CPUModel(), Kernel: sysinfo.Kernel(), Go: runtime.Version(), LoadAvgStart: sysinfo.LoadAvg(),
	}
	if t := sysinfo.MemTotal(); t > 0 {
		m.MemTotalBytes = t
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		m.Modules = map[string]string{}
		for _, d := range bi.Deps {
			if slices.Contains(reportedModules, d.Path) {
				m.Modules[d.Path] = d.Version
			}
		}
	}
	return m
}

// commitOf returns the short commit of the repository at root, with
// "+dirty" when tracked files have changed; "" when unknown.
func commitOf(root string) string {
	if root == "" {
		return ""
	}
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		c += "+dirty"
	}
	return c
}

// view is o as it goes into results.json: durations as text.
func (o options) view() map[string]any {
	return map[string]any{
		"door": o.Door, "cluster": o.Cluster, "faults": o.Faults, "faultDown": o.FaultDown.String(), "servers": o.Servers, "principals": o.Principals, "targets": o.Targets, "steps": o.Steps,
		"stepTime": o.StepTime.String(), "rounds": o.Rounds,
		"soak": o.Soak.String(), "soakWarmup": o.SoakWarmup.String(), "sample": o.Sample.String(),
		"soakConcurrency": o.SoakConc, "soakRate": o.SoakRate,
		"plugin": o.Plugin, "pluginTimeout": o.PluginTime.String(), "policies": o.Policies, "textBytes": o.TextBytes, "warmStart": o.WarmStart,
		"out": o.Out, "binDir": o.BinDir, "short": o.Short, "profile": o.Profile,
	}
}

// write stores results.json, load.csv, soak.csv and summary.txt in dir.
func (res *results) write(dir, summary string) error {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.txt"), []byte(summary), 0o644); err != nil {
		return err
	}
	if res.Load != nil {
		if err := writeCSV(filepath.Join(dir, "load.csv"), res.loadRows()); err != nil {
			return err
		}
	}
	if res.Soak != nil {
		if err := writeCSV(filepath.Join(dir, "soak.csv"), res.soakRows()); err != nil {
			return err
		}
	}
	return nil
}

func writeCSV(path string, rows [][]string) error {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.WriteAll(rows); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

func f(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }

// loadRows is the load curve: per step and side one row for all calls and
// one per kind of server; the ratios are on the host rows for all calls.
func (res *results) loadRows() [][]string {
	rows := [][]string{{"concurrency", "side", "kind", "calls", "errors", "throughput_per_s", "p50_ms", "p99_ms", "throughput_x_direct", "p50_x_direct", "p99_x_direct"}}
	for _, s := range res.Load.Steps {
		for _, sd := range []struct {
			name string
			v    side
		}{{"direct", s.Direct}, {"host", s.Host}} {
			row := []string{strconv.Itoa(s.Concurrency), sd.name, "all", strconv.Itoa(sd.v.Calls), strconv.Itoa(sd.v.Errors),
				f(sd.v.Throughput, 1), f(sd.v.P50Ms, 4), f(sd.v.P99Ms, 4), "", "", ""}
			if sd.name == "host" {
				row[8], row[9], row[10] = f(s.ThroughputXDirect, 3), f(s.P50XDirect, 3), f(s.P99XDirect, 3)
			}
			rows = append(rows, row)
			for _, k := range kinds {
				if l, ok := sd.v.ByKind[k.Name]; ok {
					rows = append(rows, []string{strconv.Itoa(s.Concurrency), sd.name, k.Name, strconv.Itoa(l.Calls), "", "", f(l.P50Ms, 4), f(l.P99Ms, 4), "", "", ""})
				}
			}
		}
	}
	return rows
}

func (res *results) soakRows() [][]string {
	rows := [][]string{{"t_s", "calls", "errors", "throughput_per_s", "p50_ms", "p99_ms", "heap_live_bytes", "heap_inuse_bytes", "rss_bytes", "goroutines", "fds", "children", "zombies", "servers_ready", "restarts"}}
	for _, s := range res.Soak.Samples {
		rows = append(rows, []string{f(s.T, 2), strconv.FormatInt(s.Calls, 10), strconv.FormatInt(s.Errors, 10), f(s.Throughput, 1),
			f(s.P50Ms, 4), f(s.P99Ms, 4), strconv.FormatInt(s.HeapLive, 10), strconv.FormatInt(s.HeapInuse, 10), strconv.FormatInt(s.RSS, 10),
			strconv.Itoa(s.Goroutines), strconv.Itoa(s.FDs), strconv.Itoa(s.Children), strconv.Itoa(s.Zombies),
			strconv.Itoa(s.ServersReady), strconv.Itoa(s.Restarts)})
	}
	return rows
}

// summary is the human report.
func (res *results) summary() string {
	var b strings.Builder
	verdict := "PASS"
	if !res.Pass {
		verdict = "FAIL"
	}
	fmt.Fprintf(&b, "mcphost-load: %s\n", verdict)
	for _, f := range res.Failures {
		fmt.Fprintf(&b, "  FAIL: %s\n", f)
	}
	fmt.Fprintf(&b, "command: %s\n", res.Command)
	m := res.Machine
	fmt.Fprintf(&b, "machine: %s/%s, %d CPUs (GOMAXPROCS %d)", m.OS, m.Arch, m.CPUs, m.GOMAXPROCS)
	if m.CPUModel != "" {
		fmt.Fprintf(&b, ", %s", m.CPUModel)
	}
	if m.MemTotalBytes > 0 {
		fmt.Fprintf(&b, ", %.0f GiB", float64(m.MemTotalBytes)/(1<<30))
	}
	if m.Kernel != "" {
		fmt.Fprintf(&b, ", Linux %s", m.Kernel)
	}
	fmt.Fprintf(&b, "; %s", m.Go)
	for _, p := range reportedModules {
		if v, ok := m.Modules[p]; ok {
			fmt.Fprintf(&b, ", %s %s", strings.TrimPrefix(p, "github.com/"), v)
		}
	}
	fmt.Fprintf(&b, "\ncommit %s; load average %s at the start, %s at the end; %s\n", orDash(m.Commit), orDash(m.LoadAvgStart), orDash(m.LoadAvgEnd),
		res.Finished.Sub(res.Started).Round(time.Second))

	kindNames := make([]string, 0, len(res.Servers.ByKind))
	for _, k := range kinds {
		if n := res.Servers.ByKind[k.Name]; n > 0 {
			kindNames = append(kindNames, fmt.Sprintf("%d %s", n, k.Name))
		}
	}
	fmt.Fprintf(&b, "\nStart-up: %d servers (%s)\n", res.Servers.Total, strings.Join(kindNames, ", "))
	for _, su := range res.Startup {
		fmt.Fprintf(&b, "  %s era cache: all %d ready in %.0f ms (store open %.0f ms, host.New %.0f ms with the plugin, connect %.0f ms); per server p50 %.0f ms, max %.0f ms; eras %s\n",
			su.Label, su.Ready, su.TotalMs, su.StoreOpenMs, su.HostNewMs, su.ConnectMs, su.ServerP50Ms, su.ServerMaxMs, erasText(su.Eras))
		var parts []string
		for _, k := range kinds {
			if ks, ok := su.ByKind[k.Name]; ok {
				parts = append(parts, fmt.Sprintf("%s p50 %.0f / max %.0f", k.Name, ks.P50Ms, ks.MaxMs))
			}
		}
		fmt.Fprintf(&b, "    by kind (ms): %s\n", strings.Join(parts, "; "))
	}
	if len(res.StartupCurve) > 0 {
		fmt.Fprintf(&b, "\nStart-up curve: stdio servers, all ready (cold / warm era cache), the daemon's memory per idle server\n")
		for i, p := range res.StartupCurve {
			fmt.Fprintf(&b, "  %4d servers: %.0f / %.0f ms (per server p50 %.0f / %.0f ms); live heap %.1f MiB, RSS %.1f MiB above the process before; %d processes",
				p.Servers, p.Cold.TotalMs, p.Warm.TotalMs, p.Cold.ServerP50Ms, p.Warm.ServerP50Ms, p.HeapKB/1024, p.RSSKB/1024, p.Children)
			if i > 0 {
				h, r := marginal(res.StartupCurve[i-1], p)
				fmt.Fprintf(&b, "; one more idle server: %.0f KiB heap, %.0f KiB RSS", h, r)
			}
			fmt.Fprintln(&b)
		}
	}
	if res.Sanity.Policy != "" || res.Sanity.Plugin != "" {
		fmt.Fprintf(&b, "Sanity: %s; %s\n", orDash(res.Sanity.Policy), orDash(res.Sanity.Plugin))
	}
	if res.Sanity.GatewayPolicy != "" || len(res.Sanity.GatewayPlugin) > 0 {
		fmt.Fprintf(&b, "Sanity (gateway): %s; %s\n", orDash(res.Sanity.GatewayPolicy), orDash(strings.Join(res.Sanity.GatewayPlugin, "; ")))
	}

	if l := res.Load; l != nil {
		rules := "10 policy rules"
		if p, _ := res.Options["policies"].(bool); !p {
			rules = "no policies"
		}
		plugin := fmt.Sprintf("plugin %v", res.Options["plugin"])
		if t, _ := res.Options["pluginTimeout"].(string); t != "" && t != "0s" {
			plugin += " (timeout " + t + ")"
		}
		fmt.Fprintf(&b, "\nLoad: %s (echo, %d B text) with %s and %s, %v principals, over %d target servers; direct = go-sdk to a twin of each target\n",
			doorText(res.Options["door"]), l.TextBytes, rules, plugin, res.Options["principals"], l.Targets)
		fmt.Fprintf(&b, "  %5s | %10s %8s %8s | %10s %8s %8s | %6s %6s %6s | %9s %9s %9s\n", "conc", "host c/s", "p50 ms", "p99 ms", "direct c/s", "p50 ms", "p99 ms", "thr×", "p50×", "p99×", "CPU µs h", "CPU µs d", "daemon")
		for _, s := range l.Steps {
			fmt.Fprintf(&b, "  %5d | %10.0f %8.3f %8.3f | %10.0f %8.3f %8.3f | %6.2f %6.2f %6.2f | %9.0f %9.0f %9.0f\n", s.Concurrency,
				s.Host.Throughput, s.Host.P50Ms, s.Host.P99Ms, s.Direct.Throughput, s.Direct.P50Ms, s.Direct.P99Ms,
				s.ThroughputXDirect, s.P50XDirect, s.P99XDirect, s.Host.CPUPerCallUs, s.Direct.CPUPerCallUs, s.Host.CPUPerCallUs-s.Direct.CPUPerCallUs)
		}
		fmt.Fprintf(&b, "  CPU µs: per call, all processes of the run (clients, daemon, servers) over the windows of that side; daemon = host − direct, what a call through the daemon adds\n")
		if res.Cluster != nil {
			fmt.Fprintf(&b, "  host = two replicas behind the round-robin balancer (in this process), on one PostgreSQL; their parts of the host side's CPU per call:\n")
			fmt.Fprintf(&b, "  %5s | %14s %14s %16s | %18s %18s\n", "conc", "replicas µs", "PostgreSQL µs", "round trips/call", "replicas calls/s/core", "PostgreSQL c/s/core")
			for _, s := range l.Steps {
				fmt.Fprintf(&b, "  %5d | %14.0f %14.0f %16.2f | %18.0f %18.0f\n", s.Concurrency, s.Host.ReplicasCPUPerCallUs, s.Host.PostgresCPUPerCallUs,
					s.Host.RoundTripsPerCall, ratio(1e6, s.Host.ReplicasCPUPerCallUs), ratio(1e6, s.Host.PostgresCPUPerCallUs))
			}
		}
		fmt.Fprintf(&b, "  knee (p50 grows faster than throughput): host %s; direct %s\n", l.KneeHost, l.KneeDirect)
	}

	if s := res.Soak; s != nil {
		pace := "unpaced"
		if r, _ := res.Options["soakRate"].(float64); r > 0 {
			pace = fmt.Sprintf("%v calls/s target", r)
		}
		through := doorText(res.Options["door"])
		if res.Cluster != nil {
			through += " through the balancer in front of two replicas (the counters are replica a's, the one never killed)"
		}
		fmt.Fprintf(&b, "\nSoak through %s: %s, %v workers, %s, sample %v, warm-up %s: %d calls acknowledged, %d failed, %d server restarts\n",
			through, time.Duration(s.DurationS*float64(time.Second)), res.Options["soakConcurrency"], pace, res.Options["sample"],
			time.Duration(s.WarmupS*float64(time.Second)), s.Calls, s.Errors, s.Restarts)
		if n := len(s.Samples); n > 0 {
			var lat []float64
			for _, x := range s.Samples {
				if x.Throughput > 0 {
					lat = append(lat, x.P50Ms)
				}
			}
			fmt.Fprintf(&b, "  median of the samples' p50: %.3f ms\n", median(lat))
		}
		for _, t := range s.Trends {
			status := "ok"
			switch {
			case t.Tolerance < 0:
				status = "reported"
			case !t.OK:
				status = "GREW"
			}
			unit := ""
			if t.Unit != "" {
				unit = " " + t.Unit
			}
			fmt.Fprintf(&b, "  %-11s %10.2f → %10.2f%s (%+.2f, ×%.3f, slope %+.2f/h) %s\n", t.Metric, t.Baseline, t.End, unit, t.Growth, t.Ratio, t.SlopePerHour, status)
		}
		for _, n := range s.Notes {
			fmt.Fprintf(&b, "  note: %s\n", n)
		}
	}
	if t := res.Transcript; t != nil {
		fmt.Fprintf(&b, "\nTranscript: %d calls acknowledged in %d sessions; the sessions count %d entries; %d entries read back\n", t.Acknowledged, t.Sessions, t.Counted, t.Paged)
	}
	if cl := res.Cluster; cl != nil {
		fmt.Fprintf(&b, "\nCluster: replicas %s; balancer %s; PostgreSQL %s\n", strings.Join(cl.Replicas, ", "), cl.Balancer, cl.Postgres)
		for _, f := range cl.Faults {
			rec := "never"
			if f.RecoveredS >= 0 {
				rec = fmt.Sprintf("%.1fs", f.RecoveredS)
			}
			fmt.Fprintf(&b, "  fault at %.1fs: %s; over at %.1fs (%.1fs down); first sample without a failure at %s; %d calls failed in its window\n",
				f.AtS, f.What, f.EndS, f.EndS-f.AtS, rec, f.Failed)
			for _, e := range f.Errors {
				fmt.Fprintf(&b, "    e.g. %s\n", e)
			}
		}
		fmt.Fprintf(&b, "  calls failed outside the faults' windows: %d; sessions of replica a lost: %d; processes of the killed replica left running: %d\n", cl.FailuresOutside, cl.LiveSessionsLost, cl.Orphans)
		fmt.Fprintf(&b, "  first quarter after warm-up: %.0f calls/s, p50 %.3f ms; last quarter: %.0f calls/s, p50 %.3f ms\n",
			cl.BeforeThroughput, cl.BeforeP50Ms, cl.AfterThroughput, cl.AfterP50Ms)
	}
	if t := res.GatewayTranscript; t != nil {
		fmt.Fprintf(&b, "Transcript of the gateway's calls: %d acknowledged by %d clients, %d recorded in %d sessions, %d of the acknowledged found (lost %d), %d recorded but never acknowledged, %d duplicates\n",
			t.Acknowledged, t.Clients, t.Recorded, t.Sessions, t.Found, t.Lost, t.Unacknowledged, t.Duplicates)
	}
	lc := res.Lifecycle
	fmt.Fprintf(&b, "\nLifecycle: before the first daemon: %d goroutines, %d fds, %d children\n", lc.Before.Goroutines, lc.Before.FDs, lc.Before.Children)
	for _, label := range []string{"cold", "final"} {
		if c, ok := lc.After[label]; ok {
			fmt.Fprintf(&b, "  after the %s daemon shut down: %d goroutines, %d fds, %d children (%d zombies)\n", label, c.Goroutines, c.FDs, c.Children, c.Zombies)
		}
	}
	return b.String()
}

func erasText(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d %s", m[k], k))
	}
	return strings.Join(parts, ", ")
}

// doorText names the door of a run's calls.
func doorText(door any) string {
	if door == doorAPI {
		return "POST /api/v1/sessions/{id}/calls"
	}
	return "the gateway's /mcp (go-sdk clients, 2025-11-25 and 2026-07-28 in turn)"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
