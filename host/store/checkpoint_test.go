package store

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestCheckpointsOffTheAppendPath checks that the writer connection makes
// no automatic checkpoint (a commit never copies the WAL back on an
// appending caller's goroutine), that the checkpointer keeps the WAL
// bounded while entries are appended, and that Close still leaves no WAL.
func TestCheckpointsOffTheAppendPath(t *testing.T) {
	for _, mode := range syncModes {
		t.Run(mode.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "mcphost.db")
			s, err := OpenWith(t.Context(), path, nil, Options{Sync: mode})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var auto int
			if err := s.w.QueryRowContext(t.Context(), "PRAGMA wal_autocheckpoint").Scan(&auto); err != nil || auto != 0 {
				t.Fatalf("writer's wal_autocheckpoint = %d, %v; want 0", auto, err)
			}

			sess := mustCreate(t, s, "alice", "wal")
			const n = 4000
			for i := range n {
				e := &Entry{SessionID: sess.ID, CallID: "c", Principal: "alice", Origin: "gateway", Server: "up", Tool: "echo",
					Arguments: json.RawMessage(`{"text":"hello"}`), Status: StatusOK,
					Result: json.RawMessage(`{"content":[{"type":"text","text":"hello"}]}`), Era: "legacy"}
				if err := s.AppendEntry(t.Context(), e); err != nil {
					t.Fatalf("append %d: %v", i, err)
				}
			}
			// 4,000 commits of 3 or more frames of 4 KB each, one after the
			// other: about 57 MB of WAL without checkpoints, and as much with
			// checkpoints that run beside the appends but never let the WAL
			// start again from its beginning (no closing round). Here it
			// stays under 8 MB.
			deadline := time.Now().Add(30 * time.Second)
			for s.ckpt.runs.Load() == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if s.ckpt.runs.Load() == 0 {
				t.Fatalf("no checkpoint after %d appends", n)
			}
			if failed := s.ckpt.failed.Load(); failed != 0 {
				t.Errorf("%d checkpoints failed", failed)
			}
			fi, err := os.Stat(path + "-wal")
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("WAL %d bytes after %d appends, %d checkpoints", fi.Size(), n, s.ckpt.runs.Load())
			if fi.Size() > 24<<20 {
				t.Errorf("the WAL is %d bytes after %d appends: the checkpoints did not keep it bounded", fi.Size(), n)
			}
			if got := mustSession(t, s, "alice", sess.ID); got.Entries != n {
				t.Errorf("session has %d entries, want %d", got.Entries, n)
			}

			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(path + "-wal"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("after Close the WAL is still there: %v", err)
			}
			// Everything is in the database file.
			s2 := mustOpen(t, path)
			if got := mustSession(t, s2, "alice", sess.ID); got.Entries != n {
				t.Errorf("reopened: session has %d entries, want %d", got.Entries, n)
			}
		})
	}
}

