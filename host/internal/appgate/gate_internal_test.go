package appgate

import (
	"errors"
	"testing"
	"time"
)

// TestAppLimits pins the per-App limits with a fake clock: a burst of
// messages and link requests, then one per refill period; at most four
// running tool calls; Apps do not share limits.
func TestAppLimits(t *testing.T) {
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	l := &Limits{now: func() time.Time { return now }}
	var le *LimitError
	for i := range appBurst {
		if err := l.Take("a"); err != nil {
			t.Fatalf("request %d of the burst: %v", i+1, err)
		}
	}
	if err := l.Take("a"); !errors.As(err, &le) {
		t.Fatalf("request after the burst: %v, want an AppLimitError", err)
	}
	if err := l.Take("b"); err != nil {
		t.Errorf("another App is limited by the first: %v", err)
	}
	now = now.Add(appRefill)
	if err := l.Take("a"); err != nil {
		t.Errorf("after one refill period: %v", err)
	}
	if err := l.Take("a"); !errors.As(err, &le) {
		t.Errorf("second request after one refill period: %v, want refused", err)
	}
	now = now.Add(time.Hour)
	for i := range appBurst {
		if err := l.Take("a"); err != nil {
			t.Fatalf("after an hour, request %d: %v (the bucket refills to the burst, not beyond)", i+1, err)
		}
	}
	if err := l.Take("a"); err == nil {
		t.Error("the bucket refilled beyond the burst")
	}

	var releases []func()
	for i := range appCallsInFlight {
		r, err := l.AcquireCall("a")
		if err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
		releases = append(releases, r)
	}
	if _, err := l.AcquireCall("a"); !errors.As(err, &le) {
		t.Fatalf("call over the limit: %v, want an AppLimitError", err)
	}
	releases[0]()
	releases[0]() // a second release gives nothing back
	r, err := l.AcquireCall("a")
	if err != nil {
		t.Fatalf("call after a release: %v", err)
	}
	if _, err := l.AcquireCall("a"); err == nil {
		t.Error("a double release freed two slots")
	}
	r()
	for _, r := range releases[1:] {
		r()
	}
	if len(l.running) != 0 {
		t.Errorf("running = %v after every release, want empty", l.running)
	}
}
