package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host/store"
)

// EventApproval is published when a call waits for the user's approval
// (Data: Approval) and EventApprovalDone when it no longer does (Data:
// ApprovalDone).
const (
	EventApproval     = "approval"
	EventApprovalDone = "approval_done"
)

// DefaultApprovalTimeout is how long a call paused by an `ask` rule waits
// for an answer before it is denied.
const DefaultApprovalTimeout = 2 * time.Minute

// maxPendingApprovals bounds the pending approvals of one principal, so a
// client cannot pile up paused calls: across every replica of a cluster.
const maxPendingApprovals = 32

// Approval is a call paused by an `ask` policy, waiting for its principal
// to approve it once or deny it.
type Approval struct {
	ID string `json:"id"`
	// Op is the operation that waits: empty for a tool call; for another
	// (resources/read, prompts/get, …) Tool is what it is about, the
	// resource's URI or the prompt's name.
	Op        string          `json:"op,omitempty"`
	SessionID string          `json:"sessionId"`
	CallID    string          `json:"callId"`
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Origin    string          `json:"origin"`
	Rule      string          `json:"rule"`
	Message   string          `json:"message"`
	Created   time.Time       `json:"created"`
	Expires   time.Time       `json:"expires"`
}

// ApprovalDone says how a pending approval ended: "approved", "denied",
// "expired" or "cancelled".
type ApprovalDone struct {
	ID        string `json:"id"`
	SessionID string `json:"sessionId"`
	CallID    string `json:"callId"`
	Outcome   string `json:"outcome"`
}

// Outcomes of an approval.
const (
	ApprovalApproved  = "approved"
	ApprovalDenied    = "denied"
	ApprovalExpired   = "expired"
	ApprovalCancelled = "cancelled"
)

// ErrTooManyApprovals is returned when a principal already has
// maxPendingApprovals calls waiting.
var ErrTooManyApprovals = errors.New("too many calls are waiting for approval")

type pendingApproval struct {
	Approval
	principal string
	answer    chan bool // buffered 1; the first answer wins
	// stored says the approval is also a store row (clustered): an
	// answer is recorded there first, so one answer wins across replicas.
	stored bool
}

// approvals holds the pending approvals by id.
type approvals struct {
	mu      sync.Mutex
	pending map[string]*pendingApproval
}

// ask registers a, publishes it, and waits for the answer, the timeout or
// ctx. It returns the outcome.
func (h *Host) ask(ctx context.Context, principal string, a Approval) (string, error) {
	timeout := h.opts.ApprovalTimeout
	a.ID = "a_" + randomHex(8)
	a.Created = time.Now().UTC()
	a.Expires = a.Created.Add(timeout)
	p := &pendingApproval{Approval: a, principal: principal, answer: make(chan bool, 1)}

	h.approvals.mu.Lock()
	n := 0
	for _, q := range h.approvals.pending {
		if q.principal == principal {
			n++
		}
	}
	h.approvals.mu.Unlock()
	if n >= maxPendingApprovals || n+h.otherQuestionCount(principal, pokeApproval) >= maxPendingApprovals {
		return "", ErrTooManyApprovals
	}
	// Clustered, the approval is a store row too, so that any replica
	// lists and answers it (fanin.go).
	p.stored = h.putQuestion(ctx, pokeApproval, a.ID, principal, a, a.Created, a.Expires)
	h.approvals.mu.Lock()
	if h.approvals.pending == nil {
		h.approvals.pending = map[string]*pendingApproval{}
	}
	h.approvals.pending[a.ID] = p
	h.approvals.mu.Unlock()

	h.publish(Event{Type: EventApproval, Principal: principal, Data: a})
	notifyPending(ctx, a)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var outcome string
	select {
	case ok := <-p.answer:
		outcome = ApprovalDenied
		if ok {
			outcome = ApprovalApproved
		}
	case <-timer.C:
		outcome = ApprovalExpired
	case <-ctx.Done():
		outcome = ApprovalCancelled
	}
	h.approvals.mu.Lock()
	delete(h.approvals.pending, a.ID)
	h.approvals.mu.Unlock()
	done := ApprovalDone{ID: a.ID, SessionID: a.SessionID, CallID: a.CallID, Outcome: outcome}
	h.publish(Event{Type: EventApprovalDone, Principal: principal, Data: done})
	if p.stored {
		h.doneQuestion(pokeApprovalDone, a.ID, principal, done)
	}
	return outcome, nil
}

