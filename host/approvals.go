package host

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"time"

	"github.com/mcphost/mcphost/host/internal/questions"
	"github.com/mcphost/mcphost/host/store"
)

// EventApproval is published when a call waits for an approval (Data:
// Approval) and EventApprovalDone when it no longer does (Data:
// ApprovalDone), to everyone who may see it: the principal whose call
// waits, its approvers and the admins.
const (
	eventApproval     = "approval"
	eventApprovalDone = "approval_done"
)

// ask registers a call of p's, publishes it, and waits for the answer,
// the timeout or ctx, or for the client of the call to go away
// (WithClient). It returns the outcome. a.Approvers says who may answer
// (the rule's approvers).
func (h *Host) ask(ctx context.Context, p Principal, a Approval) (string, error) {
	principal := p.Name
	timeout := h.approvalTimeout(h.gen())
	a.ID = "a_" + randomHex(8)
	a.Created = time.Now().UTC()
	a.Expires = a.Created.Add(timeout)
	a.Principal = principal
	a.CanAnswer = false // said per caller
	mine := a
	mine.CanAnswer = mayApprove(p, a)
	wait, stop := untilClientGone(ctx)
	defer stop()
	out, err := h.asks.approvals.Ask(wait, questions.Question[Approval, bool]{
		ID: a.ID, Principal: principal, Answerers: a.Approvers, Body: a, Created: a.Created, Timeout: timeout,
		Announce: func() {
			h.publishApproval(a)
			notifyPending(ctx, mine)
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
		outcome = questions.ApprovalExpired
	}
	done := ApprovalDone{ID: a.ID, SessionID: a.SessionID, CallID: a.CallID, Outcome: outcome, Principal: principal, Approvers: a.Approvers}
	h.publishApprovalDone(done)
	h.asks.approvals.Finish(a.ID, principal, out, done)
	return outcome, nil
}

// approver is c as the broker knows those who list and answer approvals:
// an admin sees every one.
func approver(c Caller) questions.Who {
	return questions.Who{Name: c.Name, Groups: c.Groups, All: c.Admin}
}

// mayApprove reports whether p may answer a (the principal whose call
// waits, unless the rule names approvers; else one of them): what an
// answer given in-band, by the client that made the call, must pass.
func mayApprove(p Principal, a Approval) bool {
	return questions.MayAnswer(questions.Who{Name: p.Name, Groups: p.Groups}, a.Principal, a.Approvers)
}

// approvalFor returns a as c may see it (CanAnswer said for c); false when
// c may not see it.
func approvalFor(a Approval, c Caller) (Approval, bool) {
	w := approver(c)
	if !questions.MaySee(w, a.Principal, a.Approvers) {
		return Approval{}, false
	}
	a.CanAnswer = questions.MayAnswer(w, a.Principal, a.Approvers)
	return a, true
}

// publishApproval announces a to everyone who may see it, each with
// whether it may answer it.
func (h *Host) publishApproval(a Approval) {
	h.ev.bus.PublishEach(Event{Type: eventApproval, Data: a}, func(c Caller) (any, bool) { return approvalFor(a, c) })
}

// publishApprovalDone announces the end of an approval to everyone who
// may have seen it.
func (h *Host) publishApprovalDone(d ApprovalDone) {
	h.ev.bus.PublishEach(Event{Type: eventApprovalDone, Data: d}, func(c Caller) (any, bool) {
		return d, questions.MaySee(approver(c), d.Principal, d.Approvers)
	})
}

// PendingApprovals lists p's calls that wait for approval and those p may
// answer, oldest first: on a clustered store those of every replica. It
// is ApprovalsFor a caller that is no admin.
func (h *Host) PendingApprovals(p Principal) []Approval {
	return h.ApprovalsFor(Caller{Principal: p})
}

// ApprovalsFor lists the calls waiting for approval that c may see,
// oldest first, on a clustered store those of every replica: its own
// calls', those it may answer (CanAnswer), and, for an admin, every one.
func (h *Host) ApprovalsFor(c Caller) []Approval {
	var out []Approval
	for _, a := range h.asks.approvals.Pending(approver(c)) {
		if a, ok := approvalFor(a, c); ok {
			out = append(out, a)
		}
	}
	n := len(out)
	h.otherApprovals(func(a Approval) {
		if a, ok := approvalFor(a, c); ok {
			out = append(out, a)
		}
	})
	if len(out) > n {
		sort.SliceStable(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	}
	return out
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

// Answer is AnswerApproval by p, no admin.
func (h *Host) Answer(p Principal, id string, approve bool) error {
	return h.AnswerApproval(Caller{Principal: p}, id, approve)
}

// AnswerApproval approves (once) or denies a pending approval as c, also
// one of another replica sharing the store. Its approvers may answer it:
// the rule's, else the principal whose call waits. It returns
// ErrNotApprover when c may see the approval but not answer it, and
// ErrNotFound when there is no such approval, c may not see it, or it was
// already answered (here or on another replica).
func (h *Host) AnswerApproval(c Caller, id string, approve bool) error {
	err := h.asks.approvals.Answer(approver(c), id, approve)
	if errors.Is(err, questions.ErrNotHere) {
		err = h.answerRemote(approver(c), id, pokeApproval, approvalAnswer{Approve: approve}, nil)
	}
	if errors.Is(err, questions.ErrNotAnswerer) {
		return ErrNotApprover
	}
	return err
}

// AuditLog returns a page of the policy decisions c may read, newest
// first (see store.AuditLog): its own, or every principal's for an
// admin.
func (h *Host) AuditLog(ctx context.Context, c Caller, before int64, limit int) ([]store.Audit, error) {
	if h.store == nil {
		return nil, ErrNoStore
	}
	if c.Admin {
		return h.store.AuditLogAll(ctx, before, limit)
	}
	return h.store.AuditLog(ctx, c.Name, before, limit)
}
