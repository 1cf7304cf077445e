package negotiate

import (
	"testing"
	"time"
)

// TestPlanProbe pins every row of the budget table in protocol.md §3.3.
func TestPlanProbe(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		d         time.Duration
		sibling   bool
		wantProbe time.Duration
		wantSkip  bool
	}{
		{30 * time.Second, true, 5 * time.Second, false}, // stdio default
		{30 * time.Second, false, 5 * time.Second, false},
		{5 * time.Second, true, 3500 * ms, false}, // HTTP default
		{5 * time.Second, false, 4 * time.Second, false},
		{3 * time.Second, true, 1500 * ms, false},
		{3 * time.Second, false, 2 * time.Second, false},
		{1500 * ms, true, 0, true},
		{1500 * ms, false, 500 * ms, false},
		{1200 * ms, true, -300 * ms, true},
		{1200 * ms, false, 200 * ms, false},
		{100 * ms, true, -1400 * ms, true},
		{100 * ms, false, -900 * ms, true},
		// the edges of Pmin and Pcap
		{1600 * ms, true, 100 * ms, false},
		{1599 * ms, true, 99 * ms, true},
		{1100 * ms, false, 100 * ms, false},
		{1099 * ms, false, 99 * ms, true},
		{300 * time.Second, true, 5 * time.Second, false},
		{6 * time.Second, false, 5 * time.Second, false},
	}
	for _, tc := range tests {
		probe, skip := PlanProbe(tc.d, tc.sibling)
		if probe != tc.wantProbe || skip != tc.wantSkip {
			t.Errorf("PlanProbe(%v, sibling=%v) = %v, %v; want %v, %v", tc.d, tc.sibling, probe, skip, tc.wantProbe, tc.wantSkip)
		}
	}
}

func TestClampWindow(t *testing.T) {
	for _, tc := range []struct{ in, want time.Duration }{
		{0, MinDiscoveryTimeout},
		{50 * time.Millisecond, MinDiscoveryTimeout},
		{10 * time.Second, 10 * time.Second},
		{time.Hour, MaxDiscoveryTimeout},
	} {
		if got := clampWindow(tc.in); got != tc.want {
			t.Errorf("clampWindow(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
