package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// holdWriter takes the store's only writer connection, so the leader
// blocks on its next transaction and the appends made meanwhile queue up
// into one group. Calling the returned function gives the connection back.
func holdWriter(t *testing.T, s *Store) (*sql.Conn, func()) {
	t.Helper()
	conn, err := s.w.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release := func() { once.Do(func() { conn.Close() }) }
	t.Cleanup(release)
	return conn, release
}

// waitQueued waits until n appends wait in the queue, not yet taken into a
// group.
func waitQueued(t *testing.T, s *Store, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(s.commit.reqs) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d appends queued, want %d", len(s.commit.reqs), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func (c *committer) isClosed() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.closed
}

// waitTaken waits until leaders have taken n appends into groups in all.
func waitTaken(t *testing.T, s *Store, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.commit.taken.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d appends were taken into groups, want %d", s.commit.taken.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// appendAsync starts AppendEntry in a goroutine; the channel gets its error.
func appendAsync(ctx context.Context, s *Store, e *Entry) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- s.AppendEntry(ctx, e) }()
	return ch
}

func TestGroupCommit(t *testing.T) {
	onCommitBackends(t, func(t *testing.T, bk backend) {
		s, _ := bk.open(t)
		alice := mustCreate(t, s, "alice", "a")
		bob := mustCreate(t, s, "bob", "b")
		release := holdCommitter(t, s)

		// The first append's caller leads: it takes its append and waits
		// in the hook; the next ones queue behind it and form one group,
		// written by one of their callers.
		first := sampleEntry(alice.ID, "alice", 0)
		firstErr := appendAsync(t.Context(), s, first)
		waitTaken(t, s, 1)

		type pending struct {
			e       *Entry
			wantErr error
			err     <-chan error
		}
		var group []pending
		for i := 1; i <= 20; i++ {
			e, want := sampleEntry(alice.ID, "alice", i), error(nil)
			switch i {
			case 5:
				e = sampleEntry("s_missing", "alice", i) // no such session
				want = ErrNotFound
			case 9:
				e = sampleEntry(bob.ID, "alice", i) // someone else's session
				want = ErrNotFound
			case 13:
				e = sampleEntry(bob.ID, "bob", i)
			}
			group = append(group, pending{e: e, wantErr: want, err: appendAsync(t.Context(), s, e)})
			waitQueued(t, s, i)
		}
		release()

		if err := <-firstErr; err != nil {
			t.Fatalf("first append: %v", err)
		}
		var aliceSeqs []int64
		for i, p := range group {
			err := <-p.err
			if !errors.Is(err, p.wantErr) || (p.wantErr == nil) != (err == nil) {
				t.Errorf("append %d: error %v, want %v", i+1, err, p.wantErr)
			}
			if err == nil && p.e.SessionID == alice.ID {
				aliceSeqs = append(aliceSeqs, p.e.Seq)
			}
		}
		if got := s.commit.groups.Load(); got != 2 {
			t.Errorf("the first append and the 20 queued behind it took %d commits, want 2", got)
		}

		// The failed entries left no trace; the others are stored in order.
		entries := mustEntries(t, s, "alice", alice.ID)
		if len(entries) != 18 {
			t.Fatalf("alice's session has %d entries, want 18", len(entries))
		}
		for i, e := range entries {
			if e.Seq != int64(i+1) {
				t.Errorf("entry %d has seq %d", i, e.Seq)
			}
		}
		for i, seq := range aliceSeqs {
			if seq != int64(i+2) {
				t.Errorf("append acknowledged seq %d at position %d, want %d", seq, i, i+2)
			}
		}
		if sess, _ := s.Session(t.Context(), "alice", alice.ID); sess.Entries != 18 {
			t.Errorf("alice's session counts %d entries, want 18", sess.Entries)
		}
		if got := mustEntries(t, s, "bob", bob.ID); len(got) != 1 || got[0].CallID != "c_0013" {
			t.Errorf("bob's session holds %v, want only c_0013", got)
		}
	})
}

// TestGroupCommitCancelWhileQueued: an append whose context ends while it
// still waits in the queue returns the context's error and is never
// written; the rest of the queue is.
func TestGroupCommitCancelWhileQueued(t *testing.T) {
	onCommitBackends(t, func(t *testing.T, bk backend) {
		s, _ := bk.open(t)
		sess := mustCreate(t, s, "alice", "a")
		release := holdCommitter(t, s)

		firstErr := appendAsync(t.Context(), s, sampleEntry(sess.ID, "alice", 0))
		waitTaken(t, s, 1)
		ctx, cancel := context.WithCancel(t.Context())
		cancelled := appendAsync(ctx, s, sampleEntry(sess.ID, "alice", 1))
		waitQueued(t, s, 1)
		kept := appendAsync(t.Context(), s, sampleEntry(sess.ID, "alice", 2))
		waitQueued(t, s, 2)
		cancel()
		if err := <-cancelled; !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled append: %v, want context.Canceled", err)
		}
		release()
		if err := <-firstErr; err != nil {
			t.Fatal(err)
		}
		if err := <-kept; err != nil {
			t.Fatal(err)
		}
		var calls []string
		for _, e := range mustEntries(t, s, "alice", sess.ID) {
			calls = append(calls, e.CallID)
		}
		if got := strings.Join(calls, " "); got != "c_0000 c_0002" {
			t.Errorf("stored %s, want c_0000 c_0002", got)
		}
	})
}

