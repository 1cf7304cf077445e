package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/benchpair"
)

func TestKnee(t *testing.T) {
	tests := []struct {
		name  string
		steps []kneeStep
		want  int
	}{
		{"none", []kneeStep{{1, 100, 1}, {2, 200, 1}, {4, 390, 1.05}}, -1},
		{"latency outgrows throughput", []kneeStep{{1, 100, 1}, {2, 190, 1.05}, {4, 250, 1.6}, {8, 260, 3}}, 2},
		{"throughput falls", []kneeStep{{1, 100, 1}, {4, 90, 4}}, 1},
		{"one step", []kneeStep{{1, 100, 1}}, -1},
		{"empty", nil, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := knee(tc.steps); got != tc.want {
				t.Errorf("knee = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestStats(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	p50, p99 := benchpair.Percentiles(ds)
	if p50 != 51*time.Millisecond || p99 != 100*time.Millisecond {
		t.Errorf("percentiles = %v, %v", p50, p99)
	}
	if p50, p99 := benchpair.Percentiles(nil); p50 != 0 || p99 != 0 {
		t.Errorf("percentiles(nil) = %v, %v", p50, p99)
	}
	if got := median([]float64{3, 1, 2, 10}); got != 2.5 {
		t.Errorf("median = %v", got)
	}
	if got := slope([]float64{0, 1, 2, 3}, []float64{1, 3, 5, 7}); got != 2 {
		t.Errorf("slope = %v, want 2", got)
	}
	if got := slope([]float64{1, 1}, []float64{1, 5}); got != 0 {
		t.Errorf("slope without spread = %v, want 0", got)
	}
}

func TestAnalyse(t *testing.T) {
	flat := func(i int) sample {
		return sample{T: float64(i), counters: counters{HeapLive: 40 << 20, Goroutines: 100, FDs: 50, Children: 20}}
	}
	tests := []struct {
		name    string
		mutate  func(i int, s *sample)
		failing []string
	}{
		{"flat", func(int, *sample) {}, nil},
		{"noise within tolerance", func(i int, s *sample) { s.Goroutines += i % 3; s.FDs += i % 2 }, nil},
		{"goroutine leak", func(i int, s *sample) { s.Goroutines += i }, []string{"goroutines"}},
		{"fd and child leak", func(i int, s *sample) {
			if i > 15 {
				s.FDs += 20
				s.Children++
			}
		}, []string{"fds", "children"}},
		{"heap leak", func(i int, s *sample) { s.HeapLive += int64(i) << 22 }, []string{"heap_live"}},
		{"growth during warm-up is ignored", func(i int, s *sample) {
			if i < 5 {
				s.Goroutines -= 50
			}
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var res soakResult
			for i := range 20 {
				s := flat(i)
				tc.mutate(i, &s)
				res.Samples = append(res.Samples, s)
			}
			analyse(&res, 5*time.Second)
			var failing []string
			for _, tr := range res.Trends {
				if !tr.OK {
					failing = append(failing, tr.Metric)
				}
			}
			if !procSupported {
				return
			}
			if diff := cmp.Diff(tc.failing, failing); diff != "" {
				t.Errorf("failing trends (-want +got):\n%s\nproblems: %q", diff, res.Problems)
			}
			if len(res.Problems) != len(tc.failing) {
				t.Errorf("%d problems for %d failing trends: %q", len(res.Problems), len(tc.failing), res.Problems)
			}
		})
	}
}

func TestParseOptions(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		code  int
		check func(t *testing.T, o options)
	}{
		{"defaults", nil, -1, func(t *testing.T, o options) {
			if o.Servers != 50 || o.Soak != 10*time.Minute || o.SoakWarmup != 2*time.Minute || len(o.Steps) != 7 || o.Plugin != pluginRedact {
				t.Errorf("defaults: %+v", o)
			}
		}},
		{"short preset", []string{"-short"}, -1, func(t *testing.T, o options) {
			if o.Servers != 5 || o.Soak != 20*time.Second || o.SoakWarmup != 5*time.Second || !cmp.Equal(o.Steps, []int{1, 4}) {
				t.Errorf("short: %+v", o)
			}
		}},
		{"explicit flags win over the preset", []string{"-short", "-servers", "10", "-steps", "2,3"}, -1, func(t *testing.T, o options) {
			if o.Servers != 10 || !cmp.Equal(o.Steps, []int{2, 3}) || o.Principals != 2 {
				t.Errorf("short with flags: %+v", o)
			}
		}},
		{"no load phase", []string{"-steps", ""}, -1, func(t *testing.T, o options) {
			if o.Steps != nil || o.slots() != 8 {
				t.Errorf("steps %v, slots %d", o.Steps, o.slots())
			}
		}},
		{"steps must increase", []string{"-steps", "4,2"}, 2, nil},
		{"targets beyond servers", []string{"-servers", "3", "-targets", "4"}, 2, nil},
		{"unknown plugin", []string{"-plugin", "truncate"}, 2, nil},
		{"warm-up as long as the soak", []string{"-soak", "10s", "-soak-warmup", "10s"}, 2, nil},
		{"stray argument", []string{"extra"}, 2, nil},
		{"help", []string{"-h"}, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			o, code := parseOptions(tc.args, &stderr)
			if code != tc.code {
				t.Fatalf("code %d, want %d; stderr:\n%s", code, tc.code, stderr.String())
			}
			if tc.check != nil {
				tc.check(t, o)
			}
		})
	}
}

// TestConfigHCL loads the generated configuration with the real loader.
func TestConfigHCL(t *testing.T) {
	dir := t.TempDir()
	wasm := filepath.Join(dir, "redact.wasm")
	if err := os.WriteFile(wasm, []byte("\x00asm\x01\x00\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := planServers(12)
	for i := range plan {
		if kinds[plan[i].Kind].HTTP {
			plan[i].URL = "http://127.0.0.1:1/mcp"
		}
	}
	principals := planPrincipals(3)
	bins := binaries{Wellbehaved: "/bin/wellbehaved", Modernonly: "/bin/modernonly", Plugin: wasm}
	src := configHCL(filepath.Join(dir, "data"), plan, principals, bins, pluginRedact, 2*time.Second, true)
	cfg, diags := config.Parse([]byte(src), "load.hcl", config.Options{})
	if diags.HasErrors() {
		t.Fatalf("the generated config does not load: %v\n%s", diags, src)
	}
	if len(cfg.Servers) != 12 || len(cfg.Principals) != 4 || len(cfg.Policies) != 10 || len(cfg.Plugins) != 1 {
		t.Fatalf("%d servers, %d principals, %d policies, %d plugins", len(cfg.Servers), len(cfg.Principals), len(cfg.Policies), len(cfg.Plugins))
	}
	if p := cfg.Plugins[0]; p.Timeout != 2*time.Second || p.Config["pattern"] != redactPattern {
		t.Errorf("plugin %+v", p)
	}
	for i, s := range cfg.Servers {
		k := kinds[plan[i].Kind]
		if s.Name != plan[i].Name || s.VersionNegotiation != k.Negotiation || (s.URL != "") != k.HTTP {
			t.Errorf("server %d: %+v, want kind %s", i, s, k.Name)
		}
	}
	if p := cfg.Principals[len(cfg.Principals)-1]; p.Name != blockedPrincipal || !cmp.Equal(p.Groups, []string{"blocked"}) {
		t.Errorf("last principal %+v", p)
	}

	cfg, diags = config.Parse([]byte(configHCL(dir, plan[:1], principals[:1], bins, pluginNone, 0, false)), "bare.hcl", config.Options{})
	if diags.HasErrors() || len(cfg.Policies) != 0 || len(cfg.Plugins) != 0 {
		t.Errorf("without policies and plugin: %v, %d policies, %d plugins", diags, len(cfg.Policies), len(cfg.Plugins))
	}
}

func TestShellQuote(t *testing.T) {
	got := command([]string{"-steps", "1,2", "-out", "/tmp/a b", "it's"})
	want := `go run ./cmd/mcphost-load -steps 1,2 -out '/tmp/a b' 'it'\''s'`
	if got != want {
		t.Errorf("command = %s, want %s", got, want)
	}
	if !strings.HasPrefix(command(nil), "go run ./cmd/mcphost-load") {
		t.Error(command(nil))
	}
}

// TestCallNumbers: every call's text carries its number, padded to the
// size asked for, and reads back; text without one reads as none.
func TestCallNumbers(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		size int
	}{{0, 256}, {1, 1}, {123456789, 16}, {42, 6}} {
		txt := callText(tc.n, tc.size)
		if len(txt) < tc.size {
			t.Errorf("callText(%d, %d) is %d bytes", tc.n, tc.size, len(txt))
		}
		if got, ok := callNumber(txt); !ok || got != tc.n {
			t.Errorf("callNumber(callText(%d, %d)) = %d, %v", tc.n, tc.size, got, ok)
		}
	}
	for _, txt := range []string{"", "hello", "call-", "call-x y", "call--1 x", secretText} {
		if n, ok := callNumber(txt); ok {
			t.Errorf("callNumber(%q) = %d, want none", txt, n)
		}
	}
}

// TestMetricLine: the Prometheus lines the cluster run reads of a
// replica's /metrics.
func TestMetricLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		name string
		v    float64
		ok   bool
	}{
		{"go_goroutines 42", "go_goroutines", 42, true},
		{`mcphost_server_up{server="a b"} 1`, `mcphost_server_up{server="a b"}`, 1, true},
		{"go_heap_live_bytes 1.5e+07", "go_heap_live_bytes", 1.5e7, true},
		{"# HELP go_goroutines Goroutines.", "", 0, false},
		{"", "", 0, false},
		{"novalue", "", 0, false},
		{"x notanumber", "", 0, false},
	} {
		name, v, ok := metricLine(tc.line)
		if ok != tc.ok || (ok && (name != tc.name || v != tc.v)) {
			t.Errorf("metricLine(%q) = %q, %v, %v; want %q, %v, %v", tc.line, name, v, ok, tc.name, tc.v, tc.ok)
		}
	}
}