// TestSessionTouchedOncePerSecond checks that on SQLite an append leaves
// its session's UpdatedAt alone only when it moved less than a second ago
// and the session is already its principal's most recently updated, so
// that Sessions lists them exactly as if every append moved it, and that
// the entry count, read from the entries, is right either way.
func TestSessionTouchedOncePerSecond(t *testing.T) {
	s, _ := openTest(t)
	var now atomic.Int64
	now.Store(epoch.UnixNano())
	s.now = func() time.Time { return time.Unix(0, now.Load()) }
	at := time.Duration(0)
	step := func(d time.Duration) { at += d; now.Store(epoch.Add(at).UnixNano()) }
	a := mustCreate(t, s, "alice", "a") // at +0
	step(100 * time.Millisecond)
	b := mustCreate(t, s, "alice", "b") // at +0.1s: on top
	step(100 * time.Millisecond)
	mustCreate(t, s, "bob", "other principal") // does not count for alice

	tests := []struct {
		in         string        // the session appended to
		after      time.Duration // since the previous step
		wantA      time.Duration // UpdatedAt of a, since epoch
		wantB      time.Duration
		wantFirst  string // the session Sessions lists first
		wantCounts [2]int
	}{
		{"b", 100 * time.Millisecond, 0, 100 * time.Millisecond, "b", [2]int{0, 1}},                      // on top, moved 0.2 s ago: left
		{"a", 100 * time.Millisecond, 400 * time.Millisecond, 100 * time.Millisecond, "a", [2]int{1, 1}}, // below b: moved at once
		{"a", 500 * time.Millisecond, 400 * time.Millisecond, 100 * time.Millisecond, "a", [2]int{2, 1}}, // on top, 0.5 s: left
		{"b", 100 * time.Millisecond, 400 * time.Millisecond, time.Second, "b", [2]int{2, 2}},            // below a: moved
		{"b", 999 * time.Millisecond, 400 * time.Millisecond, time.Second, "b", [2]int{2, 3}},            // on top, 0.999 s: left
		{"b", 1 * time.Millisecond, 400 * time.Millisecond, 2 * time.Second, "b", [2]int{2, 4}},          // a second: moved
		{"b", -5 * time.Second, 400 * time.Millisecond, 2 * time.Second, "b", [2]int{2, 5}},              // the clock stepped back, on top: left
		{"b", 6 * time.Second, 400 * time.Millisecond, 3 * time.Second, "b", [2]int{2, 6}},               // a second past the last move
	}
	for i, tt := range tests {
		step(tt.after)
		id := map[string]string{"a": a.ID, "b": b.ID}[tt.in]
		mustAppend(t, s, sampleEntry(id, "alice", i))
		list, err := s.Sessions(t.Context(), "alice")
		if err != nil || len(list) != 2 {
			t.Fatalf("Sessions: %v, %v", list, err)
		}
		byID := map[string]Session{list[0].ID: list[0], list[1].ID: list[1]}
		ga, gb := byID[a.ID], byID[b.ID]
		first := map[string]string{a.ID: "a", b.ID: "b"}[list[0].ID]
		if !ga.UpdatedAt.Equal(epoch.Add(tt.wantA)) || !gb.UpdatedAt.Equal(epoch.Add(tt.wantB)) || first != tt.wantFirst ||
			ga.Entries != tt.wantCounts[0] || gb.Entries != tt.wantCounts[1] {
			t.Errorf("append %d to %s at +%v: a +%v (%d entries), b +%v (%d entries), %s first; want a +%v, b +%v, %s first, %v entries",
				i+1, tt.in, at, ga.UpdatedAt.Sub(epoch), ga.Entries, gb.UpdatedAt.Sub(epoch), gb.Entries, first,
				tt.wantA, tt.wantB, tt.wantFirst, tt.wantCounts)
		}
	}
}

func mustSession(t testing.TB, s *Store, principal, id string) Session {
	t.Helper()
	sess, err := s.Session(t.Context(), principal, id)
	if err != nil {
		t.Fatalf("Session(%q): %v", id, err)
	}
	return sess
}

// TestCheckpointFailureLosesNothing checks that a checkpoint that fails
// (here its connection is gone; a full disk fails the same way) is logged,
// leaves the group commit's leadership alone, and loses no entry: appends
// go on and a later checkpoint moves everything.
func TestCheckpointFailureLosesNothing(t *testing.T) {
	s, path := openTest(t)
	sess := mustCreate(t, s, "alice", "ckpt")
	for i := range 50 {
		mustAppend(t, s, sampleEntry(sess.ID, "alice", i))
	}
	gone, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	gone.Close()
	var logged bytes.Buffer
	k := &checkpointer{db: gone, logger: slog.New(slog.NewTextHandler(&logged, nil)), commit: s.commit,
		kick: make(chan struct{}, 1), stop: make(chan struct{})}
	k.checkpoint()
	if k.runs.Load() != 1 || k.failed.Load() != 1 {
		t.Fatalf("runs %d, failed %d; want one failed run", k.runs.Load(), k.failed.Load())
	}
	if !strings.Contains(logged.String(), "WAL checkpoint failed") || !strings.Contains(logged.String(), "database is closed") {
		t.Errorf("log: %q, want the failure and its cause", logged.String())
	}
	// The leadership is free: an append is written at once.
	mustAppend(t, s, sampleEntry(sess.ID, "alice", 50))
	s.ckpt.checkpoint()
	if f := s.ckpt.failed.Load(); f != 0 {
		t.Errorf("the store's own checkpoint failed %d times", f)
	}
	if got := mustSession(t, s, "alice", sess.ID); got.Entries != 51 {
		t.Errorf("session has %d entries, want 51", got.Entries)
	}
}
