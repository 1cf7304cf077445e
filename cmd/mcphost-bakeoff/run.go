package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/mcphost/mcphost/internal/gotool"
	"github.com/mcphost/mcphost/internal/shellquote"
	"github.com/mcphost/mcphost/internal/sysinfo"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// run is the command: the hidden relay subcommand, or a bake-off.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == relayCommand {
		return runRelay(ctx, args[1:], stdout, stderr)
	}
	o, err := parseOptions(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return exitUsage
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	r := &runner{o: o, logger: logger, res: &results{
		Command: shellquote.Join(append([]string{"go", "run", "./cmd/mcphost-bakeoff"}, args...)...),
		Options: o,
		Go:      runtime.Version(),
		GoSDK:   goSDKVersion(),
	}}
	r.run(ctx)
	if err := r.write(stdout); err != nil {
		logger.Error("the report was not written", "err", err)
		return exitFailure
	}
	if r.res.failed() {
		logger.Error("the run had problems; see the report's last section", "report", filepath.Join(o.Out, "report.md"))
		return exitFailure
	}
	return exitOK
}

// runner is one bake-off.
type runner struct {
	o        options
	logger   *slog.Logger
	res      *results
	bins     binaries
	upstream string   // the upstream's endpoint
	cleanup  []func() // temporary directories, removed at the end
}

// run measures every era, recording what fails in the results.
func (r *runner) run(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, r.o.Deadline)
	defer cancel()
	defer func() {
		for _, f := range r.cleanup {
			f()
		}
	}()
	res := r.res
	res.Started = time.Now()
	res.Machine = machine{CPU: sysinfo.CPUModel(), Cores: runtime.NumCPU(), MemBytes: sysinfo.MemTotal(), Kernel: sysinfo.Kernel(), LoadBefore: sysinfo.LoadAvg()}
	defer func() {
		res.Finished = time.Now()
		res.Machine.LoadAfter = sysinfo.LoadAvg()
	}()
	fail := func(err error) {
		r.logger.Error("bake-off failed", "err", err)
		res.Errors = append(res.Errors, err.Error())
	}
	if err := r.prepare(ctx); err != nil {
		fail(err)
		return
	}
	up, url, err := r.startUpstream(ctx)
	if err != nil {
		fail(fmt.Errorf("upstream: %w", err))
		return
	}
	defer up.stop()
	r.upstream = url
	r.logger.Info("upstream listening", "url", url, "pid", up.pid())
	for _, version := range r.o.Eras {
		res.Eras = append(res.Eras, r.runEra(ctx, version))
		if ctx.Err() != nil {
			fail(fmt.Errorf("stopped: %w", context.Cause(ctx)))
			return
		}
	}
}

// prepare creates the output directory, builds (or finds) the programs
// and records the commit.
func (r *runner) prepare(ctx context.Context) error {
	if err := os.MkdirAll(filepath.Join(r.o.Out, "logs"), 0o755); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("this program's path: %w", err)
	}
	r.res.Commit = commit()
	if r.o.BinDir != "" {
		r.bins, err = prebuilt(r.o.BinDir)
	} else {
		r.bins, err = buildOwn(ctx, filepath.Join(r.o.Out, "bin"), r.logger)
	}
	if err != nil {
		return err
	}
	r.bins.Self = self
	if slices.Contains(r.o.Sides, sideTBX) {
		if r.o.TBX == tbxBuild {
			if r.bins.TBX, err = buildTBX(ctx, filepath.Join(r.o.Out, "bin"), r.logger); err != nil {
				return err
			}
			r.res.TBX = "v" + tbxVersion + ", built from the Go module proxy by this run (`go get " + tbxModule + "@v" + tbxVersion + "` in a scratch module)"
		} else {
			if r.bins.TBX, err = filepath.Abs(r.o.TBX); err != nil {
				return err
			}
			if _, err := os.Stat(r.bins.TBX); err != nil {
				return fmt.Errorf("-tbx: %w", err)
			}
			r.res.TBX = "prebuilt " + r.bins.TBX + " (taken as v" + tbxVersion + ")"
		}
	}
	r.res.Binaries = r.bins
	return nil
}

// runEra starts the proxies for the era of version, checks them, measures
// the ones that passed and stops them.
func (r *runner) runEra(ctx context.Context, version string) eraResult {
	e := eraResult{Version: version}
	var sides []*side
	defer func() {
		for _, s := range sides {
			s.proc.stop()
		}
	}()
	r.logger.Info("era: starting the sides", "era", version, "sides", strings.Join(r.o.Sides, ","))
	for _, name := range r.o.Sides {
		info := sideInfo{Name: name, What: sideWhat[name]}
		s, err := r.startSide(ctx, name, version)
		if err == nil {
			info.Endpoint = s.url
			if s.proc != nil {
				info.PID = s.proc.pid()
			}
			info.Negotiated, err = r.await(ctx, s, version)
		}
		switch {
		case err == nil:
			sides = append(sides, s)
			r.logger.Info("side ready", "era", version, "side", name, "negotiated", info.Negotiated, "url", s.url)
		case errors.Is(err, errVersion):
			info.Dropped = err.Error()
			r.logger.Warn("side dropped", "era", version, "side", name, "reason", info.Dropped)
			s.proc.stop()
		default:
			info.Dropped, info.Failed = err.Error(), true
			r.logger.Error("side dropped", "era", version, "side", name, "err", err)
			if s != nil {
				s.proc.stop()
			}
		}
		e.Sides = append(e.Sides, info)
	}
	if len(sides) == 0 {
		e.Errors = append(e.Errors, "no side to measure")
		return e
	}
	var err error
	if e.Latency, err = r.measureLatency(ctx, sides, version); err != nil {
		e.Errors = append(e.Errors, err.Error())
		r.logger.Error("latency", "era", version, "err", err)
	}
	if len(r.o.Callers) > 0 {
		if e.Throughput, err = r.measureThroughput(ctx, sides, version); err != nil {
			e.Errors = append(e.Errors, err.Error())
			r.logger.Error("throughput", "era", version, "err", err)
		}
	}
	for _, w := range e.Throughput {
		if w.Errors > 0 {
			e.Errors = append(e.Errors, fmt.Sprintf("%s, %d callers, repetition %d: %d calls failed (first: %s)", w.Side, w.Callers, w.Rep, w.Errors, w.FirstErr))
		}
	}
	return e
}

// write puts report.md and raw.json into the output directory and the
// report on stdout.
func (r *runner) write(stdout io.Writer) error {
	md := report(r.res)
	raw, err := json.MarshalIndent(r.res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(r.o.Out, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(r.o.Out, "report.md"), []byte(md), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(r.o.Out, "raw.json"), append(raw, '\n'), 0o644); err != nil {
		return err
	}
	_, err = io.WriteString(stdout, md)
	return err
}

// logPath is the log file of a started process.
func (r *runner) logPath(name string) string { return filepath.Join(r.o.Out, "logs", name+".log") }

// commit is the repository's short commit, marked when the work tree has
// changes; "unknown" outside a git checkout.
func commit() string {
	root, err := gotool.RepoRoot()
	if err != nil {
		return "unknown"
	}
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		c += " (with uncommitted changes)"
	}
	return c
}

// goSDKVersion is the go-sdk version this program was built with.
func goSDKVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/modelcontextprotocol/go-sdk" {
				return d.Version
			}
		}
	}
	return "unknown"
}
