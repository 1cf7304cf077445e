package questions

import (
	"context"
	"errors"
	"slices"
	"sort"
	"sync"
	"time"
)

// ErrNotFound is the answer to a question that does not exist here, that
// the one answering may not see, or that was already answered. The three
// are never told apart.
var ErrNotFound = errors.New("not found")

// ErrNotAnswerer is the answer of someone who may see a question but not
// answer it: its principal, when the question names other answerers, or
// an admin.
var ErrNotAnswerer = errors.New("questions: not one of the question's answerers")

// Who is someone who lists or answers questions: a principal, its
// groups, and All when it sees every open question (an admin).
type Who struct {
	Name   string
	Groups []string
	All    bool
}

// MayAnswer reports whether w may answer a question of principal whose
// answerers are named (principal or group names, as the config's admins
// are matched); no answerers means principal alone.
func MayAnswer(w Who, principal string, answerers []string) bool {
	if len(answerers) == 0 {
		return w.Name == principal
	}
	return slices.Contains(answerers, w.Name) ||
		slices.ContainsFunc(w.Groups, func(g string) bool { return slices.Contains(answerers, g) })
}

// MaySee reports whether w may see such a question: its principal (whose
// call waits), those who may answer it, and anyone with All.
func MaySee(w Who, principal string, answerers []string) bool {
	return w.All || w.Name == principal || MayAnswer(w, principal, answerers)
}

// ErrNotHere is what [Broker.Answer] returns for a question this replica
// does not hold: the caller may look for it among the other replicas'.
var ErrNotHere = errors.New("questions: not held by this replica")

// Shared is how a broker shares its questions with the other replicas of
// a cluster (the store's question rows and pokes). Every method may be
// called with the broker's lock released only.
type Shared interface {
	// Put stores a question so that any replica lists and answers it;
	// false when not clustered or the store failed (the question is then
	// answerable on this replica only).
	Put(ctx context.Context, kind, id, principal string, body any, created, expires time.Time) bool
	// Done deletes a stored question and tells the other replicas how it
	// ended (done, under doneKind).
	Done(doneKind, id, principal string, done any)
	// Others counts principal's open questions of kind on other replicas.
	Others(principal, kind string) int
	// Answer records the answer to principal's stored question: the first
	// answer across replicas wins; ErrNotFound when another came first.
	Answer(principal, id string, answer any) error
}

// End is how a wait ended.
type End int

const (
	Answered End = iota
	Expired
	Cancelled
)

// Broker holds the open questions of one kind, of type Q, answered with
// an A. Set the exported fields before the first call; a Broker must not
// be copied after.
type Broker[Q, A any] struct {
	// Kind and DoneKind name the questions and their endings for Shared.
	Kind, DoneKind string
	// Max bounds one principal's open questions of this kind, across
	// replicas; past it Ask fails with Full.
	Max  int
	Full error
	// Shared is nil on a single node.
	Shared Shared

	mu      sync.Mutex
	pending map[string]*waiting[Q, A]
}

// waiting is one open question.
type waiting[Q, A any] struct {
	q         Q
	principal string
	answerers []string // nil: principal alone
	created   time.Time
	// check refuses an answer that does not fit (nil: any fits).
	check    func(A) error
	answer   chan A // buffered 1: the first answer is delivered, once
	answered bool
	// stored: the question is also a Shared row, so an answer is
	// recorded there first and one answer wins across replicas.
	stored bool
}

// Question is one question to ask.
type Question[Q, A any] struct {
	ID string
	// Principal is whose call asks: the question counts against its
	// bound, and it always sees the question.
	Principal string
	// Answerers name who may answer (principal or group names, see
	// MayAnswer); nil means Principal alone.
	Answerers []string
	Body      Q
	Created   time.Time
	Timeout   time.Duration
	// Check refuses an answer that does not fit; nil accepts every one.
	Check func(A) error
	// Announce is called once the question can be answered (the host
	// publishes it to the principal's event streams).
	Announce func()
}

// Outcome is how a question ended.
type Outcome[A any] struct {
	Answer A   // when End is Answered
	End    End // Answered, Expired or Cancelled
	stored bool
}

