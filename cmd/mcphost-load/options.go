package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Plugins the load config can run on every result.
const (
	pluginRedact   = "redact"
	pluginIdentity = "identity"
	pluginNone     = "none"
)

// options are the tool's flags after -short and the defaults applied.
type options struct {
	Door        string        `json:"door"`
	Cluster     bool          `json:"cluster"`
	Faults      bool          `json:"faults"`
	FaultDown   time.Duration `json:"faultDown"`
	Servers     int           `json:"servers"`
	Principals  int           `json:"principals"`
	Targets     int           `json:"targets"`
	Steps       []int         `json:"steps"`
	StepTime    time.Duration `json:"stepTime"`
	Rounds      int           `json:"rounds"`
	Soak        time.Duration `json:"soak"`
	SoakWarmup  time.Duration `json:"soakWarmup"`
	Sample      time.Duration `json:"sample"`
	SoakConc    int           `json:"soakConcurrency"`
	SoakRate    float64       `json:"soakRate"`
	Plugin      string        `json:"plugin"`
	PluginTime  time.Duration `json:"pluginTimeout"`
	StoreSync   string        `json:"storeSync"`
	Policies    bool          `json:"policies"`
	TextBytes   int           `json:"textBytes"`
	WarmStart   bool          `json:"warmStart"`
	Out         string        `json:"out"`
	BinDir      string        `json:"binDir,omitempty"`
	KeepData    bool          `json:"keepData"`
	Short       bool          `json:"short"`
	Verbose     bool          `json:"verbose"`
	Profile     bool          `json:"profile"`
	SettleLimit time.Duration `json:"settleLimit"`
	// StartupCurve is the sizes of the start-up curve (stdio servers);
	// empty skips it.
	StartupCurve []int `json:"startupCurve"`
}

// shortPreset is what -short sets, for every flag not given explicitly: a
// run of about half a minute that exercises every phase.
var shortPreset = map[string]string{
	"servers":          "5",
	"principals":       "2",
	"targets":          "5",
	"steps":            "1,4",
	"step-time":        "500ms",
	"rounds":           "2",
	"soak":             "20s",
	"soak-warmup":      "5s",
	"sample":           "1s",
	"soak-concurrency": "4",
	"soak-rate":        "100",
	"startup-curve":    "3",
}

const usageText = `mcphost-load measures the mcphost daemon under load, in this process:
start-up of many servers, a concurrency curve through the HTTP API against
direct go-sdk calls, and a soak that watches memory, goroutines, file
descriptors and child processes. Loopback only. Run it from the repository
(it builds its fixture servers and plugin with the go command) or pass
-bin-dir.

Usage:
  go run ./cmd/mcphost-load [flags]

Flags:
`

