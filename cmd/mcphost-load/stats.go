package main

import (
	"math"
	"slices"
	"time"
)

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ratio is a/b, or 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
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

// slope fits y = a + b·x by least squares and returns b, or 0 when x does
// not vary.
func slope(x, y []float64) float64 {
	n := float64(len(x))
	if len(x) < 2 || len(x) != len(y) {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for i := range x {
		sx += x[i]
		sy += y[i]
		sxx += x[i] * x[i]
		sxy += x[i] * y[i]
	}
	den := n*sxx - sx*sx
	if math.Abs(den) < 1e-12 {
		return 0
	}
	return (n*sxy - sx*sy) / den
}

// kneeStep is one point of a concurrency curve as the knee sees it.
type kneeStep struct {
	Concurrency int
	Throughput  float64 // calls/s
	P50         float64 // any unit, the same for every step
}

// knee returns the index of the first step whose median latency grew by a
// larger factor than its throughput, relative to the step before: past it,
// more concurrency mostly buys queueing. It returns -1 when latency never
// outgrew throughput (or there are fewer than two steps).
func knee(steps []kneeStep) int {
	for i := 1; i < len(steps); i++ {
		prev, cur := steps[i-1], steps[i]
		if prev.Throughput <= 0 || prev.P50 <= 0 {
			continue
		}
		if cur.P50/prev.P50 > cur.Throughput/prev.Throughput {
			return i
		}
	}
	return -1
}
