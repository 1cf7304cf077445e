package host

import (
	"context"
	"errors"

	"github.com/mcphost/mcphost/host/store"
)

// A call whose `ask` rule waits for an approval can be answered at once
// (the API's Prefer: respond-async): the door hears of the approval as soon
// as it waits, answers its client, and lets the call run on. Its outcome
// is then an entry like any other, published as an event and read with
// CallState.

type pendingHookKey struct{}

// WithApprovalPending returns a context whose call tells f of its
// approval once that waits for an answer (at most once per `ask`), with
// CanAnswer said for the caller.
func WithApprovalPending(ctx context.Context, f func(Approval)) context.Context {
	return context.WithValue(ctx, pendingHookKey{}, f)
}

type clientKey struct{}

// WithClient returns a context whose calls' approvals end, as cancelled,
// when client ends: the client that made the call went away. The call
// itself runs on with ctx. For a door whose calls outlive the request
// that carried them (a 2025-11-25 gateway session, whose client may
// resume its stream), so that nobody approves a call whose client left.
func WithClient(ctx, client context.Context) context.Context {
	return context.WithValue(ctx, clientKey{}, client)
}

// untilClientGone returns ctx, ended also when the client of WithClient
// ends, and a function that releases it.
func untilClientGone(ctx context.Context) (context.Context, func()) {
	client, ok := ctx.Value(clientKey{}).(context.Context)
	if !ok || client == nil {
		return ctx, func() {}
	}
	wait, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(client, cancel)
	return wait, func() {
		stop()
		cancel()
	}
}

// notifyPending tells the hook of ctx, if any, of a waiting approval.
func notifyPending(ctx context.Context, a Approval) {
	if f, ok := ctx.Value(pendingHookKey{}).(func(Approval)); ok && f != nil {
		f(a)
	}
}

// CallState is where a call of a session stands.
type CallState struct {
	// Running: the call has not finished; Approval is its approval when it
	// waits for one.
	Running  bool
	Approval *Approval
	// Progress is the last progress notification of a running call (nil
	// before the first).
	Progress *Progress
	// Entry is the recorded entry of a finished call.
	Entry *store.Entry
}

// CallState returns the state of principal's call callID in sessionID:
// running (with its pending approval), or finished with its entry. A call
// that is neither (never made, or refused before it was recorded) is
// ErrNotFound, as is another principal's session.
func (h *Host) CallState(ctx context.Context, p Principal, sessionID, callID string) (CallState, error) {
	if h.store == nil {
		return CallState{}, ErrNoStore
	}
	if err := h.checkSession(ctx, p.Name, sessionID); err != nil {
		return CallState{}, err
	}
	h.pipe.calls.mu.Lock()
	rc, running := h.pipe.calls.running[runningKey(p.Name, callID)]
	running = running && rc.sessionID == sessionID
	h.pipe.calls.mu.Unlock()
	if running {
		st := CallState{Running: true, Progress: rc.progress.Load()}
		for _, a := range h.PendingApprovals(p) {
			if a.CallID == callID && a.SessionID == sessionID {
				st.Approval = &a
				break
			}
		}
		return st, nil
	}
	e, err := h.store.CallEntry(ctx, p.Name, sessionID, callID)
	if errors.Is(err, store.ErrNotFound) {
		return CallState{}, ErrNotFound
	}
	if err != nil {
		return CallState{}, err
	}
	return CallState{Entry: &e}, nil
}