// parseOptions parses args. It returns a code >= 0 when the program should
// exit with it (help, or a usage error).
func parseOptions(args []string, stderr io.Writer) (options, int) {
	var o options
	fs := flag.NewFlagSet("mcphost-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usageText)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.Door, "door", doorGateway, "what the load and soak calls go through: gateway (MCP clients of /mcp, 2025-11-25 and 2026-07-28 in turn) or api (POST /api/v1/sessions/{id}/calls)")
	fs.BoolVar(&o.Cluster, "cluster", false, "the cluster run: two mcphost serve replicas on a PostgreSQL of the tool's own, behind a round-robin balancer, through the gateway ("+presetText(clusterPreset)+" unless given)")
	fs.BoolVar(&o.Faults, "faults", true, "in the cluster run's soak: kill one replica (SIGKILL) at 40% and start it again, and restart PostgreSQL at 65%")
	fs.DurationVar(&o.FaultDown, "fault-down", 3*time.Second, "how long a killed replica and a stopped PostgreSQL stay down")
	fs.IntVar(&o.Servers, "servers", 50, "configured servers, kinds in turn: stdio legacy, stdio auto, HTTP legacy, HTTP auto, stdio modern-only")
	fs.IntVar(&o.Principals, "principals", 8, "principal blocks the workers call as, in turn")
	fs.IntVar(&o.Targets, "targets", 10, "servers the load calls go to (the first N, so every kind is covered from 5 on); each gets a direct twin")
	steps := fs.String("steps", "1,2,4,8,16,32,64", "concurrency steps of the load curve, comma-separated; empty skips the load phase")
	fs.DurationVar(&o.StepTime, "step-time", 2*time.Second, "length of one direct or host window of a step")
	fs.IntVar(&o.Rounds, "rounds", 2, "direct+host window pairs per step (the order swaps every round)")
	fs.DurationVar(&o.Soak, "soak", 10*time.Minute, "soak length; 0 skips the soak")
	fs.DurationVar(&o.SoakWarmup, "soak-warmup", 0, "the first part of the soak that the growth verdict ignores (default a fifth of -soak)")
	fs.DurationVar(&o.Sample, "sample", 5*time.Second, "soak sampling interval")
	fs.IntVar(&o.SoakConc, "soak-concurrency", 8, "soak workers")
	fs.Float64Var(&o.SoakRate, "soak-rate", 200, "soak calls per second, all workers together; 0 calls as fast as the workers can")
	fs.StringVar(&o.Plugin, "plugin", pluginRedact, "result plugin on every call: redact, identity or none")
	fs.DurationVar(&o.PluginTime, "plugin-timeout", 0, "the plugin block's timeout (0: mcphost's default, 250ms); it includes waiting for a free instance")
	fs.StringVar(&o.StoreSync, "store-sync", "full", "the single daemon's store { sync }: full (every commit fsynced) or normal (appends acknowledged from the entry log)")
	fs.BoolVar(&o.Policies, "policies", true, "configure the ten policy rules")
	fs.IntVar(&o.TextBytes, "text-bytes", 256, "size of the echo text of each call")
	fs.BoolVar(&o.WarmStart, "warm-start", true, "start the daemon twice: cold (empty era cache), then warm on the same data_dir; load and soak run on the warm one")
	fs.StringVar(&o.Out, "out", "", "output `dir` (default: a new mcphost-load-* directory under the temp dir)")
	fs.StringVar(&o.BinDir, "bin-dir", "", "`dir` with prebuilt wellbehaved, modernonly and PLUGIN.wasm (default: build them with the go command)")
	fs.BoolVar(&o.KeepData, "keep-data", false, "keep the daemon's data_dir (the SQLite transcript) in -out")
	fs.BoolVar(&o.Short, "short", false, "small and quick: "+presetText(shortPreset)+" (with -cluster also "+presetText(clusterShortPreset)+")")
	fs.BoolVar(&o.Verbose, "v", false, "debug logging")
	fs.BoolVar(&o.Profile, "profile", false, "write a CPU profile of the soak (soak-cpu.pprof) and a heap profile at its end (soak-heap.pprof) to -out")
	fs.DurationVar(&o.SettleLimit, "settle-limit", 5*time.Minute, "how long start-up may take before the run fails")
	curve := fs.String("startup-curve", "10,50,200", "sizes of the start-up curve, comma-separated: that many stdio servers started cold and warm, and the daemon's memory per idle server; empty skips it")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, 0
		}
		return o, 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mcphost-load: unexpected arguments %q\n", fs.Args())
		return o, 2
	}
	// Presets fill in the flags not given: -cluster -short's first, then
	// -short's, then -cluster's.
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	apply := func(preset map[string]string) {
		for name, v := range preset {
			if !set[name] {
				if err := fs.Set(name, v); err != nil {
					panic(err) // the preset is ours
				}
				set[name] = true
			}
		}
	}
	if o.Cluster && o.Short {
		apply(clusterShortPreset)
	}
	if o.Short {
		apply(shortPreset)
	}
	if o.Cluster {
		apply(clusterPreset)
	}
	var err error
	if o.Steps, err = parseSteps(*steps); err != nil {
		fmt.Fprintf(stderr, "mcphost-load: -steps: %v\n", err)
		return o, 2
	}
	if o.StartupCurve, err = parseSteps(*curve); err != nil {
		fmt.Fprintf(stderr, "mcphost-load: -startup-curve: %v\n", err)
		return o, 2
	}
	if o.SoakWarmup == 0 {
		o.SoakWarmup = o.Soak / 5
	}
	if msg := o.check(); msg != "" {
		fmt.Fprintf(stderr, "mcphost-load: %s\n", msg)
		return o, 2
	}
	return o, -1
}

