package negotiate

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestModernOnlyStdio: a server that answers server/discover and refuses
// initialize connects through discover in auto mode (sibling and in-place
// probes), lists and calls a tool without any initialize, and every request
// frame carries the modern _meta triple.
func TestModernOnlyStdio(t *testing.T) {
	tests := []struct {
		probe      string
		wantLabel  string
		wantStarts int
	}{
		{StdioProbeSibling, "discover", 2},
		{StdioProbeInPlace, "inplace:sdk", 1},
	}
	for _, tc := range tests {
		t.Run(tc.probe, func(t *testing.T) {
			t.Parallel()
			rec := recordPath(t)
			p := newProcs(t, pkgModernOnly, "-record", rec)
			spec := stdioSpec(p, ModeAuto, 20*time.Second)
			spec.StdioProbe = tc.probe
			cache := newMemCache()
			spec.Cache, spec.CacheKey = cache, "modernonly"
			res := mustConnect(t, spec, p)

			v := res.Verdict
			if v.Era != EraModern || v.ProtocolVersion != ModernVersion || v.Label != tc.wantLabel {
				t.Errorf("verdict %+v, want modern %s with label %q", v, ModernVersion, tc.wantLabel)
			}
			if !hasPrefix(v.Evidence, "modern: server/discover offered 2026-07-28") {
				t.Errorf("evidence %q", v.Evidence)
			}
			if got := res.Session.InitializeResult().ProtocolVersion; got != ModernVersion {
				t.Errorf("session negotiated %q", got)
			}
			if names := toolNames(t, res.Session); !slices.Equal(names, []string{"add", "echo"}) {
				t.Errorf("tools %v", names)
			}
			if got := callText(t, res.Session, "echo", map[string]any{"text": "modern"}); got != "modern" {
				t.Errorf("echo = %q", got)
			}
			if p.starts() != tc.wantStarts {
				t.Errorf("%d process starts, want %d", p.starts(), tc.wantStarts)
			}
			if res.Cmd != p.cmds[len(p.cmds)-1] {
				t.Error("Result.Cmd is not the last command built")
			}
			if c, ok := cache.entry("modernonly"); !ok || c.Era != EraModern {
				t.Errorf("cache entry %+v, %v; want the modern verdict", c, ok)
			}

			closeResult(res)
			recs := readRecords(t, rec)
			if n := countMethod(recs, "initialize"); n != 0 {
				t.Errorf("%d initialize frames, want none: %v", n, methods(recs))
			}
			for _, want := range []string{"server/discover", "tools/list", "tools/call"} {
				if countMethod(recs, want) == 0 {
					t.Errorf("no %s frame: %v", want, methods(recs))
				}
			}
			for _, r := range recs {
				if r.Call {
					checkModernMeta(t, r.Method, r.Meta)
				}
			}
		})
	}
}

