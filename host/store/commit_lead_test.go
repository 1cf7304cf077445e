package store

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// goroutineID is the calling goroutine's number, from the header of its
// stack trace ("goroutine 18 [running]:").
func goroutineID() uint64 {
	var buf [64]byte
	fields := strings.Fields(string(buf[:runtime.Stack(buf[:], false)]))
	if len(fields) < 2 || fields[0] != "goroutine" {
		panic(fmt.Sprintf("unexpected stack header %q", fields))
	}
	id, err := strconv.ParseUint(fields[1], 10, 64)
	if err != nil {
		panic(err)
	}
	return id
}

// watchLeaders records, in the beforeGroup hook, the goroutine that writes
// each group; when hold is not nil, each group then waits until hold is
// closed. The returned function gives the goroutines in the order of the
// groups.
func watchLeaders(s *Store, hold <-chan struct{}) (leaders func() []uint64) {
	var mu sync.Mutex
	var ids []uint64
	hook := func() {
		id := goroutineID()
		mu.Lock()
		ids = append(ids, id)
		mu.Unlock()
		if hold != nil {
			<-hold
		}
	}
	s.beforeGroup.Store(&hook)
	return func() []uint64 {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(ids)
	}
}

// tracedAppend is an AppendEntry running in its own goroutine.
type tracedAppend struct {
	id  uint64 // the goroutine's; set before err is sent
	err chan error
}

func appendTraced(ctx context.Context, s *Store, e *Entry) *tracedAppend {
	a := &tracedAppend{err: make(chan error, 1)}
	go func() {
		a.id = goroutineID()
		a.err <- s.AppendEntry(ctx, e)
	}()
	return a
}

// wait returns the append's error and the goroutine that made it.
func (a *tracedAppend) wait() (uint64, error) {
	err := <-a.err
	return a.id, err
}

// TestAppendWrittenByItsCaller: with no other append in progress, an
// append's group is written on its caller's goroutine (no goroutine is
// woken to write it), and the caller's context ending while the group is
// being written does not fail it: the transaction's outcome is the
// append's.
func TestAppendWrittenByItsCaller(t *testing.T) {
	onCommitBackends(t, func(t *testing.T, bk backend) {
		s, _ := bk.open(t)
		sess := mustCreate(t, s, "alice", "a")
		leaders := watchLeaders(s, nil)
		me := goroutineID()
		for i := range 3 {
			mustAppend(t, s, sampleEntry(sess.ID, "alice", i))
		}
		if diff := cmp.Diff([]uint64{me, me, me}, leaders()); diff != "" {
			t.Errorf("the goroutines that wrote the 3 groups (-want: the caller's +got):\n%s", diff)
		}

		hold := make(chan struct{})
		leaders = watchLeaders(s, hold)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		a := appendTraced(ctx, s, sampleEntry(sess.ID, "alice", 3))
		waitTaken(t, s, 4)
		cancel()
		close(hold)
		id, err := a.wait()
		if err != nil {
			t.Errorf("an append cancelled while its group was written: %v, want nil", err)
		}
		if diff := cmp.Diff([]uint64{id}, leaders()); diff != "" {
			t.Errorf("the goroutine that wrote the group (-want: the caller's +got):\n%s", diff)
		}
		if got := mustEntries(t, s, "alice", sess.ID); len(got) != 4 {
			t.Errorf("%d entries stored, want 4", len(got))
		}
		if got := s.commit.groups.Load(); got != 4 {
			t.Errorf("%d groups, want 4", got)
		}
	})
}

