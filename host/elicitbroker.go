package host

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcphost/mcphost/host/internal/generation"
	"github.com/mcphost/mcphost/host/internal/questions"
	"github.com/mcphost/mcphost/host/store"
)

// The broker: pending elicitations of the WebShell and API doors.

// elicitTimeout is how long a question of generation g waits:
// elicitation_timeout, else Options.ApprovalTimeout (by default both 2m).
func (h *Host) elicitTimeout(g *generation.Gen) time.Duration {
	if g != nil && g.Cfg != nil && g.Cfg.ElicitationTimeout > 0 {
		return g.Cfg.ElicitationTimeout
	}
	return h.opts.ApprovalTimeout
}

// approvalTimeout is how long a call of generation g paused by an `ask`
// waits: approval_timeout, else Options.ApprovalTimeout (default 2m).
func (h *Host) approvalTimeout(g *generation.Gen) time.Duration {
	if g != nil && g.Cfg != nil && g.Cfg.ApprovalTimeout > 0 {
		return g.Cfg.ApprovalTimeout
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
	// Clustered, the question is a store row too (with its requested
	// schema), so that any replica lists, checks and answers it.
	out, err := h.asks.elicits.Ask(ctx, questions.Question[Elicitation, ElicitationAnswer]{
		ID: e.ID, Principal: principal, Body: e, Created: e.Created, Timeout: timeout,
		Check:    func(ans ElicitationAnswer) error { return checkElicitAnswer(e.Mode, ans, schema) },
		Announce: func() { h.publish(Event{Type: eventElicitation, Principal: principal, Data: e}) },
	})
	if err != nil {
		return ElicitationAnswer{}, err
	}
	ans := out.Answer
	switch out.End {
	case questions.Expired:
		ans = ElicitationAnswer{Action: questions.ElicitExpired}
	case questions.Cancelled:
		ans = ElicitationAnswer{Action: questions.ElicitCancelled}
	}
	done := questions.ElicitationDone{ID: e.ID, SessionID: e.SessionID, CallID: e.CallID, Outcome: ans.Action}
	h.publish(Event{Type: eventElicitationDone, Principal: principal, Data: done})
	h.asks.elicits.Finish(e.ID, principal, out, done)
	return ans, nil
}

// PendingElicitations lists principal's open questions, oldest first: on
// a clustered store those of every replica.
func (h *Host) PendingElicitations(p Principal) []Elicitation {
	return withOthers(h, h.asks.elicits.Pending(questions.Who{Name: p.Name}), p.Name, pokeElicitation, func(e Elicitation) time.Time { return e.Created })
}

// AnswerElicitation answers one of principal's open questions. It returns
// ErrNotFound when there is no such question, it belongs to someone else,
// or it was already answered; an *ElicitationAnswerError when the answer
// does not fit (an unknown action, content that does not match the
// requested schema or is too large), and the question stays open.
func (h *Host) AnswerElicitation(p Principal, id string, ans ElicitationAnswer) error {
	who := questions.Who{Name: p.Name}
	err := h.asks.elicits.Answer(who, id, ans)
	if !errors.Is(err, questions.ErrNotHere) {
		return err
	}
	// Perhaps another replica's question: checked against its row.
	return h.answerRemote(who, id, pokeElicitation, ans, func(row store.Question) error {
		var e Elicitation
		if err := json.Unmarshal(row.Body, &e); err != nil {
			return err
		}
		var schema *jsonschema.Resolved
		if e.Mode != ElicitURL && len(e.RequestedSchema) > 0 {
			rs, err := questions.CheckElicitSchema(e.RequestedSchema)
			if err != nil {
				return err
			}
			schema = rs
		}
		return checkElicitAnswer(e.Mode, ans, schema)
	})
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
	return questions.CheckAnswer(ans, schema)
}
