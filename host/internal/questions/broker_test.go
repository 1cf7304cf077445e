package questions

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

var errFull = errors.New("full")

// rows is a Shared of one process: what a store and pokes would do.
type rows struct {
	mu       sync.Mutex
	put      map[string]bool
	done     []string
	answered map[string]any
	others   int
}

func (r *rows) Put(_ context.Context, kind, id, principal string, body any, created, expires time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.put == nil {
		r.put = map[string]bool{}
	}
	r.put[id] = true
	return true
}

func (r *rows) Done(doneKind, id, principal string, done any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = append(r.done, doneKind+" "+id)
}

func (r *rows) Others(principal, kind string) int { return r.others }

func (r *rows) Answer(principal, id string, answer any) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.answered == nil {
		r.answered = map[string]any{}
	}
	if _, ok := r.answered[id]; ok {
		return ErrNotFound // another replica answered first
	}
	r.answered[id] = answer
	return nil
}

// askAsync asks q in the background once the question is open.
func askAsync[Q, A any](b *Broker[Q, A], ctx context.Context, q Question[Q, A]) <-chan Outcome[A] {
	open := make(chan struct{})
	q.Announce = func() { close(open) }
	out := make(chan Outcome[A], 1)
	go func() {
		o, err := b.Ask(ctx, q)
		if err != nil {
			panic(err)
		}
		out <- o
	}()
	<-open
	return out
}

