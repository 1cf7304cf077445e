package host

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/host/internal/questions"
	"github.com/mcphost/mcphost/host/store"
)

// Events across replicas (fan-in). When the store is clustered (PostgreSQL
// shared by replicas, store.Options.Replica set) the host pokes the other
// replicas about what its subscribers hear, and publishes what the others
// poke to its own subscribers, so that a WebShell on one replica sees the
// calls, entries, approvals and elicitations of every replica. A poke names
// a row ("poke, then read") or carries small data directly:
//
//	entry             sent by the store in the append's transaction; read with store.Entry
//	call_started      Data: CallStarted
//	progress          Data: CallProgress (not sent when too big for a poke)
//	appcontext        sent by the store; it bumps AppContextVersion itself
//	reload            a reload made through the API (ReloadOptions.Announce): Options.OnPeerReload
//	approval          a question row (store.Question) to publish as EventApproval
//	approval_done     Data: ApprovalDone
//	elicitation       a question row to publish as EventElicitation
//	elicitation_done  Data: ElicitationDone
//	answer            a question row of this replica was answered elsewhere: deliver it
//	resync            (from Listen) pokes were lost: every event stream is ended, so its
//	                  client reconnects and reads anew
//
// A host never re-pokes what it heard.

// Kinds of pokes the host sends (store.PokeEntry and store.PokeAppContext
// are sent by the store).
const (
	pokeCallStarted     = "call_started"
	pokeProgress        = "progress"
	pokeReload          = "reload"
	pokeApproval        = "approval"
	pokeApprovalDone    = "approval_done"
	pokeElicitation     = "elicitation"
	pokeElicitationDone = "elicitation_done"
	pokeAnswer          = "answer"
)

// pokeQueue is how many pokes may wait for the sender; beyond it they are
// dropped (and counted), never waited for on the call path.
const pokeQueue = 1024

// fanIn is the host's half of the events across replicas.
type fanIn struct {
	wg    sync.WaitGroup
	queue chan store.Poke
	// listening is closed when the Listen loop first listens.
	listening     chan struct{}
	listeningOnce sync.Once
	// resyncs counts the resyncs after a lost listen connection, dropped
	// the pokes not sent (queue full, too big), received the pokes heard.
	resyncs, dropped, received atomic.Int64

	// ended holds the call ids of the last entries heard from other
	// replicas. An entry's poke travels with its commit, a call's start
	// and progress on another connection, so they may arrive after the
	// entry: a start or progress of an ended call is dropped, lest a
	// WebShell show a finished call as running.
	mu    sync.Mutex
	ended map[string]struct{}
	order []string
}

// endedCalls bounds fanIn.ended.
const endedCalls = 1024

// markEnded notes that the call's entry was heard.
func (f *fanIn) markEnded(callID string) {
	if callID == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended == nil {
		f.ended = map[string]struct{}{}
	}
	if _, ok := f.ended[callID]; ok {
		return
	}
	if len(f.order) >= endedCalls {
		delete(f.ended, f.order[0])
		f.order = f.order[1:]
	}
	f.ended[callID] = struct{}{}
	f.order = append(f.order, callID)
}

// hasEnded says that the call's entry was heard already.
func (f *fanIn) hasEnded(callID string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.ended[callID]
	return ok
}

// clustered says that the host shares its store with other replicas.
func (h *Host) clustered() bool { return h.store != nil && h.store.Clustered() }

