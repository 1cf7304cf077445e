package host

import (
	"errors"
	"time"
)

// ErrDraining is wrapped by every [DrainingError].
var ErrDraining = errors.New("draining")

// DrainingError refuses a new tool call while the daemon drains (its
// context ended: SIGTERM or SIGINT). The call did not start, so a client
// or load balancer may retry it on another replica. The API answers it
// with 503 and Retry-After, the gateway with a JSON-RPC error.
type DrainingError struct{ Replica string }

func (e *DrainingError) Error() string {
	if e.Replica == "" {
		return "mcphost is draining, retry"
	}
	return "mcphost replica " + e.Replica + " is draining, retry"
}

func (e *DrainingError) Unwrap() error { return ErrDraining }

// Readiness is what /readyz reports.
type Readiness struct {
	Ready   bool
	Status  string // "ready", "starting" (servers not started yet) or "draining"
	Replica string
}

// Readiness reports whether the daemon takes new work: ready once Start
// ran (the servers are connecting; a call to one that is not ready yet is
// NotReadyError, as always), not ready while starting and from the moment
// Serve's context ends.
func (h *Host) Readiness() Readiness {
	r := Readiness{Replica: h.opts.Replica}
	switch {
	case h.life.draining.Load():
		r.Status = "draining"
	case !h.life.started.Load():
		r.Status = "starting"
	default:
		r.Ready, r.Status = true, "ready"
	}
	return r
}

// Replica returns the replica id of Options.Replica.
func (h *Host) Replica() string { return h.opts.Replica }

// Stopping is closed when Serve has drained and stops serving: the doors
// end their long-lived streams then (the gateway its legacy sessions).
func (h *Host) Stopping() <-chan struct{} { return h.life.stopping }

// refuseIfDraining is the pipeline's first stage.
func (h *Host) refuseIfDraining() error {
	if h.life.draining.Load() {
		return &DrainingError{Replica: h.opts.Replica}
	}
	return nil
}

func (h *Host) shutdownGrace() time.Duration {
	if h.opts.ShutdownGrace > 0 {
		return h.opts.ShutdownGrace
	}
	return DefaultShutdownGrace
}

// drain refuses new calls from now on and waits until the running ones
// have finished, or grace is over.
func (h *Host) drain(grace time.Duration) {
	h.life.draining.Store(true)
	running := h.pipe.calls.count()
	h.opts.Logger.Info("draining: /readyz is unready, new calls are refused, running calls may finish",
		"replica", h.opts.Replica, "grace", grace, "running", running)
	if running == 0 {
		return
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-h.pipe.calls.idle():
		h.opts.Logger.Info("drained: every running call has finished", "replica", h.opts.Replica)
	case <-t.C:
		h.opts.Logger.Warn("the grace period is over with calls still running", "replica", h.opts.Replica, "running", h.pipe.calls.count())
	}
}

// count returns how many calls are running.
func (cs *calls) count() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.running)
}

// idle returns a channel closed once no call is running.
func (cs *calls) idle() <-chan struct{} {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if len(cs.running) == 0 {
		c := make(chan struct{})
		close(c)
		return c
	}
	if cs.idleCh == nil {
		cs.idleCh = make(chan struct{})
	}
	return cs.idleCh
}