// clusterPreset is what -cluster sets: ten servers per replica, no
// start-up curve or warm start (the single daemon's run measures those).
var clusterPreset = map[string]string{
	"servers":       "10",
	"targets":       "5",
	"startup-curve": "",
	"warm-start":    "false",
}

// clusterShortPreset is what -cluster -short sets on top of -short: a soak
// long enough for both faults and the recovery after each.
var clusterShortPreset = map[string]string{
	"soak":        "40s",
	"soak-warmup": "8s",
}

func presetText(preset map[string]string) string {
	keys := make([]string, 0, len(preset))
	for k := range preset {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(" ")
		}
		v := preset[k]
		if v == "" {
			v = "''"
		}
		fmt.Fprintf(&b, "-%s %s", k, v)
	}
	return b.String()
}

// parseSteps reads "1,2,4": positive, increasing.
func parseSteps(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		if len(out) > 0 && n <= out[len(out)-1] {
			return nil, fmt.Errorf("steps must increase: %d after %d", n, out[len(out)-1])
		}
		out = append(out, n)
	}
	return out, nil
}

// check returns what is wrong with o, or "".
func (o *options) check() string {
	switch {
	case o.Door != doorGateway && o.Door != doorAPI:
		return "-door is gateway or api"
	case o.StoreSync != "full" && o.StoreSync != "normal":
		return "-store-sync is full or normal"
	case o.Cluster && o.Door != doorGateway:
		return "-cluster goes through the gateway only (-door gateway)"
	case o.FaultDown <= 0 || o.FaultDown > time.Minute:
		return "-fault-down is from 1ms to 1m"
	case o.Servers < 1 || o.Servers > 500:
		return "-servers is from 1 to 500"
	case o.Principals < 1 || o.Principals > 100:
		return "-principals is from 1 to 100"
	case o.Targets < 1 || o.Targets > o.Servers:
		return "-targets is from 1 to -servers"
	case len(o.Steps) > 0 && o.Steps[len(o.Steps)-1] > 1024:
		return "-steps go up to 1024"
	case len(o.Steps) > 0 && (o.StepTime <= 0 || o.Rounds < 1):
		return "-step-time must be positive and -rounds at least 1"
	case o.Soak < 0 || o.Soak > 24*time.Hour:
		return "-soak is from 0 to 24h"
	case o.Soak > 0 && (o.SoakWarmup < 0 || o.SoakWarmup >= o.Soak):
		return "-soak-warmup must be shorter than -soak"
	case o.Soak > 0 && (o.Sample <= 0 || o.Sample > o.Soak):
		return "-sample must be positive and at most -soak"
	case o.SoakConc < 1 || o.SoakConc > 1024:
		return "-soak-concurrency is from 1 to 1024"
	case o.SoakRate < 0:
		return "-soak-rate must not be negative"
	case o.Plugin != pluginRedact && o.Plugin != pluginIdentity && o.Plugin != pluginNone:
		return "-plugin is redact, identity or none"
	case o.TextBytes < 1 || o.TextBytes > 1<<20:
		return "-text-bytes is from 1 to 1048576"
	case o.PluginTime < 0 || o.PluginTime > time.Minute:
		return "-plugin-timeout is from 0 to 1m"
	case o.SettleLimit <= 0:
		return "-settle-limit must be positive"
	case len(o.StartupCurve) > 0 && o.StartupCurve[len(o.StartupCurve)-1] > 500:
		return "-startup-curve goes up to 500 servers"
	}
	return ""
}

// slots is the number of worker sessions the run needs.
func (o *options) slots() int {
	n := o.SoakConc
	if len(o.Steps) > 0 {
		n = max(n, o.Steps[len(o.Steps)-1])
	}
	return n
}