// Ask registers q, announces it and waits for its first answer, its
// timeout or the end of ctx. It fails with b.Full when the principal
// already has b.Max questions of the kind open.
func (b *Broker[Q, A]) Ask(ctx context.Context, q Question[Q, A]) (Outcome[A], error) {
	if b.open(q.Principal) >= b.Max {
		return Outcome[A]{}, b.Full
	}
	w := &waiting[Q, A]{q: q.Body, principal: q.Principal, answerers: q.Answerers, created: q.Created, check: q.Check, answer: make(chan A, 1)}
	if b.Shared != nil {
		w.stored = b.Shared.Put(ctx, b.Kind, q.ID, q.Principal, q.Body, q.Created, q.Created.Add(q.Timeout))
	}
	b.mu.Lock()
	if b.pending == nil {
		b.pending = map[string]*waiting[Q, A]{}
	}
	b.pending[q.ID] = w
	b.mu.Unlock()
	if q.Announce != nil {
		q.Announce()
	}
	timer := time.NewTimer(q.Timeout)
	defer timer.Stop()
	out := Outcome[A]{stored: w.stored}
	select {
	case out.Answer = <-w.answer:
	case <-timer.C:
		out.End = Expired
	case <-ctx.Done():
		out.End = Cancelled
	}
	b.mu.Lock()
	delete(b.pending, q.ID)
	b.mu.Unlock()
	return out, nil
}

// Finish tells the other replicas how a question that Ask returned
// ended (done), when it was shared.
func (b *Broker[Q, A]) Finish(id, principal string, out Outcome[A], done any) {
	if out.stored && b.Shared != nil {
		b.Shared.Done(b.DoneKind, id, principal, done)
	}
}

// open counts principal's open questions here and on the other replicas.
func (b *Broker[Q, A]) open(principal string) int {
	b.mu.Lock()
	n := 0
	for _, w := range b.pending {
		if w.principal == principal {
			n++
		}
	}
	b.mu.Unlock()
	if b.Shared != nil && n < b.Max {
		n += b.Shared.Others(principal, b.Kind)
	}
	return n
}

// Pending returns the open questions held here that who may see,
// oldest first.
func (b *Broker[Q, A]) Pending(who Who) []Q {
	b.mu.Lock()
	defer b.mu.Unlock()
	var ws []*waiting[Q, A]
	for _, w := range b.pending {
		if MaySee(who, w.principal, w.answerers) {
			ws = append(ws, w)
		}
	}
	sort.Slice(ws, func(i, j int) bool { return ws[i].created.Before(ws[j].created) })
	out := make([]Q, 0, len(ws))
	for _, w := range ws {
		out = append(out, w.q)
	}
	return out
}

// Answer answers question id with a, as who. It returns ErrNotHere when
// this replica holds no such question, ErrNotFound when who may not see
// it or it was answered, ErrNotAnswerer when who may see it but not
// answer it, and the check's error (the question stays open) when a does
// not fit.
func (b *Broker[Q, A]) Answer(who Who, id string, a A) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	w, ok := b.pending[id]
	switch {
	case !ok:
		return ErrNotHere
	case w.answered || !MaySee(who, w.principal, w.answerers):
		return ErrNotFound
	case !MayAnswer(who, w.principal, w.answerers):
		return ErrNotAnswerer
	}
	if w.check != nil {
		if err := w.check(a); err != nil {
			return err
		}
	}
	if w.stored && b.Shared != nil {
		// The first answer across replicas wins: the store decides.
		b.mu.Unlock()
		err := b.Shared.Answer(w.principal, id, a)
		b.mu.Lock()
		if err != nil {
			return err
		}
		if w.answered { // ours, delivered meanwhile from its row
			return nil
		}
	}
	w.answered = true
	w.answer <- a
	return nil
}

// Deliver hands a question held here the answer another replica recorded
// (decode reads it from the store); an answered question keeps its first.
func (b *Broker[Q, A]) Deliver(id string, decode func() (A, bool)) {
	if !b.Holds(id) {
		return
	}
	a, ok := decode()
	if !ok {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if w := b.pending[id]; w != nil && !w.answered {
		w.answered = true
		w.answer <- a
	}
}

// Holds reports whether this replica holds the open question id.
func (b *Broker[Q, A]) Holds(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.pending[id]
	return ok
}

// Stored lists the ids of the questions held here that are shared rows.
func (b *Broker[Q, A]) Stored() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var ids []string
	for id, w := range b.pending {
		if w.stored {
			ids = append(ids, id)
		}
	}
	return ids
}
