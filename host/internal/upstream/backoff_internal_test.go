package upstream

import "testing"

func TestBackoff(t *testing.T) {
	const lo, hi = 500_000_000, 60_000_000_000 // 500ms, 1m
	tests := []struct {
		attempt  int
		min, max int64
	}{
		{0, lo * 8 / 10, lo * 12 / 10},
		{1, 2 * lo * 8 / 10, 2 * lo * 12 / 10},
		{3, 8 * lo * 8 / 10, 8 * lo * 12 / 10},
		{20, hi * 8 / 10, hi * 12 / 10},
		{1000, hi * 8 / 10, hi * 12 / 10},
	}
	for _, tc := range tests {
		for range 100 {
			d := int64(backoff(tc.attempt, lo, hi))
			if d < tc.min || d > tc.max {
				t.Fatalf("backoff(%d) = %d, want in [%d, %d]", tc.attempt, d, tc.min, tc.max)
			}
		}
	}
}