func TestBroker(t *testing.T) {
	odd := errors.New("odd answers only")
	tests := []struct {
		name string
		run  func(t *testing.T, b *Broker[string, int]) (Outcome[int], bool) // false: nothing to check
		want End
		ans  int
	}{
		{"answered by its principal", func(t *testing.T, b *Broker[string, int]) (Outcome[int], bool) {
			out := askAsync(b, t.Context(), Question[string, int]{ID: "q1", Principal: "alice", Body: "?", Created: time.Now(), Timeout: time.Hour})
			if err := b.Answer(Who{Name: "bob"}, "q1", 1); !errors.Is(err, ErrNotFound) {
				t.Errorf("bob answers alice's question: %v", err)
			}
			if err := b.Answer(Who{Name: "alice"}, "q1", 7); err != nil {
				t.Fatal(err)
			}
			if err := b.Answer(Who{Name: "alice"}, "q1", 9); err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrNotHere) {
				t.Errorf("a second answer: %v", err)
			}
			return <-out, true
		}, Answered, 7},
		{"expired", func(t *testing.T, b *Broker[string, int]) (Outcome[int], bool) {
			o, err := b.Ask(t.Context(), Question[string, int]{ID: "q2", Principal: "alice", Created: time.Now(), Timeout: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			return o, true
		}, Expired, 0},
		{"cancelled", func(t *testing.T, b *Broker[string, int]) (Outcome[int], bool) {
			ctx, cancel := context.WithCancel(t.Context())
			out := askAsync(b, ctx, Question[string, int]{ID: "q3", Principal: "alice", Created: time.Now(), Timeout: time.Hour})
			cancel()
			return <-out, true
		}, Cancelled, 0},
		{"an answer that does not fit leaves it open", func(t *testing.T, b *Broker[string, int]) (Outcome[int], bool) {
			check := func(a int) error {
				if a%2 == 0 {
					return odd
				}
				return nil
			}
			out := askAsync(b, t.Context(), Question[string, int]{ID: "q4", Principal: "alice", Created: time.Now(), Timeout: time.Hour, Check: check})
			if err := b.Answer(Who{Name: "alice"}, "q4", 2); !errors.Is(err, odd) {
				t.Errorf("an even answer: %v", err)
			}
			if got := b.Pending(Who{Name: "alice"}); len(got) != 1 {
				t.Errorf("pending after a refused answer: %v", got)
			}
			if err := b.Answer(Who{Name: "alice"}, "q4", 3); err != nil {
				t.Fatal(err)
			}
			return <-out, true
		}, Answered, 3},
		{"delivered from another replica", func(t *testing.T, b *Broker[string, int]) (Outcome[int], bool) {
			out := askAsync(b, t.Context(), Question[string, int]{ID: "q5", Principal: "alice", Created: time.Now(), Timeout: time.Hour})
			if ids := b.Stored(); len(ids) != 1 || ids[0] != "q5" {
				t.Errorf("stored = %v", ids)
			}
			b.Deliver("q5", func() (int, bool) { return 5, true })
			b.Deliver("q5", func() (int, bool) { return 6, true }) // the first answer wins
			return <-out, true
		}, Answered, 5},
		{"answered by an approver, not by its principal", func(t *testing.T, b *Broker[string, int]) (Outcome[int], bool) {
			out := askAsync(b, t.Context(), Question[string, int]{ID: "q6", Principal: "alice", Answerers: []string{"security"}, Body: "?", Created: time.Now(), Timeout: time.Hour})
			for _, tc := range []struct {
				who  Who
				want error
			}{
				{Who{Name: "alice", Groups: []string{"eng"}}, ErrNotAnswerer}, // it sees its own question
				{Who{Name: "root", All: true}, ErrNotAnswerer},                // an admin sees every question
				{Who{Name: "bob"}, ErrNotFound},                               // anyone else does not
			} {
				if err := b.Answer(tc.who, "q6", 1); !errors.Is(err, tc.want) {
					t.Errorf("%+v answers: %v, want %v", tc.who, err, tc.want)
				}
				if got := len(b.Pending(tc.who)); got != map[bool]int{true: 1, false: 0}[tc.want == ErrNotAnswerer] {
					t.Errorf("%+v sees %d questions", tc.who, got)
				}
			}
			if err := b.Answer(Who{Name: "carol", Groups: []string{"security"}}, "q6", 8); err != nil {
				t.Fatal(err)
			}
			return <-out, true
		}, Answered, 8},
		{"an unknown question is not held here", func(t *testing.T, b *Broker[string, int]) (Outcome[int], bool) {
			if err := b.Answer(Who{Name: "alice"}, "nope", 1); !errors.Is(err, ErrNotHere) {
				t.Errorf("answer to an unknown question: %v", err)
			}
			return Outcome[int]{}, false
		}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &rows{}
			b := &Broker[string, int]{Kind: "k", DoneKind: "k_done", Max: 4, Full: errFull, Shared: r}
			out, check := tt.run(t, b)
			if !check {
				return
			}
			if out.End != tt.want || out.Answer != tt.ans {
				t.Fatalf("outcome %+v, want end %d answer %d", out, tt.want, tt.ans)
			}
			b.Finish("x", "alice", out, nil)
			if len(r.done) != 1 {
				t.Errorf("a shared question's end is not told: %v", r.done)
			}
			if got := b.Pending(Who{Name: "alice"}); len(got) != 0 {
				t.Errorf("still pending: %v", got)
			}
		})
	}
}

// TestBrokerBound: a principal's open questions are bounded across
// replicas; another principal is not bounded by them.
func TestBrokerBound(t *testing.T) {
	r := &rows{others: 1}
	b := &Broker[string, int]{Kind: "k", Max: 3, Full: errFull, Shared: r}
	for _, id := range []string{"a", "b"} {
		askAsync(b, t.Context(), Question[string, int]{ID: id, Principal: "alice", Created: time.Now(), Timeout: time.Hour})
	}
	if _, err := b.Ask(t.Context(), Question[string, int]{ID: "c", Principal: "alice", Timeout: time.Hour}); !errors.Is(err, errFull) {
		t.Fatalf("the third open question (with one on another replica): %v, want full", err)
	}
	askAsync(b, t.Context(), Question[string, int]{ID: "d", Principal: "bob", Created: time.Now(), Timeout: time.Hour})
	if got := b.Pending(Who{Name: "alice"}); len(got) != 2 {
		t.Errorf("alice's pending = %v", got)
	}
	if got := b.Pending(Who{Name: "root", All: true}); len(got) != 3 {
		t.Errorf("an admin's pending = %v, want every open question", got)
	}
}
