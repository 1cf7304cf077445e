package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/negotiate"
)

func TestPercentile(t *testing.T) {
	ms := func(xs ...int) []time.Duration {
		out := make([]time.Duration, len(xs))
		for i, x := range xs {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // 100 … 1, unsorted
	}
	for _, tc := range []struct {
		name string
		ds   []time.Duration
		p    int
		want time.Duration
	}{
		{"none", nil, 50, 0},
		{"one", ms(7), 99, 7 * time.Millisecond},
		{"p50 of odd", ms(3, 1, 2), 50, 2 * time.Millisecond},
		{"p50 of even takes the upper middle", ms(4, 1, 3, 2), 50, 3 * time.Millisecond},
		{"p99 of 100", ms(hundred...), 99, 100 * time.Millisecond},
		{"p50 of 100", ms(hundred...), 50, 51 * time.Millisecond},
		{"p0", ms(5, 9, 1), 0, time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := percentile(tc.ds, tc.p); got != tc.want {
				t.Errorf("percentile(%v, %d) = %v, want %v", tc.ds, tc.p, got, tc.want)
			}
		})
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		name string
		xs   []float64
		want float64
	}{
		{"none", nil, 0},
		{"one", []float64{2.5}, 2.5},
		{"odd", []float64{9, 1, 5}, 5},
		{"even is the mean of the middle two", []float64{4, 1, 3, 2}, 2.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := median(tc.xs); got != tc.want {
				t.Errorf("median(%v) = %v, want %v", tc.xs, got, tc.want)
			}
		})
	}
}

func TestRatios(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b []float64
		want []float64
	}{
		{"paired per batch", []float64{2, 3, 4}, []float64{1, 2, 8}, []float64{2, 1.5, 0.5}},
		{"missing reference is 0", []float64{2, 3}, []float64{0, 3}, []float64{0, 1}},
		{"missing side is 0", []float64{0, 3}, []float64{1, 3}, []float64{0, 1}},
		{"shorter wins", []float64{2, 3, 4}, []float64{1}, []float64{2}},
		{"none", nil, nil, []float64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ratios(tc.a, tc.b)); diff != "" {
				t.Errorf("ratios(%v, %v) (-want +got):\n%s", tc.a, tc.b, diff)
			}
		})
	}
}

func TestSpread(t *testing.T) {
	for _, tc := range []struct {
		name string
		xs   []float64
		want spread
		text string
	}{
		{"none", nil, spread{}, "—"},
		{"only missing values", []float64{0, -1}, spread{}, "—"},
		{"one", []float64{1.234}, spread{Median: 1.234, Min: 1.234, Max: 1.234, N: 1}, "1.23"},
		{"range", []float64{1.4, 1.2, 1.3}, spread{Median: 1.3, Min: 1.2, Max: 1.4, N: 3}, "1.30 [1.20–1.40]"},
		{"missing values left out", []float64{0, 2, 4}, spread{Median: 3, Min: 2, Max: 4, N: 2}, "3.00 [2.00–4.00]"},
		{"range nil at the precision", []float64{1.001, 1.002}, spread{Median: 1.0015, Min: 1.001, Max: 1.002, N: 2}, "1.00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := spreadOf(tc.xs)
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })); diff != "" {
				t.Errorf("spreadOf(%v) (-want +got):\n%s", tc.xs, diff)
			}
			if s := fmtSpread(got, 2); s != tc.text {
				t.Errorf("fmtSpread = %q, want %q", s, tc.text)
			}
		})
	}
}

func TestVersionOK(t *testing.T) {
	const older = "2025-06-18"
	for _, tc := range []struct {
		name          string
		got, want     string
		olderLegacyOK bool
		ok            bool
	}{
		{"same legacy", negotiate.LegacyVersion, negotiate.LegacyVersion, false, true},
		{"same modern", negotiate.ModernVersion, negotiate.ModernVersion, false, true},
		{"older legacy refused", older, negotiate.LegacyVersion, false, false},
		{"older legacy accepted for tbx", older, negotiate.LegacyVersion, true, true},
		{"legacy in the modern run refused, tbx too", older, negotiate.ModernVersion, true, false},
		{"modern in the legacy run refused", negotiate.ModernVersion, negotiate.LegacyVersion, true, false},
		{"nothing negotiated", "", negotiate.LegacyVersion, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if ok := versionOK(tc.got, tc.want, tc.olderLegacyOK); ok != tc.ok {
				t.Errorf("versionOK(%q, %q, %v) = %v, want %v", tc.got, tc.want, tc.olderLegacyOK, ok, tc.ok)
			}
		})
	}
}
