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

	"github.com/mcphost/mcphost/negotiate"
)

// The sides, in the order every table lists them.
const (
	sideDirect  = "direct"
	sideRelay   = "relay"
	sideTBX     = "tbx"
	sideMcphost = "mcphost"
)

var allSides = []string{sideDirect, sideRelay, sideTBX, sideMcphost}

// tbxBuild is -tbx's default: build TBXark/mcp-proxy from the Go module
// proxy.
const tbxBuild = "build"

// eraBoth is -era's default.
const eraBoth = "both"

// options are the command's flags.
type options struct {
	Out     string        `json:"out"`
	Eras    []string      `json:"eras"`  // protocol versions, in run order
	Sides   []string      `json:"sides"` // in allSides order
	TBX     string        `json:"tbx"`   // tbxBuild, a binary's path, or "" (left out)
	BinDir  string        `json:"bin_dir,omitempty"`
	Warmup  int           `json:"warmup"`
	Rounds  int           `json:"rounds"`
	Batches int           `json:"batches"`
	Callers []int         `json:"callers"`
	Window  time.Duration `json:"window"`
	Reps    int           `json:"reps"`
	// Deadline bounds the whole run; CallTimeout each call.
	Deadline    time.Duration `json:"deadline"`
	CallTimeout time.Duration `json:"call_timeout"`
}

// parseOptions reads args; a usage error is returned with the flag set's
// own message already written to stderr.
func parseOptions(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("mcphost-bakeoff", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.Out, "out", "/tmp/mcphost-bakeoff", "write report.md and raw.json into `DIR`")
	era := fs.String("era", eraBoth, "the protocol version the clients pin: "+negotiate.LegacyVersion+", "+negotiate.ModernVersion+" or both")
	sides := fs.String("sides", strings.Join(allSides, ","), "the `SIDES` to measure, comma-separated, of "+strings.Join(allSides, ", "))
	fs.StringVar(&o.TBX, "tbx", tbxBuild, "TBXark/mcp-proxy: \"build\" builds v"+tbxVersion+" from the Go module proxy in a scratch module, a `PATH` runs that binary, \"\" leaves it out")
	fs.StringVar(&o.BinDir, "bin-dir", "", "take prebuilt wellbehaved and mcphost binaries from `DIR` instead of building them")
	fs.IntVar(&o.Warmup, "warmup", 50, "warm-up rounds before the latency batches")
	fs.IntVar(&o.Rounds, "rounds", 400, "rounds per latency batch (each round calls every side once)")
	fs.IntVar(&o.Batches, "batches", 5, "latency batches")
	callers := fs.String("callers", "8,32", "the concurrent callers of the throughput windows, comma-separated (empty: no throughput measure)")
	fs.DurationVar(&o.Window, "window", 5*time.Second, "length of one throughput window")
	fs.IntVar(&o.Reps, "reps", 3, "throughput repetitions (each measures every side once, the order rotating)")
	fs.DurationVar(&o.Deadline, "deadline", 30*time.Minute, "give up after this long")
	fs.DurationVar(&o.CallTimeout, "call-timeout", 30*time.Second, "the bound on one call")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, usage(fs, "unexpected arguments: %q", fs.Args())
	}
	switch *era {
	case negotiate.LegacyVersion, negotiate.ModernVersion:
		o.Eras = []string{*era}
	case eraBoth:
		o.Eras = []string{negotiate.LegacyVersion, negotiate.ModernVersion}
	default:
		return o, usage(fs, "-era %q: want %s, %s or %s", *era, negotiate.LegacyVersion, negotiate.ModernVersion, eraBoth)
	}
	for s := range strings.SplitSeq(*sides, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !slices.Contains(allSides, s) {
			return o, usage(fs, "-sides: unknown side %q (want some of %s)", s, strings.Join(allSides, ", "))
		}
		if !slices.Contains(o.Sides, s) {
			o.Sides = append(o.Sides, s)
		}
	}
	if o.TBX == "" {
		o.Sides = slices.DeleteFunc(o.Sides, func(s string) bool { return s == sideTBX })
	}
	slices.SortFunc(o.Sides, func(a, b string) int { return slices.Index(allSides, a) - slices.Index(allSides, b) })
	if len(o.Sides) == 0 {
		return o, usage(fs, "-sides: no side to measure")
	}
	var err error
	if o.Callers, err = parseInts(*callers); err != nil {
		return o, usage(fs, "-callers: %v", err)
	}
	for _, c := range []struct {
		name string
		v    int
		min  int
	}{{"warmup", o.Warmup, 0}, {"rounds", o.Rounds, 1}, {"batches", o.Batches, 1}, {"reps", o.Reps, 1}} {
		if c.v < c.min || c.v > 1_000_000 {
			return o, usage(fs, "-%s %d: want %d to 1000000", c.name, c.v, c.min)
		}
	}
	if o.Window <= 0 || o.Deadline <= 0 || o.CallTimeout <= 0 {
		return o, usage(fs, "-window, -deadline and -call-timeout must be positive")
	}
	return o, nil
}

// parseInts reads a comma-separated list of caller counts from 1 to 1024.
func parseInts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > 1024 {
			return nil, fmt.Errorf("%q is not a count from 1 to 1024", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// errUsage marks a usage error (exit status 2).
var errUsage = errors.New("usage")

func usage(fs *flag.FlagSet, format string, args ...any) error {
	fmt.Fprintf(fs.Output(), "mcphost-bakeoff: "+format+"\n", args...)
	return errUsage
}