// startFanIn starts the poke sender and the Listen loop (from Start).
func (h *Host) startFanIn(ctx context.Context) {
	if !h.clustered() {
		return
	}
	h.ev.fanin.wg.Add(2)
	go func() {
		defer h.ev.fanin.wg.Done()
		for {
			select {
			case p := <-h.ev.fanin.queue:
				pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				if err := h.store.Poke(pctx, p); err != nil && ctx.Err() == nil {
					h.ev.fanin.dropped.Add(1)
					h.opts.Logger.Warn("telling the other replicas", "kind", p.Kind, "err", err)
				}
				cancel()
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		defer h.ev.fanin.wg.Done()
		if err := h.store.Listen(ctx, func(p store.Poke) { h.onPoke(ctx, p) }); err != nil {
			h.opts.Logger.Error("listening for the other replicas' events", "err", err)
		}
	}()
}

// poke queues p for the other replicas, when clustered. data, when not
// nil, is encoded into p.Data; a poke too big is dropped.
func (h *Host) poke(p store.Poke, data any) {
	if !h.clustered() {
		return
	}
	if data != nil {
		raw, err := json.Marshal(data)
		if err != nil || len(raw) > store.MaxPokeBytes-512 {
			h.ev.fanin.dropped.Add(1)
			return
		}
		p.Data = raw
	}
	select {
	case h.ev.fanin.queue <- p:
	default:
		h.ev.fanin.dropped.Add(1)
	}
}

// publishShared publishes ev here and pokes the other replicas with its
// data (call_started, progress).
func (h *Host) publishShared(ev Event, kind, id string) {
	h.publish(ev)
	h.poke(store.Poke{Kind: kind, ID: id, Principal: ev.Principal}, ev.Data)
}

// onPoke handles one poke of another replica.
func (h *Host) onPoke(ctx context.Context, p store.Poke) {
	h.ev.fanin.received.Add(1)
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	switch p.Kind {
	case store.PokeListening:
		h.ev.fanin.listeningOnce.Do(func() { close(h.ev.fanin.listening) })
	case store.PokeResync:
		h.ev.fanin.resyncs.Add(1)
		n := h.ev.bus.EndAll()
		h.opts.Logger.Info("events of other replicas may have been missed; event streams ended so that their clients read anew", "streams", n)
		// An answer poke may have been lost too: read the rows of this
		// replica's stored questions again.
		for _, id := range h.storedQuestions() {
			h.onAnswer(rctx, id)
		}
	case store.PokeEntry:
		e, err := h.store.Entry(rctx, p.Principal, p.ID)
		if err != nil {
			h.opts.Logger.Warn("reading an entry another replica recorded", "entry", p.ID, "err", err)
			return
		}
		h.ev.fanin.markEnded(e.CallID)
		es := []store.Entry{e}
		h.withdrawEval(es) // recorded under the other replica's config
		h.publish(Event{Type: eventEntry, Principal: p.Principal, Data: &es[0]})
	case store.PokeAppContext:
		// The store bumped AppContextVersion: the gateway reads anew.
	case pokeCallStarted:
		if !h.ev.fanin.hasEnded(p.ID) {
			publishData[CallStarted](h, eventCallStarted, p)
		}
	case pokeProgress:
		if !h.ev.fanin.hasEnded(p.ID) {
			publishData[callProgress](h, eventProgress, p)
		}
	case pokeApprovalDone:
		var d ApprovalDone
		if err := json.Unmarshal(p.Data, &d); err != nil {
			h.opts.Logger.Warn("a poke of another replica does not decode", "kind", p.Kind, "err", err)
			return
		}
		if d.Principal == "" {
			d.Principal = p.Principal
		}
		h.publishApprovalDone(d)
	case pokeElicitationDone:
		publishData[questions.ElicitationDone](h, eventElicitationDone, p)
	case pokeApproval:
		if q, ok := h.questionOf(rctx, p); ok {
			if a, ok := approvalOf(q); ok {
				h.publishApproval(a)
			}
		}
	case pokeElicitation:
		if q, ok := h.questionOf(rctx, p); ok {
			var e Elicitation
			if json.Unmarshal(q.Body, &e) == nil {
				h.publish(Event{Type: eventElicitation, Principal: q.Principal, Data: e})
			}
		}
	case pokeAnswer:
		h.onAnswer(rctx, p.ID)
	case pokeReload:
		if f := h.opts.OnPeerReload; f != nil {
			go f(ctx)
		}
	}
}

// publishData publishes the data a poke carries as an event of type typ.
func publishData[T any](h *Host, typ string, p store.Poke) {
	var v T
	if err := json.Unmarshal(p.Data, &v); err != nil {
		h.opts.Logger.Warn("a poke of another replica does not decode", "kind", p.Kind, "err", err)
		return
	}
	h.publish(Event{Type: typ, Principal: p.Principal, Data: v})
}

// questionOf reads the question row a poke names.
func (h *Host) questionOf(ctx context.Context, p store.Poke) (store.Question, bool) {
	q, err := h.store.Question(ctx, p.ID)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) { // not found: it was answered already
			h.opts.Logger.Warn("reading a question of another replica", "id", p.ID, "err", err)
		}
		return store.Question{}, false
	}
	return q, true
}

