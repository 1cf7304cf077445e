package main

import (
	"slices"
	"time"
)

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// percentile returns the p-th percentile (0 ≤ p < 100) of ds: the value at
// index n·p/100 of the sorted durations, as internal/benchpair and
// BenchmarkGatewayCall take it; 0 for none.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

// median returns the median of xs (the mean of the middle two for an even
// count), or 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// ratio is a/b, or 0 when either is not positive (a figure that is
// missing or was not measured).
func ratio(a, b float64) float64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	return a / b
}

// spread is a figure over batches or repetitions: their median, minimum
// and maximum. N = 0 means the figure was not measured.
type spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

// spreadOf summarizes xs, leaving out values that are not positive (a
// ratio with a missing side); the zero spread when none is left.
func spreadOf(xs []float64) spread {
	var v []float64
	for _, x := range xs {
		if x > 0 {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return spread{}
	}
	return spread{Median: median(v), Min: slices.Min(v), Max: slices.Max(v), N: len(v)}
}

// ratios returns a[i]/b[i] for each i of the shorter of a and b (0 where
// either is missing), so that a per-batch ratio pairs the batches that
// ran together.
func ratios(a, b []float64) []float64 {
	out := make([]float64, min(len(a), len(b)))
	for i := range out {
		out[i] = ratio(a[i], b[i])
	}
	return out
}
