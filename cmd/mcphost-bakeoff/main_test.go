package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
)

// TestMain lets the test binary stand in for the command when the run
// starts its relay: the harness re-executes its own program with the
// hidden subcommand.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == relayCommand {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// TestEndToEnd runs the whole harness with tiny counts and without TBXark
// (the test must not build a third-party module), and checks that both
// eras measured every side: a row per side in each table, with positive
// figures in raw.json. It asserts no timing.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcphost and runs every side for a few seconds")
	}
	out := t.TempDir()
	args := []string{"-out", out, "-sides", "direct,relay,mcphost", "-tbx", "",
		"-warmup", "5", "-rounds", "20", "-batches", "2", "-window", "300ms", "-reps", "1", "-callers", "2"}
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), args, &stdout, &stderr); code != exitOK {
		t.Fatalf("run %v = %d\nstdout:\n%s\nstderr:\n%s", args, code, stdout.String(), stderr.String())
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(md, stdout.Bytes()) {
		t.Error("stdout is not report.md")
	}
	b, err := os.ReadFile(filepath.Join(out, "raw.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res results
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Eras) != 2 {
		t.Fatalf("%d eras in raw.json, want 2", len(res.Eras))
	}
	sides := []string{sideDirect, sideRelay, sideMcphost}
	for _, e := range res.Eras {
		for _, s := range e.Sides {
			if s.Dropped != "" || s.Negotiated != e.Version {
				t.Errorf("%s: %s negotiated %q, dropped %q", e.Version, s.Name, s.Negotiated, s.Dropped)
			}
		}
		if len(e.Latency) != 2 {
			t.Errorf("%s: %d latency batches, want 2", e.Version, len(e.Latency))
		}
		for _, lb := range e.Latency {
			for _, s := range sides {
				if lb.P50[s] <= 0 || lb.P99[s] < lb.P50[s] {
					t.Errorf("%s: %s p50 %v, p99 %v", e.Version, s, lb.P50[s], lb.P99[s])
				}
			}
		}
		if len(e.Throughput) != len(sides) {
			t.Errorf("%s: %d windows, want %d", e.Version, len(e.Throughput), len(sides))
		}
		for _, w := range e.Throughput {
			if w.Calls <= 0 || w.Errors != 0 || w.Seconds <= 0 {
				t.Errorf("%s: window %+v", e.Version, w)
			}
			if w.Side != sideDirect && (w.CPUSeconds < 0 || w.PeakRSS <= 0) {
				t.Errorf("%s: %s has no CPU or RSS: %+v", e.Version, w.Side, w)
			}
		}
	}
	// Four tables per era (latency and throughput, ratios and absolute)
	// with a row per side that starts with a figure.
	for _, s := range sides {
		rows := regexp.MustCompile(`(?m)^\| `+s+` \| [0-9]`).FindAll(md, -1)
		if want := 4 * len(res.Eras); len(rows) != want {
			t.Errorf("%d table rows of %s with figures, want %d\n%s", len(rows), s, want, md)
		}
	}
}