// TestLegacyFallbackStdio: legacy servers in auto mode fall back to
// initialize with the evidence the decision table names, and discovery and
// calls work as in legacy mode.
func TestLegacyFallbackStdio(t *testing.T) {
	lock := func(t *testing.T) string { return filepath.Join(t.TempDir(), "server.lock") }
	tests := []struct {
		name      string
		pkg       string
		args      func(t *testing.T) []string
		window    time.Duration
		wantLabel string
		wantTool  string // tool to call: hello (probeanswer, misbehave) or echo
	}{
		{"misbehave -32601", pkgMisbehave, fixed("-mode", "ok"), 20 * time.Second, "rpc:-32601", "hello"},
		{"-32601", pkgProbeAnswer, fixed("-discover", "error", "-code", "-32601"), 20 * time.Second, "rpc:-32601", "hello"},
		{"-32602", pkgProbeAnswer, fixed("-discover", "error", "-code", "-32602"), 20 * time.Second, "rpc:-32602", "hello"},
		{"-32600", pkgProbeAnswer, fixed("-discover", "error", "-code", "-32600"), 20 * time.Second, "rpc:-32600", "hello"},
		{"-32000", pkgProbeAnswer, fixed("-discover", "error", "-code", "-32000"), 20 * time.Second, "rpc:-32000", "hello"},
		{"-32022 legacy list", pkgProbeAnswer, fixed("-discover", "error", "-code", "-32022", "-supported", "2025-11-25,2025-06-18"), 20 * time.Second, "rpc:-32022", "hello"},
		{"-32004 legacy list", pkgProbeAnswer, fixed("-discover", "error", "-code", "-32004", "-supported", "2025-11-25"), 20 * time.Second, "rpc:-32004", "hello"},
		{"legacy-only DiscoverResult", pkgProbeAnswer, fixed("-discover", "legacy-result"), 20 * time.Second, "discover:legacy", "hello"},
		{"malformed", pkgProbeAnswer, fixed("-discover", "malformed"), 20 * time.Second, "invalid", "hello"},
		{"huge", pkgProbeAnswer, fixed("-discover", "huge"), 20 * time.Second, "oversize", "hello"},
		{"banner and noise before the answer", pkgProbeAnswer, fixed("-discover", "error", "-noise"), 20 * time.Second, "rpc:-32601", "hello"},
		{"slow boot, then -32601", pkgProbeAnswer, fixed("-discover", "error", "-boot", "300ms"), 20 * time.Second, "rpc:-32601", "hello"},
		{"silent within the budget", pkgProbeAnswer, fixed("-discover", "silent"), 3 * time.Second, "stdio:timeout", "hello"},
		{"truncated answer", pkgProbeAnswer, fixed("-discover", "truncated"), 3 * time.Second, "stdio:timeout", "hello"},
		{"exits on the probe", pkgProbeAnswer, fixed("-discover", "exit"), 20 * time.Second, "stdio:closed", "hello"},
		{"lockfile", pkgLockfile, func(t *testing.T) []string { return []string{"-lock", lock(t)} }, 20 * time.Second, "rpc:-32022", "echo"},
		{"lockfile held by a grandchild", pkgLockfile, func(t *testing.T) []string { return []string{"-lock", lock(t), "-grandchild"} }, 20 * time.Second, "rpc:-32022", "echo"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newProcs(t, tc.pkg, tc.args(t)...)
			spec := stdioSpec(p, ModeAuto, tc.window)
			cache := newMemCache()
			spec.Cache, spec.CacheKey = cache, "legacy"
			res := mustConnect(t, spec, p)

			v := res.Verdict
			if v.Era != EraLegacy || v.ProtocolVersion != LegacyVersion || v.Label != tc.wantLabel || v.Provisional {
				t.Errorf("verdict %+v, want legacy %s with label %q", v, LegacyVersion, tc.wantLabel)
			}
			if !hasPrefix(v.Evidence, "legacy: ") {
				t.Errorf("evidence %q", v.Evidence)
			}
			if p.starts() != 2 {
				t.Errorf("%d process starts, want 2 (sibling, session)", p.starts())
			}
			if !slices.Equal(p.unreapedAtStart, []int{0, 0}) {
				t.Errorf("unreaped processes when each command was built: %v, want the sibling reaped before the session", p.unreapedAtStart)
			}
			if names := toolNames(t, res.Session); !slices.Contains(names, tc.wantTool) {
				t.Errorf("tools %v lack %s", names, tc.wantTool)
			}
			if got := callText(t, res.Session, tc.wantTool, map[string]any{"text": "legacy"}); got == "" {
				t.Error("empty tool answer")
			}
			if c, ok := cache.entry("legacy"); !ok || c.Era != EraLegacy || c.Label != tc.wantLabel {
				t.Errorf("cache entry %+v, %v; want the legacy verdict", c, ok)
			}
		})
	}
}

func fixed(args ...string) func(*testing.T) []string {
	return func(*testing.T) []string { return args }
}

// TestFailStdio: probe answers that say mcphost cannot talk to the server
// surface as errors, start no session process and store nothing.
func TestFailStdio(t *testing.T) {
	tests := []struct {
		name        string
		args        []string
		wantLabel   string
		wantProbes  int // discover frames the server saw
		wantMessage string
	}{
		{"-32020", []string{"-discover", "error", "-code", "-32020"}, "rpc:-32020", 1, "headers"},
		{"-32021", []string{"-discover", "error", "-code", "-32021"}, "rpc:-32021", 1, "capability"},
		{"-32022 future only", []string{"-discover", "error", "-code", "-32022", "-supported", "2099-01-01"}, "rpc:-32022", 1, "2099-01-01"},
		{"-32022 twice (corrective once)", []string{"-discover", "error", "-code", "-32022", "-supported", "2026-07-28"}, "rpc:-32022", 2, "twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := recordPath(t)
			p := newProcs(t, pkgProbeAnswer, append(tc.args, "-record", rec)...)
			spec := stdioSpec(p, ModeAuto, 20*time.Second)
			cache := newMemCache()
			spec.Cache, spec.CacheKey = cache, "fail"
			_, err := connect(t, spec)
			var pe *ProbeError
			if !errors.As(err, &pe) || pe.Label != tc.wantLabel || !strings.Contains(err.Error(), tc.wantMessage) {
				t.Fatalf("error %v, want a *ProbeError labelled %q mentioning %q", err, tc.wantLabel, tc.wantMessage)
			}
			if p.starts() != 1 {
				t.Errorf("%d process starts, want only the sibling", p.starts())
			}
			if p.cmds[0].ProcessState == nil {
				t.Error("the sibling was not reaped")
			}
			if _, puts, _ := cache.counts(); puts != 0 {
				t.Errorf("%d cache puts, want none", puts)
			}
			if n := countMethod(readRecords(t, rec), "server/discover"); n != tc.wantProbes {
				t.Errorf("%d discover frames, want %d", n, tc.wantProbes)
			}
		})
	}
}

