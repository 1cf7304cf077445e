package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/mcphost/mcphost/host/internal/questions"
	"github.com/mcphost/mcphost/host/store"
)

// EventApproval is published when a call waits for the user's approval
// (Data: Approval) and EventApprovalDone when it no longer does (Data:
// ApprovalDone).
const (
	EventApproval     = "approval"
	EventApprovalDone = "approval_done"
)

// defaultApprovalTimeout is how long a call paused by an `ask` rule waits
// for an answer before it is denied.
const defaultApprovalTimeout = 2 * time.Minute

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

// ask registers a, publishes it, and waits for the answer, the timeout or
// ctx. It returns the outcome.
func (h *Host) ask(ctx context.Context, principal string, a Approval) (string, error) {
	timeout := h.opts.ApprovalTimeout
	a.ID = "a_" + randomHex(8)
	a.Created = time.Now().UTC()
	a.Expires = a.Created.Add(timeout)
	out, err := h.approvals.Ask(ctx, questions.Question[Approval, bool]{
		ID: a.ID, Principal: principal, Body: a, Created: a.Created, Timeout: timeout,
		Announce: func() {
			h.publish(Event{Type: EventApproval, Principal: principal, Data: a})
			notifyPending(ctx, a)
		},
	})
	if err != nil {
		return "", err
	}
	outcome := ApprovalCancelled
	switch {
	case out.End == questions.Answered && out.Answer:
		outcome = ApprovalApproved
	case out.End == questions.Answered:
		outcome = ApprovalDenied
	case out.End == questions.Expired:
		outcome = ApprovalExpired
	}
	done := ApprovalDone{ID: a.ID, SessionID: a.SessionID, CallID: a.CallID, Outcome: outcome}
	h.publish(Event{Type: EventApprovalDone, Principal: principal, Data: done})
	h.approvals.Finish(a.ID, principal, out, done)
	return outcome, nil
}

// PendingApprovals lists principal's calls that wait for approval, oldest
// first: on a clustered store those of every replica.
func (h *Host) PendingApprovals(p Principal) []Approval {
	return withOthers(h, h.approvals.Pending(p.Name), p.Name, pokeApproval, func(a Approval) time.Time { return a.Created })
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

// Answer approves (once) or denies a pending approval of principal, also
// one of another replica sharing the store. It returns ErrNotFound when
// there is no such approval, it belongs to someone else, or it was already
// answered (here or on another replica).
func (h *Host) Answer(p Principal, id string, approve bool) error {
	err := h.approvals.Answer(p.Name, id, approve)
	if errors.Is(err, questions.ErrNotHere) {
		return h.answerRemote(p.Name, id, pokeApproval, approvalAnswer{Approve: approve}, nil)
	}
	return err
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
