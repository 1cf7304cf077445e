package host

import (
	"errors"
	"testing"
)

// TestReadinessAndRefusal: a host is "starting" until Start, "ready"
// after, and "draining" once Serve's context ended; a draining host
// refuses new calls with a DrainingError that names the replica.
func TestReadinessAndRefusal(t *testing.T) {
	h := &Host{opts: Options{Replica: "r-1"}}
	if r := h.Readiness(); r.Ready || r.Status != "starting" || r.Replica != "r-1" {
		t.Fatalf("before Start: %+v", r)
	}
	h.life.started.Store(true)
	if r := h.Readiness(); !r.Ready || r.Status != "ready" {
		t.Fatalf("started: %+v", r)
	}
	if err := h.refuseIfDraining(); err != nil {
		t.Fatal(err)
	}
	h.life.draining.Store(true)
	if r := h.Readiness(); r.Ready || r.Status != "draining" {
		t.Fatalf("draining: %+v", r)
	}
	err := h.refuseIfDraining()
	var de *DrainingError
	if !errors.As(err, &de) || !errors.Is(err, ErrDraining) || err.Error() != "mcphost replica r-1 is draining, retry" {
		t.Fatalf("refusal: %v", err)
	}
}

// TestCallsIdle: idle is closed at once with no call running, and when
// the last running call ends otherwise.
func TestCallsIdle(t *testing.T) {
	var cs calls
	select {
	case <-cs.idle():
	default:
		t.Fatal("idle with no call is not closed")
	}
	_ = cs.add("a", &runningCall{})
	_ = cs.add("b", &runningCall{})
	idle := cs.idle()
	cs.remove("a")
	select {
	case <-idle:
		t.Fatal("idle with a call running")
	default:
	}
	cs.remove("b")
	<-idle
}