// TestGroupCommitClose: Close writes the appends already queued before it
// closes the database; appends after it fail.
func TestGroupCommitClose(t *testing.T) {
	onCommitBackends(t, func(t *testing.T, bk backend) {
		s, reopen := bk.open(t)
		sess := mustCreate(t, s, "alice", "a")
		release := holdCommitter(t, s)

		var errs []<-chan error
		errs = append(errs, appendAsync(t.Context(), s, sampleEntry(sess.ID, "alice", 0)))
		waitTaken(t, s, 1)
		for i := 1; i <= 5; i++ {
			errs = append(errs, appendAsync(t.Context(), s, sampleEntry(sess.ID, "alice", i)))
			waitQueued(t, s, i)
		}
		closed := make(chan error, 1)
		go func() { closed <- s.Close() }()
		for !s.commit.isClosed() {
			time.Sleep(time.Millisecond)
		}
		if err := s.AppendEntry(t.Context(), sampleEntry(sess.ID, "alice", 99)); err == nil || !strings.Contains(err.Error(), "closed") {
			t.Errorf("append after Close: %v, want an error saying the store is closed", err)
		}
		release()
		for i, ch := range errs {
			if err := <-ch; err != nil {
				t.Errorf("queued append %d: %v", i, err)
			}
		}
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		s2 := reopen(t)
		if got := mustEntries(t, s2, "alice", sess.ID); len(got) != 6 {
			t.Errorf("after Close and reopen: %d entries, want 6", len(got))
		}
	})
}

// TestGroupCommitFullDatabase fills the database (max_page_count) while a
// group of large and small entries is queued. SQLite rolls back the whole
// transaction on a full database, savepoints included: the large entries
// must fail, saying the database is full, and the small ones of the same
// group must still be stored. Above all, every append that returned nil is
// stored and every one that failed is not.
func TestGroupCommitFullDatabase(t *testing.T) {
	s, _ := openTest(t)
	sess := mustCreate(t, s, "alice", "a")
	conn, release := holdWriter(t, s)
	var pages int64
	if err := conn.QueryRowContext(t.Context(), "PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	// Room for the small entries, not for a 256 KiB one.
	if _, err := conn.ExecContext(t.Context(), fmt.Sprintf("PRAGMA max_page_count = %d", pages+24)); err != nil {
		t.Fatal(err)
	}

	big := json.RawMessage(`{"content":[{"type":"text","text":"` + strings.Repeat("x", 256<<10) + `"}],"isError":false}`)
	firstErr := appendAsync(t.Context(), s, sampleEntry(sess.ID, "alice", 0))
	waitTaken(t, s, 1)
	type pending struct {
		e   *Entry
		err <-chan error
	}
	all := []pending{}
	for i := 1; i <= 12; i++ {
		e := sampleEntry(sess.ID, "alice", i)
		if i%4 == 0 {
			e.Result = big
		}
		all = append(all, pending{e, appendAsync(t.Context(), s, e)})
		waitQueued(t, s, i)
	}
	release()
	if err := <-firstErr; err != nil {
		t.Fatal(err)
	}
	acked := map[string]bool{}
	failed := 0
	for _, p := range all {
		err := <-p.err
		if err == nil {
			acked[p.e.CallID] = true
			continue
		}
		failed++
		if p.e.CallID != "c_0004" && p.e.CallID != "c_0008" && p.e.CallID != "c_0012" {
			t.Errorf("small entry %s failed: %v", p.e.CallID, err)
		}
		if !errors.Is(err, ErrDiskFull) || !strings.Contains(err.Error(), "database or disk is full") {
			t.Errorf("%s failed with %v, want a database-full error", p.e.CallID, err)
		}
	}
	if failed != 3 {
		t.Errorf("%d appends failed, want the 3 large ones", failed)
	}
	stored := map[string]bool{}
	for _, e := range mustEntries(t, s, "alice", sess.ID) {
		stored[e.CallID] = true
	}
	delete(stored, "c_0000")
	for id := range acked {
		if !stored[id] {
			t.Errorf("%s was acknowledged but is not stored", id)
		}
	}
	for id := range stored {
		if !acked[id] {
			t.Errorf("%s failed but is stored", id)
		}
	}
}

// TestDiskFullErrors pins which failures count as a full disk besides
// SQLite's own SQLITE_FULL (TestGroupCommitFullDatabase).
func TestDiskFullErrors(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{&fs.PathError{Op: "write", Path: "mcphost.db-wal", Err: syscall.ENOSPC}, true},
		{fmt.Errorf("append: %w", syscall.EFBIG), true},
		{errors.New("database is locked (5) (SQLITE_BUSY)"), false},
		{errors.New("database or disk is full"), false}, // a text is not a code
	}
	for _, tt := range tests {
		err := diskFull(tt.err)
		if got := errors.Is(err, ErrDiskFull); got != tt.want {
			t.Errorf("diskFull(%v): errors.Is ErrDiskFull = %v, want %v", tt.err, got, tt.want)
		}
		if !errors.Is(err, tt.err) {
			t.Errorf("diskFull(%v) lost the cause: %v", tt.err, err)
		}
	}
}