// FanInStats are counters of the events across replicas.
type fanInStats struct {
	// Clustered says the host shares its store with other replicas.
	Clustered bool
	// Listening says the Listen loop has listened at least once.
	Listening bool
	// Received pokes from other replicas; Resyncs after a lost connection
	// (each ended every event stream); Dropped pokes not sent; Refused
	// notifications on the pokes' channel that were not sealed with the
	// cluster secret, stale or replayed (store.Store.PokesRefused).
	Received, Resyncs, Dropped, Refused int64
}

// FanIn returns the counters of the events across replicas.
func (h *Host) fanIn() fanInStats {
	st := fanInStats{Clustered: h.clustered(), Received: h.ev.fanin.received.Load(),
		Resyncs: h.ev.fanin.resyncs.Load(), Dropped: h.ev.fanin.dropped.Load()}
	if st.Clustered {
		st.Refused = h.store.PokesRefused()
	}
	select {
	case <-h.ev.fanin.listening:
		st.Listening = true
	default:
	}
	return st
}

// WaitListening waits until the host listens for the other replicas'
// events (at once when the store is not clustered) or ctx ends.
func (h *Host) waitListening(ctx context.Context) error {
	if !h.clustered() {
		return nil
	}
	select {
	case <-h.ev.fanin.listening:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// The questions (approvals, elicitations) of a cluster: stored as rows so
// that any replica lists and answers them; the replica whose call waits
// owns the row, deletes it when done, and hears of an answer given
// elsewhere by an answer poke.

// questionTimeout bounds the store work of one question.
const questionTimeout = 5 * time.Second

// putQuestion stores a question of this replica; false when not clustered
// or the store failed (the question is then answerable here only).
func (h *Host) putQuestion(ctx context.Context, kind, id, principal string, body any, created, expires time.Time) bool {
	if !h.clustered() {
		return false
	}
	raw, err := json.Marshal(body)
	if err == nil {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), questionTimeout)
		err = h.store.PutQuestion(sctx, store.Question{ID: id, Kind: kind, Principal: principal,
			Replica: h.store.Replica(), Body: raw, Created: created, Expires: expires})
		cancel()
	}
	if err != nil {
		h.opts.Logger.Warn("storing a question for the other replicas; it can be answered on this one only", "id", id, "err", err)
		return false
	}
	h.poke(store.Poke{Kind: kind, ID: id, Principal: principal}, nil)
	return true
}

// doneQuestion deletes a stored question and pokes its end.
func (h *Host) doneQuestion(kind, id, principal string, done any) {
	ctx, cancel := context.WithTimeout(context.Background(), questionTimeout)
	defer cancel()
	if err := h.store.DeleteQuestion(ctx, id); err != nil {
		h.opts.Logger.Warn("deleting an ended question", "id", id, "err", err)
	}
	h.poke(store.Poke{Kind: kind, ID: id, Principal: principal}, done)
}

// otherQuestions lists principal's questions of kind held by other
// replicas (not expired, not answered), calling add with each body.
func (h *Host) otherQuestions(principal, kind string, add func(json.RawMessage)) {
	if !h.clustered() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), questionTimeout)
	defer cancel()
	qs, err := h.store.Questions(ctx, principal)
	if err != nil {
		h.opts.Logger.Warn("listing the other replicas' questions", "err", err)
		return
	}
	for _, q := range qs {
		if q.Kind == kind && q.Replica != h.store.Replica() && h.questionAlive(ctx, q) {
			add(q.Body)
		}
	}
}

// otherApprovals calls add with each approval held by another replica
// (not expired, not answered), of any principal: the caller decides who
// may see which.
func (h *Host) otherApprovals(add func(Approval)) {
	if !h.clustered() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), questionTimeout)
	defer cancel()
	qs, err := h.store.OpenQuestions(ctx)
	if err != nil {
		h.opts.Logger.Warn("listing the other replicas' approvals", "err", err)
		return
	}
	for _, q := range qs {
		if q.Kind == pokeApproval && q.Replica != h.store.Replica() && h.questionAlive(ctx, q) {
			if a, ok := approvalOf(q); ok {
				add(a)
			}
		}
	}
}

// approvalOf decodes the approval a question row holds.
func approvalOf(q store.Question) (Approval, bool) {
	var a Approval
	if json.Unmarshal(q.Body, &a) != nil {
		return Approval{}, false
	}
	a.Principal = q.Principal // the row's owner, whatever the body says
	return a, true
}

