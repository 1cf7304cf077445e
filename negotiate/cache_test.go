package negotiate

import (
	"context"
	"testing"
	"time"
)

// TestEraCacheWarm: a restart with a warm era cache starts no sibling
// process and connects pinned to the cached era.
func TestEraCacheWarm(t *testing.T) {
	tests := []struct {
		name    string
		pkg     string
		args    []string
		wantEra string
		tool    string
	}{
		{"legacy", pkgProbeAnswer, []string{"-discover", "error"}, EraLegacy, "hello"},
		{"modern", pkgModernOnly, nil, EraModern, "echo"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := recordPath(t)
			cache := newMemCache()
			now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

			cold := newProcs(t, tc.pkg, append(tc.args, "-record", rec)...)
			spec := stdioSpec(cold, ModeAuto, 20*time.Second)
			spec.Cache, spec.CacheKey, spec.Now = cache, "warm", func() time.Time { return now }
			res := mustConnect(t, spec, cold)
			if res.Verdict.Era != tc.wantEra || cold.starts() != 2 {
				t.Fatalf("cold start: verdict %+v after %d process starts", res.Verdict, cold.starts())
			}
			closeResult(res)
			coldDiscovers := countMethod(readRecords(t, rec), "server/discover")

			// A "restart": new commands, same cache, an hour later.
			warm := newProcs(t, tc.pkg, append(tc.args, "-record", rec)...)
			spec.NewCommand = warm.newCommand
			spec.Now = func() time.Time { return now.Add(time.Hour) }
			res = mustConnect(t, spec, warm)
			v := res.Verdict
			want := tc.wantEra + ": cached verdict from 2026-11-30T09:00:00Z"
			if v.Era != tc.wantEra || v.Label != "cache" || v.Evidence != want || !v.ObservedAt.Equal(now) {
				t.Errorf("warm verdict %+v, want evidence %q", v, want)
			}
			if warm.starts() != 1 {
				t.Errorf("warm start: %d process starts, want 1 (no sibling)", warm.starts())
			}
			callText(t, res.Session, tc.tool, map[string]any{"text": "x"})
			closeResult(res)

			recs := readRecords(t, rec)
			warmDiscovers := countMethod(recs, "server/discover") - coldDiscovers
			wantWarm := 0 // legacy: pinned, no discover at all
			if tc.wantEra == EraModern {
				wantWarm = 1 // the session's own discover, no probe
			}
			if warmDiscovers != wantWarm {
				t.Errorf("warm start sent %d discover frames, want %d: %v", warmDiscovers, wantWarm, methods(recs))
			}
			if _, puts, _ := cache.counts(); puts != 1 {
				t.Errorf("%d puts, want 1 (the cold verdict only)", puts)
			}
		})
	}
}

// TestEraCacheLegacyExpiry: a legacy verdict older than 24h is re-probed; a
// younger one is used.
func TestEraCacheLegacyExpiry(t *testing.T) {
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		age        time.Duration
		wantStarts int
		wantLabel  string
	}{
		{23 * time.Hour, 1, "cache"},
		{25 * time.Hour, 2, "rpc:-32601"},
	}
	for _, tc := range tests {
		t.Run(tc.age.String(), func(t *testing.T) {
			t.Parallel()
			p := newProcs(t, pkgProbeAnswer, "-discover", "error")
			spec := stdioSpec(p, ModeAuto, 20*time.Second)
			cache := newMemCache()
			spec.Cache, spec.CacheKey, spec.Now = cache, "expiry", func() time.Time { return now }
			old := Verdict{Era: EraLegacy, ProtocolVersion: LegacyVersion, Evidence: "legacy: probe answered -32601", Label: "rpc:-32601", ObservedAt: now.Add(-tc.age)}
			_ = cache.Put(context.Background(), storeKey("expiry"), old)

			res := mustConnect(t, spec, p)
			if res.Verdict.Label != tc.wantLabel || p.starts() != tc.wantStarts {
				t.Errorf("verdict %+v after %d starts; want label %q after %d", res.Verdict, p.starts(), tc.wantLabel, tc.wantStarts)
			}
			wantObserved := old.ObservedAt
			if tc.wantStarts == 2 {
				wantObserved = now
			}
			if c, _ := cache.entry("expiry"); !c.ObservedAt.Equal(wantObserved) {
				t.Errorf("cached verdict observed at %v, want %v", c.ObservedAt, wantObserved)
			}
		})
	}
}

