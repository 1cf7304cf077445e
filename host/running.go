package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/mcphost/mcphost/host/internal/upstream"
)

// The running calls, by principal and call id: for CancelCall and to
// refuse a call id in use.

// ErrCallIDInUse is returned when a running call already has the callId.
var ErrCallIDInUse = errors.New("a call with this callId is already running")

// runningCall is a call that can be cancelled through CancelCall.
type runningCall struct {
	principal string
	sessionID string
	cancel    context.CancelFunc
	// progress is the call's last progress notification, for CallState
	// (the CLI shows it while it waits for the call through the daemon).
	progress atomic.Pointer[upstream.Progress]
}

// calls tracks the running calls by callId.
type calls struct {
	mu      sync.Mutex
	running map[string]*runningCall
	wg      sync.WaitGroup
	idleCh  chan struct{} // closed when running becomes empty (idle)
}

// CancelCall cancels a running call of principal's session. It returns
// ErrNotFound when no such call is running (or it belongs to someone else).
func (h *Host) CancelCall(p Principal, sessionID, callID string) error {
	h.pipe.calls.mu.Lock()
	defer h.pipe.calls.mu.Unlock()
	rc, ok := h.pipe.calls.running[runningKey(p.Name, callID)]
	if !ok || rc.principal != p.Name || rc.sessionID != sessionID {
		return ErrNotFound
	}
	rc.cancel()
	return nil
}

// runningKey scopes a callId to its principal: one principal can neither
// see nor block another's call ids.
func runningKey(principal, callID string) string { return principal + "\x00" + callID }

// validCallID accepts ids that fit in a URL path segment unescaped.
func validCallID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
		default:
			return false
		}
	}
	return true
}

func (cs *calls) add(id string, rc *runningCall) error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.running == nil {
		cs.running = map[string]*runningCall{}
	}
	if _, dup := cs.running[id]; dup {
		return ErrCallIDInUse
	}
	cs.running[id] = rc
	cs.wg.Add(1)
	return nil
}

func (cs *calls) remove(id string) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	delete(cs.running, id)
	if len(cs.running) == 0 && cs.idleCh != nil {
		close(cs.idleCh)
		cs.idleCh = nil
	}
	cs.wg.Done()
}

// cancelAll cancels every running call (at shutdown, after the grace period).
func (cs *calls) cancelAll() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, rc := range cs.running {
		rc.cancel()
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