// TestGroupLedByAWaitingCaller: the appends queued while a group is
// written form the next group, written by one of their own callers once
// the first leader is done.
func TestGroupLedByAWaitingCaller(t *testing.T) {
	onCommitBackends(t, func(t *testing.T, bk backend) {
		s, _ := bk.open(t)
		sess := mustCreate(t, s, "alice", "a")
		hold := make(chan struct{})
		leaders := watchLeaders(s, hold)

		first := appendTraced(t.Context(), s, sampleEntry(sess.ID, "alice", 0))
		waitTaken(t, s, 1)
		var queued []*tracedAppend
		for i := 1; i <= 10; i++ {
			queued = append(queued, appendTraced(t.Context(), s, sampleEntry(sess.ID, "alice", i)))
			waitQueued(t, s, i)
		}
		close(hold)
		firstID, err := first.wait()
		if err != nil {
			t.Fatal(err)
		}
		callers := map[uint64]bool{}
		for i, a := range queued {
			id, err := a.wait()
			if err != nil {
				t.Errorf("queued append %d: %v", i+1, err)
			}
			callers[id] = true
		}
		got := leaders()
		if len(got) != 2 || got[0] != firstID || !callers[got[1]] {
			t.Errorf("groups written by goroutines %v, want the first caller's (%d), then one of the queued callers' (%v)",
				got, firstID, callers)
		}
		if n := len(mustEntries(t, s, "alice", sess.ID)); n != 11 {
			t.Errorf("%d entries stored, want 11", n)
		}
	})
}

// TestConcurrentAppendsLeadGroups: writers appending at once form groups
// (fewer commits than appends), and every group is written by one of the
// writers. The first group is held until every writer's first append is
// in it or queued behind it, so that the next group holds all those left:
// the first appends take at most 2 groups, and the others at most one
// each.
func TestConcurrentAppendsLeadGroups(t *testing.T) {
	onCommitBackends(t, func(t *testing.T, bk backend) {
		const (
			writers   = 8
			perWriter = 30
			appends   = writers * perWriter
		)
		s, _ := bk.open(t)
		var sessions []Session
		for i := range 4 {
			sessions = append(sessions, mustCreate(t, s, "alice", fmt.Sprint("s", i)))
		}
		hold := make(chan struct{})
		leaders := watchLeaders(s, hold)

		ids := make([]uint64, writers)
		errs := make(chan error, appends)
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				ids[w] = goroutineID()
				sess := sessions[w%len(sessions)]
				for i := range perWriter {
					if err := s.AppendEntry(t.Context(), sampleEntry(sess.ID, "alice", w*1000+i)); err != nil {
						errs <- fmt.Errorf("writer %d append %d: %w", w, i, err)
					}
				}
			})
		}
		deadline := time.Now().Add(10 * time.Second)
		for s.commit.taken.Load()+int64(len(s.commit.reqs)) < writers {
			if time.Now().After(deadline) {
				t.Fatalf("%d appends taken, %d queued, want %d in all", s.commit.taken.Load(), len(s.commit.reqs), writers)
			}
			time.Sleep(time.Millisecond)
		}
		close(hold)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}

		c := s.commit
		if c.taken.Load() != appends || c.grouped.Load() != appends {
			t.Errorf("%d appends taken, %d in groups, want %d", c.taken.Load(), c.grouped.Load(), appends)
		}
		groups := c.groups.Load()
		if groups > appends-(writers-2) {
			t.Errorf("%d appends took %d groups, want at most %d", appends, groups, appends-(writers-2))
		}
		t.Logf("%d appends in %d groups", appends, groups)
		got := leaders()
		if int64(len(got)) != groups {
			t.Errorf("the hook saw %d groups, the counter %d", len(got), groups)
		}
		for _, id := range got {
			if !slices.Contains(ids, id) {
				t.Errorf("a group was written by goroutine %d, not by a writer (%v)", id, ids)
				break
			}
		}
		for _, sess := range sessions {
			entries := mustEntries(t, s, "alice", sess.ID)
			for i, e := range entries {
				if e.Seq != int64(i+1) {
					t.Fatalf("session %s: entry %d has seq %d", sess.Title, i, e.Seq)
				}
			}
			if want := appends / len(sessions); len(entries) != want {
				t.Errorf("session %s: %d entries, want %d", sess.Title, len(entries), want)
			}
		}
	})
}