// TestLegacyMode: version_negotiation = "legacy" sends no discover frame and
// starts one process, whatever the cache holds.
func TestLegacyMode(t *testing.T) {
	t.Parallel()
	rec := recordPath(t)
	p := newProcs(t, pkgProbeAnswer, "-discover", "exit", "-record", rec)
	spec := stdioSpec(p, ModeLegacy, 20*time.Second)
	cache := newMemCache()
	spec.Cache, spec.CacheKey = cache, "legacy-mode"
	res := mustConnect(t, spec, p)
	if v := res.Verdict; v.Era != EraLegacy || v.Label != "config" || v.Evidence != `legacy: version_negotiation = "legacy"` {
		t.Errorf("verdict %+v", v)
	}
	if got := callText(t, res.Session, "hello", nil); got != "hello from probeanswer" {
		t.Errorf("hello = %q", got)
	}
	closeResult(res)
	if p.starts() != 1 {
		t.Errorf("%d process starts, want 1", p.starts())
	}
	recs := readRecords(t, rec)
	if n := countMethod(recs, "server/discover"); n != 0 {
		t.Errorf("%d discover frames in legacy mode: %v", n, methods(recs))
	}
	if countMethod(recs, "initialize") != 1 {
		t.Errorf("frames %v, want one initialize", methods(recs))
	}
	if gets, puts, dels := cache.counts(); gets+puts+dels != 0 {
		t.Errorf("legacy mode used the cache: %d gets, %d puts, %d deletes", gets, puts, dels)
	}
}

// TestBudgetSkip: a window too small for probe plus fallback skips the probe
// (no discover frame, one process) and says so; the skip is not stored.
func TestBudgetSkip(t *testing.T) {
	tests := []struct {
		probe  string
		window time.Duration
	}{
		{StdioProbeSibling, 1500 * time.Millisecond},
		{StdioProbeInPlace, 1050 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.probe, func(t *testing.T) {
			t.Parallel()
			rec := recordPath(t)
			p := newProcs(t, pkgProbeAnswer, "-discover", "exit", "-record", rec)
			spec := stdioSpec(p, ModeAuto, tc.window)
			spec.StdioProbe = tc.probe
			cache := newMemCache()
			spec.Cache, spec.CacheKey = cache, "budget"
			res := mustConnect(t, spec, p)
			want := "legacy: probe skipped, budget " + tc.window.String()
			if v := res.Verdict; v.Era != EraLegacy || v.Label != "budget" || v.Evidence != want {
				t.Errorf("verdict %+v, want evidence %q", v, want)
			}
			closeResult(res)
			if p.starts() != 1 {
				t.Errorf("%d process starts, want 1", p.starts())
			}
			if recs := readRecords(t, rec); countMethod(recs, "server/discover") != 0 {
				t.Errorf("a discover frame despite the skip: %v", methods(recs))
			}
			if _, puts, _ := cache.counts(); puts != 0 {
				t.Errorf("%d cache puts, want none for a budget skip", puts)
			}
		})
	}
}

// TestInPlaceLegacy: the in-place probe falls back on the same process, and
// a server that exits on the probe is respawned once, pinned legacy, and
// that verdict is not stored.
func TestInPlaceLegacy(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantLabel  string
		wantStarts int
		wantStored bool
	}{
		{"-32601", []string{"-discover", "error"}, "inplace:sdk", 1, true},
		{"silent", []string{"-discover", "silent"}, "inplace:sdk", 1, true},
		{"exits on the probe", []string{"-discover", "exit"}, "inplace:respawn", 2, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newProcs(t, pkgProbeAnswer, tc.args...)
			spec := stdioSpec(p, ModeAuto, 3*time.Second)
			spec.StdioProbe = StdioProbeInPlace
			cache := newMemCache()
			spec.Cache, spec.CacheKey = cache, "inplace"
			res := mustConnect(t, spec, p)
			if v := res.Verdict; v.Era != EraLegacy || v.ProtocolVersion != LegacyVersion || v.Label != tc.wantLabel {
				t.Errorf("verdict %+v, want legacy labelled %q", v, tc.wantLabel)
			}
			if got := callText(t, res.Session, "hello", nil); got != "hello from probeanswer" {
				t.Errorf("hello = %q", got)
			}
			if p.starts() != tc.wantStarts {
				t.Errorf("%d process starts, want %d", p.starts(), tc.wantStarts)
			}
			if _, ok := cache.entry("inplace"); ok != tc.wantStored {
				t.Errorf("stored = %v, want %v", ok, tc.wantStored)
			}
		})
	}
}