// TestEraCacheWrongVerdicts: a cached verdict that proves wrong is
// detected: a modern verdict whose session ends legacy is kept but dropped
// from the cache; a legacy verdict refused with -32022 is re-probed as
// modern and replaced.
func TestEraCacheWrongVerdicts(t *testing.T) {
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	t.Run("modern verdict, legacy server", func(t *testing.T) {
		t.Parallel()
		rec := recordPath(t)
		p := newProcs(t, pkgProbeAnswer, "-discover", "error", "-record", rec)
		spec := stdioSpec(p, ModeAuto, 20*time.Second)
		cache := newMemCache()
		spec.Cache, spec.CacheKey, spec.Now = cache, "wrong", func() time.Time { return now }
		_ = cache.Put(context.Background(), storeKey("wrong"), Verdict{Era: EraModern, ProtocolVersion: ModernVersion, Label: "discover", ObservedAt: now.Add(-time.Hour)})

		res := mustConnect(t, spec, p)
		v := res.Verdict
		if v.Era != EraLegacy || v.Label != "verify:legacy" || v.ProtocolVersion != LegacyVersion {
			t.Errorf("verdict %+v, want legacy verify:legacy", v)
		}
		if got := callText(t, res.Session, "hello", nil); got != "hello from probeanswer" {
			t.Errorf("hello = %q", got)
		}
		if _, ok := cache.entry("wrong"); ok {
			t.Error("the wrong modern verdict is still cached")
		}
		if p.starts() != 1 {
			t.Errorf("%d process starts, want 1", p.starts())
		}
	})
	t.Run("legacy verdict, modern-only server", func(t *testing.T) {
		t.Parallel()
		rec := recordPath(t)
		p := newProcs(t, pkgModernOnly, "-record", rec)
		spec := stdioSpec(p, ModeAuto, 20*time.Second)
		cache := newMemCache()
		spec.Cache, spec.CacheKey, spec.Now = cache, "wrong", func() time.Time { return now }
		_ = cache.Put(context.Background(), storeKey("wrong"), Verdict{Era: EraLegacy, ProtocolVersion: LegacyVersion, Label: "stdio:timeout", ObservedAt: now.Add(-time.Hour)})

		res := mustConnect(t, spec, p)
		v := res.Verdict
		if v.Era != EraModern || v.Label != "initialize:-32022" || v.ProtocolVersion != ModernVersion {
			t.Errorf("verdict %+v, want modern initialize:-32022", v)
		}
		if got := callText(t, res.Session, "echo", map[string]any{"text": "again"}); got != "again" {
			t.Errorf("echo = %q", got)
		}
		if c, ok := cache.entry("wrong"); !ok || c.Era != EraModern {
			t.Errorf("cache entry %+v, %v; want the modern verdict", c, ok)
		}
		if p.starts() != 2 {
			t.Errorf("%d process starts, want 2 (refused legacy session, modern session)", p.starts())
		}
		if p.cmds[0].ProcessState == nil {
			t.Error("the refused session process was not reaped")
		}
	})
}

// TestBudgetSkipModernOnly: a skipped probe connects legacy; a modern-only
// server refuses initialize with -32022 and is re-probed as modern once,
// within the window.
func TestBudgetSkipModernOnly(t *testing.T) {
	t.Parallel()
	rec := recordPath(t)
	p := newProcs(t, pkgModernOnly, "-record", rec)
	spec := stdioSpec(p, ModeAuto, 1500*time.Millisecond)
	res := mustConnect(t, spec, p)
	if v := res.Verdict; v.Era != EraModern || v.Label != "initialize:-32022" {
		t.Errorf("verdict %+v", v)
	}
	closeResult(res)
	recs := readRecords(t, rec)
	if countMethod(recs, "initialize") != 1 || countMethod(recs, "server/discover") != 1 {
		t.Errorf("frames %v, want one refused initialize and one session discover", methods(recs))
	}
}
