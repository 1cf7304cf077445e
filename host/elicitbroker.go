package host

import (
	"context"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// The broker: pending elicitations of the WebShell and API doors.

type pendingElicitation struct {
	Elicitation
	principal string
	schema    *jsonschema.Resolved
	answer    chan ElicitationAnswer // buffered 1; the first answer wins
	answered  bool                   // under elicitations.mu
}

// elicitations holds the pending elicitations by id.
type elicitations struct {
	mu      sync.Mutex
	pending map[string]*pendingElicitation
}

// elicitTimeout is how long a question of generation g waits:
// elicitation_timeout, else Options.ApprovalTimeout (by default both 2m).
func (h *Host) elicitTimeout(g *generation) time.Duration {
	if g != nil && g.cfg != nil && g.cfg.ElicitationTimeout > 0 {
		return g.cfg.ElicitationTimeout
	}
	return h.opts.ApprovalTimeout
}

// elicitBroker registers e, publishes it, and waits for the principal's
// answer, the timeout (elicitTimeout) or ctx: the elicitFunc of
// the WebShell and API doors.
func (h *Host) elicitBroker(ctx context.Context, principal string, e Elicitation, schema *jsonschema.Resolved) (ElicitationAnswer, error) {
	timeout := h.elicitTimeout(h.gen())
	e.ID = "e_" + randomHex(8)
	e.Created = time.Now().UTC()
	e.Expires = e.Created.Add(timeout)
	p := &pendingElicitation{Elicitation: e, principal: principal, schema: schema, answer: make(chan ElicitationAnswer, 1)}

	h.elicits.mu.Lock()
	n := 0
	for _, q := range h.elicits.pending {
		if q.principal == principal {
			n++
		}
	}
	if n >= maxPendingElicitations {
		h.elicits.mu.Unlock()
		return ElicitationAnswer{}, ErrTooManyElicitations
	}
	if h.elicits.pending == nil {
		h.elicits.pending = map[string]*pendingElicitation{}
	}
	h.elicits.pending[e.ID] = p
	h.elicits.mu.Unlock()

	h.publish(Event{Type: EventElicitation, Principal: principal, Data: e})
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var ans ElicitationAnswer
	select {
	case ans = <-p.answer:
	case <-timer.C:
		ans.Action = ElicitExpired
	case <-ctx.Done():
		ans.Action = ElicitCancelled
	}
	h.elicits.mu.Lock()
	delete(h.elicits.pending, e.ID)
	h.elicits.mu.Unlock()
	h.publish(Event{Type: EventElicitationDone, Principal: principal,
		Data: ElicitationDone{ID: e.ID, SessionID: e.SessionID, CallID: e.CallID, Outcome: ans.Action}})
	return ans, nil
}

// PendingElicitations lists principal's open questions, oldest first.
func (h *Host) PendingElicitations(p Principal) []Elicitation {
	h.elicits.mu.Lock()
	defer h.elicits.mu.Unlock()
	return pendingOf(h.elicits.pending, p.Name, func(q *pendingElicitation) (Elicitation, string, time.Time) {
		return q.Elicitation, q.principal, q.Created
	})
}

// AnswerElicitation answers one of principal's open questions. It returns
// ErrNotFound when there is no such question, it belongs to someone else,
// or it was already answered; an *ElicitationAnswerError when the answer
// does not fit (an unknown action, content that does not match the
// requested schema or is too large), and the question stays open.
func (h *Host) AnswerElicitation(p Principal, id string, ans ElicitationAnswer) error {
	h.elicits.mu.Lock()
	defer h.elicits.mu.Unlock()
	q, ok := h.elicits.pending[id]
	if !ok || q.principal != p.Name || q.answered {
		return ErrNotFound
	}
	if ans.Action == ElicitAccept && q.Mode == ElicitURL && len(ans.Content) > 0 {
		return &ElicitationAnswerError{Reason: "a url-mode question takes no content"}
	}
	schema := q.schema
	if q.Mode == ElicitURL {
		schema = nil
	}
	if err := checkAnswer(ans, schema); err != nil {
		return err
	}
	q.answered = true
	q.answer <- ans // buffered, and only the first answer gets here
	return nil
}
