package store

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestConcurrentAppends is the hammer test: 8 writers append at once, some
// to a shared session and some to their own, while readers page through the
// transcripts. No call may fail (no SQLITE_BUSY), and each session's
// sequence must come out gapless with every entry exactly once.
func TestConcurrentAppends(t *testing.T) {
	onBackends(t, func(t *testing.T, bk backend) {
		const (
			writers   = 8
			perWriter = 40
		)
		s, _ := bk.open(t)
		shared := mustCreate(t, s, "alice", "shared")
		sessions := []Session{shared, shared, shared, shared} // writers 0-3 share one session
		for w := 4; w < writers; w++ {
			owner := []string{"alice", "bob"}[w%2]
			sessions = append(sessions, mustCreate(t, s, owner, fmt.Sprint("own ", w)))
		}

		errs := make(chan error, writers*perWriter+64)
		seqs := make([][]int64, writers) // per writer, in the order it appended
		var writing sync.WaitGroup
		for w := range writers {
			writing.Go(func() {
				sess := sessions[w]
				for i := range perWriter {
					e := sampleEntry(sess.ID, sess.Principal, w*1000+i)
					if err := s.AppendEntry(t.Context(), e); err != nil {
						errs <- fmt.Errorf("writer %d entry %d: %w", w, i, err)
						return
					}
					seqs[w] = append(seqs[w], e.Seq)
				}
			})
		}
		done := make(chan struct{})
		var reading sync.WaitGroup
		for r := range 2 {
			reading.Go(func() {
				for {
					select {
					case <-done:
						return
					default:
					}
					if _, err := s.Sessions(t.Context(), "alice"); err != nil {
						errs <- fmt.Errorf("reader %d: %w", r, err)
						return
					}
					page, _, err := s.Entries(t.Context(), "alice", shared.ID, 0, 50)
					if err != nil {
						errs <- fmt.Errorf("reader %d: %w", r, err)
						return
					}
					for i, e := range page {
						if e.Seq != int64(i+1) {
							errs <- fmt.Errorf("reader %d saw seq %d at position %d", r, e.Seq, i)
							return
						}
					}
				}
			})
		}
		writing.Wait()
		close(done)
		reading.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if t.Failed() {
			return
		}

		for w := range writers {
			if !slices.IsSorted(seqs[w]) {
				t.Errorf("writer %d got seqs out of order: %v", w, seqs[w])
			}
		}
		want := map[string][]string{} // session → call IDs
		for w := range writers {
			for i := range perWriter {
				want[sessions[w].ID] = append(want[sessions[w].ID], fmt.Sprintf("c_%04d", w*1000+i))
			}
		}
		for id, wantCalls := range want {
			owner := "alice"
			if sess, err := s.Session(t.Context(), "bob", id); err == nil {
				owner = sess.Principal
			}
			entries := mustEntries(t, s, owner, id)
			var calls []string
			ids := map[string]bool{}
			for i, e := range entries {
				if e.Seq != int64(i+1) {
					t.Fatalf("session %s: entry %d has Seq %d", id, i, e.Seq)
				}
				if ids[e.ID] {
					t.Errorf("session %s: duplicate entry ID %s", id, e.ID)
				}
				ids[e.ID] = true
				calls = append(calls, e.CallID)
			}
			slices.Sort(calls)
			slices.Sort(wantCalls)
			if diff := cmp.Diff(wantCalls, calls); diff != "" {
				t.Errorf("session %s call IDs (-want +got):\n%s", id, diff)
			}
			sess, err := s.Session(t.Context(), owner, id)
			if err != nil {
				t.Fatal(err)
			}
			if sess.Entries != len(wantCalls) {
				t.Errorf("session %s counts %d entries, want %d", id, sess.Entries, len(wantCalls))
			}
		}
	})
}