// TestAppendsRaceCancelAndClose: writers append, some with contexts
// cancelled at the same time, while the store is closed. Nothing hangs,
// Close succeeds, every append either ends with the store closed or its
// context's error and is not stored, or returns nil and is stored, and
// each session's sequence has no gap.
func TestAppendsRaceCancelAndClose(t *testing.T) {
	onCommitBackends(t, func(t *testing.T, bk backend) {
		const writers = 8
		s, reopen := bk.open(t)
		var sessions []Session
		for i := range 4 {
			sessions = append(sessions, mustCreate(t, s, "alice", fmt.Sprint("s", i)))
		}
		var (
			mu      sync.Mutex
			acked   = map[string][]string{} // session → call IDs acknowledged
			nAcked  atomic.Int64
			enough  = make(chan struct{}) // closed at the 100th acknowledgement
			stopped = make(chan error, writers)
			wg      sync.WaitGroup
		)
		for w := range writers {
			wg.Go(func() {
				sess := sessions[w%len(sessions)]
				stopped <- appendUntilClosed(s, sess, w*100000, func(callID string) {
					mu.Lock()
					acked[sess.ID] = append(acked[sess.ID], callID)
					mu.Unlock()
					if nAcked.Add(1) == 100 {
						close(enough)
					}
				})
			})
		}
		writing := make(chan struct{})
		go func() { wg.Wait(); close(writing) }()
		select {
		case <-enough:
		case <-writing: // every writer failed: reported below
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		<-writing
		close(stopped)
		for err := range stopped {
			if !errors.Is(err, errClosed) {
				t.Errorf("an append failed with %v, want the store closed or the context's error", err)
			}
		}
		if err := s.AppendEntry(t.Context(), sampleEntry(sessions[0].ID, "alice", 0)); !errors.Is(err, errClosed) {
			t.Errorf("append after Close: %v, want errClosed", err)
		}

		s2 := reopen(t)
		for _, sess := range sessions {
			var calls []string
			for i, e := range mustEntries(t, s2, "alice", sess.ID) {
				if e.Seq != int64(i+1) {
					t.Fatalf("session %s: entry %d has seq %d", sess.Title, i, e.Seq)
				}
				calls = append(calls, e.CallID)
			}
			want := acked[sess.ID]
			slices.Sort(calls)
			slices.Sort(want)
			if diff := cmp.Diff(want, calls); diff != "" {
				t.Errorf("session %s: stored call IDs (-acknowledged +stored):\n%s", sess.Title, diff)
			}
		}
		t.Logf("%d appends acknowledged before Close", nAcked.Load())
	})
}

// appendUntilClosed appends entries to sess, numbered from first, every
// third one with a context cancelled at the same time, and calls ack for
// each one acknowledged. It returns the first error other than
// context.Canceled.
func appendUntilClosed(s *Store, sess Session, first int, ack func(callID string)) error {
	for i := 0; ; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		if i%3 == 1 {
			go cancel() // races with the append
		}
		e := sampleEntry(sess.ID, sess.Principal, first+i)
		err := s.AppendEntry(ctx, e)
		cancel()
		switch {
		case err == nil:
			ack(e.CallID)
		case !errors.Is(err, context.Canceled):
			return err
		}
	}
}

// TestAppendFullQueueOfAbandoned: when the queue is full of appends whose
// callers gave up, and so nobody is left to write it, the next append
// makes room itself instead of waiting for ever.
func TestAppendFullQueueOfAbandoned(t *testing.T) {
	s, _ := openTest(t)
	sess := mustCreate(t, s, "alice", "a")
	release := holdCommitter(t, s)
	first := appendAsync(t.Context(), s, sampleEntry(sess.ID, "alice", 0))
	waitTaken(t, s, 1)

	ctx, cancel := context.WithCancel(t.Context())
	var abandoned []<-chan error
	for i := range queueLen {
		abandoned = append(abandoned, appendAsync(ctx, s, sampleEntry(sess.ID, "alice", 1+i)))
	}
	waitQueued(t, s, queueLen)
	cancel()
	for i, ch := range abandoned {
		if err := <-ch; !errors.Is(err, context.Canceled) {
			t.Fatalf("abandoned append %d: %v, want context.Canceled", i, err)
		}
	}
	last := appendAsync(t.Context(), s, sampleEntry(sess.ID, "alice", 9999))
	release()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-last; err != nil {
		t.Fatal(err)
	}
	var calls []string
	for _, e := range mustEntries(t, s, "alice", sess.ID) {
		calls = append(calls, e.CallID)
	}
	if diff := cmp.Diff([]string{"c_0000", "c_9999"}, calls); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
	if got := s.commit.taken.Load(); got != 2 {
		t.Errorf("%d appends taken, want 2", got)
	}
}