// PendingApprovals lists principal's calls that wait for approval, oldest
// first: on a clustered store those of every replica.
func (h *Host) PendingApprovals(p Principal) []Approval {
	h.approvals.mu.Lock()
	out := pendingOf(h.approvals.pending, p.Name, func(q *pendingApproval) (Approval, string, time.Time) {
		return q.Approval, q.principal, q.Created
	})
	h.approvals.mu.Unlock()
	return withOthers(h, out, p.Name, pokeApproval, func(a Approval) time.Time { return a.Created })
}

// withOthers appends to out, which is oldest first, the questions of kind
// that other replicas hold for principal (decoded as T), and keeps it
// oldest first by created.
func withOthers[T any](h *Host, out []T, principal, kind string, created func(T) time.Time) []T {
	n := len(out)
	h.otherQuestions(principal, kind, func(body json.RawMessage) {
		var v T
		if json.Unmarshal(body, &v) == nil {
			out = append(out, v)
		}
	})
	if len(out) > n {
		sort.SliceStable(out, func(i, j int) bool { return created(out[i]).Before(created(out[j])) })
	}
	return out
}

// pendingOf returns what principal waits for among pending (approvals,
// elicitations), oldest first; the caller holds pending's lock.
func pendingOf[Q any, T any](pending map[string]Q, principal string, of func(Q) (T, string, time.Time)) []T {
	type item struct {
		v  T
		at time.Time
	}
	var items []item
	for _, q := range pending {
		if v, who, at := of(q); who == principal {
			items = append(items, item{v, at})
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].at.Before(items[j].at) })
	out := make([]T, 0, len(items))
	for _, it := range items {
		out = append(out, it.v)
	}
	return out
}

// Answer approves (once) or denies a pending approval of principal, also
// one of another replica sharing the store. It returns ErrNotFound when
// there is no such approval, it belongs to someone else, or it was already
// answered (here or on another replica).
func (h *Host) Answer(p Principal, id string, approve bool) error {
	h.approvals.mu.Lock()
	q, ok := h.approvals.pending[id]
	if !ok {
		h.approvals.mu.Unlock()
		return h.answerRemote(p.Name, id, pokeApproval, approvalAnswer{Approve: approve}, nil)
	}
	defer h.approvals.mu.Unlock()
	if q.principal != p.Name {
		return ErrNotFound
	}
	if q.stored {
		// The first answer across replicas wins: the store decides.
		h.approvals.mu.Unlock()
		err := h.answerStored(p.Name, id, approvalAnswer{Approve: approve})
		h.approvals.mu.Lock()
		if err != nil {
			return err
		}
	}
	select {
	case q.answer <- approve:
		return nil
	default:
		return ErrNotFound // already answered
	}
}

// AuditLog returns a page of principal's policy decisions, newest first
// (see store.AuditLog).
func (h *Host) AuditLog(ctx context.Context, p Principal, before int64, limit int) ([]store.Audit, error) {
	if h.store == nil {
		return nil, ErrNoStore
	}
	return h.store.AuditLog(ctx, p.Name, before, limit)
}

// approvalText says how an approval that was not given ended.
func approvalText(outcome string, timeout time.Duration) string {
	switch outcome {
	case ApprovalDenied:
		return "you denied it"
	case ApprovalExpired:
		return fmt.Sprintf("the approval expired (no answer within %s)", timeout)
	default:
		return "the call was cancelled while it waited for approval"
	}
}