// otherQuestionCount counts the questions of kind that other replicas
// hold for principal, so that the caps on pending questions hold across
// the cluster, not per replica. On a single node, or when the store
// cannot say, it is 0 (the local count still bounds).
func (h *Host) otherQuestionCount(principal, kind string) int {
	n := 0
	h.otherQuestions(principal, kind, func(json.RawMessage) { n++ })
	return n
}

// answerStored records answer to a stored question (the first answer
// wins, across replicas): ErrNotFound when someone answered first.
func (h *Host) answerStored(principal, id string, answer any) error {
	raw, err := json.Marshal(answer)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), questionTimeout)
	defer cancel()
	err = h.store.AnswerQuestion(ctx, principal, id, raw)
	if errors.Is(err, store.ErrNotFound) {
		return ErrNotFound
	}
	return err
}

// answerRemote answers, as who, the question id of kind held by another
// replica: who must be one of its answerers (the approvers its body
// names, else its principal; questions.ErrNotAnswerer when who may only
// see it); check is run on its row first (an elicitation's schema), the
// answer is recorded (first wins) and the owner poked.
func (h *Host) answerRemote(who questions.Who, id, kind string, answer any, check func(store.Question) error) error {
	if !h.clustered() {
		return ErrNotFound
	}
	ctx, cancel := context.WithTimeout(context.Background(), questionTimeout)
	defer cancel()
	q, err := h.store.Question(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return ErrNotFound
	case err != nil:
		return err
	case q.Kind != kind || q.Answer != nil ||
		q.Replica == h.store.Replica() || !time.Now().Before(q.Expires):
		// Another kind, answered, a question of an earlier life of this
		// replica, or expired (its replica may be gone).
		return ErrNotFound
	}
	var named struct {
		Approvers []string `json:"approvers"`
	}
	_ = json.Unmarshal(q.Body, &named) // an elicitation names none: its principal answers
	switch {
	case !questions.MaySee(who, q.Principal, named.Approvers):
		return ErrNotFound // someone else's
	case !h.questionAlive(ctx, q):
		return ErrNotFound // its call died with its replica
	case !questions.MayAnswer(who, q.Principal, named.Approvers):
		return questions.ErrNotAnswerer
	}
	if check != nil {
		if err := check(q); err != nil {
			return err
		}
	}
	if err := h.answerStored(q.Principal, id, answer); err != nil {
		return err
	}
	h.poke(store.Poke{Kind: pokeAnswer, ID: id, Principal: q.Principal}, nil)
	return nil
}

// approvalAnswer is the stored answer of an approval.
type approvalAnswer struct {
	Approve bool `json:"approve"`
}

// storedQuestions lists the ids of this replica's questions that are
// store rows.
func (h *Host) storedQuestions() []string {
	return append(h.asks.approvals.Stored(), h.asks.elicits.Stored()...)
}

// onAnswer delivers the answer another replica recorded for a question
// of this one.
func (h *Host) onAnswer(ctx context.Context, id string) {
	if !h.asks.approvals.Holds(id) && !h.asks.elicits.Holds(id) {
		return
	}
	q, err := h.store.Question(ctx, id)
	if err != nil || q.Answer == nil {
		return
	}
	h.asks.approvals.Deliver(id, func() (bool, bool) {
		var a approvalAnswer
		return a.Approve, json.Unmarshal(q.Answer, &a) == nil
	})
	h.asks.elicits.Deliver(id, func() (ElicitationAnswer, bool) {
		var a ElicitationAnswer
		return a, json.Unmarshal(q.Answer, &a) == nil
	})
}

// sharedQuestions shares the questions of a broker through the store's
// question rows and pokes (questions.Shared).
type sharedQuestions struct{ h *Host }

func (s sharedQuestions) Put(ctx context.Context, kind, id, principal string, body any, created, expires time.Time) bool {
	return s.h.putQuestion(ctx, kind, id, principal, body, created, expires)
}

func (s sharedQuestions) Done(doneKind, id, principal string, done any) {
	s.h.doneQuestion(doneKind, id, principal, done)
}

func (s sharedQuestions) Others(principal, kind string) int {
	return s.h.otherQuestionCount(principal, kind)
}

func (s sharedQuestions) Answer(principal, id string, answer any) error {
	return s.h.answerStored(principal, id, answer)
}

// approvalRows stores an approval's answer as an approvalAnswer.
type approvalRows struct{ sharedQuestions }

func (s approvalRows) Answer(principal, id string, answer any) error {
	approve, _ := answer.(bool)
	return s.sharedQuestions.Answer(principal, id, approvalAnswer{Approve: approve})
}
