package host

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcphost/mcphost/host/store"
)

// The broker: pending elicitations of the WebShell and API doors.

type pendingElicitation struct {
	Elicitation
	principal string
	schema    *jsonschema.Resolved
	answer    chan ElicitationAnswer // buffered 1; the first answer wins
	answered  bool                   // under elicitations.mu
	// stored says the question is also a store row (clustered): an answer
	// is recorded there first, so one answer wins across replicas.
	stored bool
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
	h.elicits.mu.Unlock()
	if n >= maxPendingElicitations || n+h.otherQuestionCount(principal, pokeElicitation) >= maxPendingElicitations {
		return ElicitationAnswer{}, ErrTooManyElicitations
	}
	// Clustered, the question is a store row too (with its requested
	// schema), so that any replica lists, checks and answers it.
	p.stored = h.putQuestion(ctx, pokeElicitation, e.ID, principal, e, e.Created, e.Expires)
	h.elicits.mu.Lock()
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
	done := ElicitationDone{ID: e.ID, SessionID: e.SessionID, CallID: e.CallID, Outcome: ans.Action}
	h.publish(Event{Type: EventElicitationDone, Principal: principal, Data: done})
	if p.stored {
		h.doneQuestion(pokeElicitationDone, e.ID, principal, done)
	}
	return ans, nil
}

// PendingElicitations lists principal's open questions, oldest first: on
// a clustered store those of every replica.
func (h *Host) PendingElicitations(p Principal) []Elicitation {
	h.elicits.mu.Lock()
	out := pendingOf(h.elicits.pending, p.Name, func(q *pendingElicitation) (Elicitation, string, time.Time) {
		return q.Elicitation, q.principal, q.Created
	})
	h.elicits.mu.Unlock()
	return withOthers(h, out, p.Name, pokeElicitation, func(e Elicitation) time.Time { return e.Created })
}

// AnswerElicitation answers one of principal's open questions. It returns
// ErrNotFound when there is no such question, it belongs to someone else,
// or it was already answered; an *ElicitationAnswerError when the answer
// does not fit (an unknown action, content that does not match the
// requested schema or is too large), and the question stays open.
func (h *Host) AnswerElicitation(p Principal, id string, ans ElicitationAnswer) error {
	h.elicits.mu.Lock()
	q, ok := h.elicits.pending[id]
	if !ok {
		h.elicits.mu.Unlock()
		// Perhaps another replica's question: checked against its row.
		return h.answerRemote(p.Name, id, pokeElicitation, ans, func(row store.Question) error {
			var e Elicitation
			if err := json.Unmarshal(row.Body, &e); err != nil {
				return err
			}
			var schema *jsonschema.Resolved
			if e.Mode != ElicitURL && len(e.RequestedSchema) > 0 {
				rs, err := checkElicitSchema(e.RequestedSchema)
				if err != nil {
					return err
				}
				schema = rs
			}
			return checkElicitAnswer(e.Mode, ans, schema)
		})
	}
	defer h.elicits.mu.Unlock()
	if q.principal != p.Name || q.answered {
		return ErrNotFound
	}
	if err := checkElicitAnswer(q.Mode, ans, q.schema); err != nil {
		return err
	}
	if q.stored {
		// The first answer across replicas wins: the store decides.
		h.elicits.mu.Unlock()
		err := h.answerStored(p.Name, id, ans)
		h.elicits.mu.Lock()
		if err != nil {
			return err
		}
		if q.answered { // our answer, delivered meanwhile from its row (a resync)
			return nil
		}
	}
	q.answered = true
	q.answer <- ans // buffered, and only the first answer gets here
	return nil
}

// checkElicitAnswer checks ans against a question of mode with schema (the
// schema is not used in url mode, which takes no content).
func checkElicitAnswer(mode string, ans ElicitationAnswer, schema *jsonschema.Resolved) error {
	if ans.Action == ElicitAccept && mode == ElicitURL && len(ans.Content) > 0 {
		return &ElicitationAnswerError{Reason: "a url-mode question takes no content"}
	}
	if mode == ElicitURL {
		schema = nil
	}
	return checkAnswer(ans, schema)
}
