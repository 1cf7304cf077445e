package host

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcphost/mcphost/host/internal/questions"
	"github.com/mcphost/mcphost/host/store"
)

// Questions whose replica died.
//
// An approval or elicitation is stored so that any replica can list and
// answer it, but the call that waits for it runs on one replica. When that
// replica dies (or is started again: a new process under the same id), its
// call is gone, and its question would stay listed, unanswerable in effect,
// until it expired. A question is alive while the directory of replicas
// has its replica, seen within the last heartbeats, started no later than
// the question was asked (both times are that replica's own clock). The
// others are left out of every list and count at once, refused when
// answered, and deleted by a once-only sweep that also tells every
// WebShell the question ended ("cancelled").

// questionSweepJob is the once-only job that deletes dead questions.
const questionSweepJob = "question-sweep"

// questionSweepEvery is how often the sweep runs (a variable for tests:
// export_test.go).
var questionSweepEvery = 10 * time.Second

// questionAlive reports whether the call that asked q may still be
// waiting for it. Without a cluster node, or when the directory cannot be
// read, it cannot tell, and says yes (expiry still bounds the question).
func (h *Host) questionAlive(ctx context.Context, q store.Question) bool {
	node := h.opts.Cluster
	if node == nil || q.Replica == "" {
		return true
	}
	r, ok, err := node.Lookup(ctx, q.Replica)
	if err != nil {
		return true
	}
	return ok && !r.Started.After(q.Created)
}

// startQuestionSweep starts the sweep on a clustered host with a node;
// it ends with ctx and Close waits for it.
func (h *Host) startQuestionSweep(ctx context.Context) {
	if !h.clustered() || h.opts.Cluster == nil {
		return
	}
	h.asks.sweep.Add(1)
	go func() {
		defer h.asks.sweep.Done()
		whileLeading(ctx, h.store, h.opts.Logger, questionSweepJob, 0, func(ctx context.Context) {
			t := time.NewTicker(questionSweepEvery)
			defer t.Stop()
			for {
				if n := h.sweepQuestions(ctx); n > 0 {
					h.opts.Logger.Info("ended the questions of calls whose replica is gone", "count", n)
				}
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		})
	}()
}

// sweepQuestions deletes the open questions that are not alive and tells
// every replica's WebShells they ended; it returns how many it ended.
func (h *Host) sweepQuestions(ctx context.Context) int {
	qctx, cancel := context.WithTimeout(ctx, questionTimeout)
	defer cancel()
	qs, err := h.store.OpenQuestions(qctx)
	if err != nil {
		if ctx.Err() == nil {
			h.opts.Logger.Warn("listing open questions for the sweep", "err", err)
		}
		return 0
	}
	n := 0
	for _, q := range qs {
		if h.questionAlive(qctx, q) {
			continue
		}
		var ids struct {
			ID        string `json:"id"`
			SessionID string `json:"sessionId"`
			CallID    string `json:"callId"`
		}
		_ = json.Unmarshal(q.Body, &ids)
		switch q.Kind {
		case pokeApproval:
			a, _ := approvalOf(q)
			done := ApprovalDone{ID: q.ID, SessionID: ids.SessionID, CallID: ids.CallID, Outcome: ApprovalCancelled,
				Principal: q.Principal, Approvers: a.Approvers}
			h.publishApprovalDone(done)
			h.doneQuestion(pokeApprovalDone, q.ID, q.Principal, done)
		case pokeElicitation:
			done := questions.ElicitationDone{ID: q.ID, SessionID: ids.SessionID, CallID: ids.CallID, Outcome: questions.ElicitCancelled}
			h.publish(Event{Type: eventElicitationDone, Principal: q.Principal, Data: done})
			h.doneQuestion(pokeElicitationDone, q.ID, q.Principal, done)
		default:
			if err := h.store.DeleteQuestion(qctx, q.ID); err != nil {
				h.opts.Logger.Warn("deleting a dead question", "id", q.ID, "err", err)
			}
		}
		n++
	}
	return n
}
