package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/confine"
	"github.com/mcphost/mcphost/host/httpapi"
)

func TestMain(m *testing.M) {
	confine.MaybeHelper() // the sandbox helper of the stdio servers the tests start
	httpapi.DisableDebugOutput()
	os.Exit(m.Run())
}

// runTool runs the tool with args (adding -plugin none under -race: wazero
// compiles the plugin about twenty times slower there), fails t unless it
// passed, and returns its results.json and its stdout.
func runTool(t *testing.T, out string, args []string) (results, string) {
	t.Helper()
	if raceEnabled {
		args = append(args, "-plugin", "none")
	}
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), args, &stdout, &stderr)
	if testing.Verbose() {
		t.Logf("stderr:\n%s", stderr.String())
	}
	if code != exitOK {
		t.Fatalf("run %v = %d\nstdout:\n%s\nstderr:\n%s", args, code, stdout.String(), stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res results
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	return res, stdout.String()
}

// TestSmoke runs the whole tool in its smallest configuration — five
// servers (one of each kind), two short load steps, a six-second soak —
// through each door, and checks that every phase produced its results and
// that the run passed its own checks (no failed call, no lost entry, no
// leak). It asserts no timing. Under -race the redact plugin is left out:
// compiling it takes about a minute there.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fixtures and runs the daemon for about half a minute")
	}
	for _, door := range []string{doorGateway, doorAPI} {
		t.Run(door, func(t *testing.T) { smoke(t, door) })
	}
}

func smoke(t *testing.T, door string) {
	out := t.TempDir()
	args := []string{"-short", "-out", out, "-door", door,
		"-steps", "1,2", "-step-time", "300ms", "-rounds", "1",
		"-soak", "6s", "-soak-warmup", "2s", "-sample", "500ms"}
	res, stdout := runTool(t, out, args)
	if !res.Pass || len(res.Failures) > 0 {
		t.Errorf("pass = %v, failures %q", res.Pass, res.Failures)
	}
	if len(res.Startup) != 2 {
		t.Fatalf("%d start-ups, want cold and warm", len(res.Startup))
	}
	for _, su := range res.Startup {
		if su.Ready != 5 || su.Servers != 5 || su.Eras["legacy"] != 2 || su.Eras["modern"] != 3 {
			t.Errorf("%s start-up: %d of %d ready, eras %v; want 5 of 5, 2 legacy and 3 modern", su.Label, su.Ready, su.Servers, su.Eras)
		}
	}
	if len(res.StartupCurve) != 1 {
		t.Fatalf("start-up curve: %+v, want one size (-short's 3)", res.StartupCurve)
	}
	if p := res.StartupCurve[0]; p.Servers != 3 || p.Cold.Ready != 3 || p.Warm.Ready != 3 || p.Children != 3 || p.HeapKB <= 0 {
		t.Errorf("start-up curve point %+v: want 3 servers ready cold and warm, 3 processes, a heap figure", p)
	}
	if res.Sanity.Policy == "" || res.Sanity.Plugin == "" {
		t.Errorf("sanity checks not recorded: %+v", res.Sanity)
	}
	if res.Load == nil || len(res.Load.Steps) != 2 {
		t.Fatalf("load steps: %+v", res.Load)
	}
	for _, s := range res.Load.Steps {
		if s.Host.Calls == 0 || s.Direct.Calls == 0 || s.P50XDirect <= 0 {
			t.Errorf("step %d: host %d calls, direct %d calls, p50 ratio %v", s.Concurrency, s.Host.Calls, s.Direct.Calls, s.P50XDirect)
		}
		if procSupported && (s.Host.CPUPerCallUs <= 0 || s.Direct.CPUPerCallUs <= 0) {
			t.Errorf("step %d: CPU per call host %v µs, direct %v µs; want both measured", s.Concurrency, s.Host.CPUPerCallUs, s.Direct.CPUPerCallUs)
		}
		if len(s.Host.ByKind) != len(kinds) {
			t.Errorf("step %d: host calls reached %d kinds, want %d", s.Concurrency, len(s.Host.ByKind), len(kinds))
		}
	}
	if res.Soak == nil || len(res.Soak.Samples) < 4 || res.Soak.Calls == 0 || len(res.Soak.Trends) == 0 {
		t.Fatalf("soak: %+v", res.Soak)
	}
	if tc := res.Transcript; tc == nil || tc.Acknowledged == 0 || tc.Counted != tc.Acknowledged || tc.Paged != tc.Acknowledged {
		t.Errorf("transcript: %+v", tc)
	}
	if door == doorGateway {
		gt := res.GatewayTranscript
		if gt == nil || gt.Acknowledged < res.Soak.Calls || gt.Found != gt.Acknowledged || gt.Lost != 0 || gt.Recorded != gt.Acknowledged {
			t.Errorf("the gateway's transcript: %+v; want every acknowledged call (the soak's %d and more) found", gt, res.Soak.Calls)
		}
		if res.Sanity.GatewayPolicy == "" || (!raceEnabled && len(res.Sanity.GatewayPlugin) != 2) {
			t.Errorf("gateway sanity checks not recorded: %+v", res.Sanity)
		}
	} else if res.GatewayTranscript != nil {
		t.Errorf("the api door read back gateway calls: %+v", res.GatewayTranscript)
	}
	if c, ok := res.Lifecycle.After["final"]; !ok || (procSupported && c.Children != 0) {
		t.Errorf("after the final shutdown: %+v (recorded %v)", c, ok)
	}
	for _, name := range []string{"summary.txt", "command.txt", "config.hcl", "load.csv", "soak.csv", "daemon-cold.log", "daemon-warm.log"} {
		if fi, err := os.Stat(filepath.Join(out, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	if !strings.Contains(stdout, "mcphost-load: PASS") {
		t.Errorf("summary on stdout lacks the verdict:\n%s", stdout)
	}
}
