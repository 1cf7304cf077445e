package store

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
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
			// 4,000 commits of 3 or more frames of 4 KB each: about 50 MB of
			// WAL without checkpoints. The checkpointer, kicked every 1,000
			// estimated pages, lets the WAL start again from its beginning.
			deadline := time.Now().Add(30 * time.Second)
			for s.ckpt.runs.Load() < 3 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if runs := s.ckpt.runs.Load(); runs < 3 {
				t.Fatalf("%d checkpoints after %d appends, want at least 3", runs, n)
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

// TestSessionTouchedOncePerSecond checks that on SQLite an append moves its
// session's UpdatedAt only when it is a second old or more, and that the
// entry count, read from the entries, is right either way.
func TestSessionTouchedOncePerSecond(t *testing.T) {
	s, _ := openTest(t)
	var now atomic.Int64
	now.Store(epoch.UnixNano())
	s.now = func() time.Time { return time.Unix(0, now.Load()) }
	sess := mustCreate(t, s, "alice", "touch")
	tests := []struct {
		after time.Duration // since the previous step
		want  time.Duration // UpdatedAt, since epoch
	}{
		{400 * time.Millisecond, 0},
		{500 * time.Millisecond, 0},
		{100 * time.Millisecond, time.Second},   // a second since the creation
		{999 * time.Millisecond, time.Second},   // 0.999 s since the last move
		{1 * time.Millisecond, 2 * time.Second}, // exactly a second
		{10 * time.Second, 12 * time.Second},    // an idle session moves at once
		{-5 * time.Second, 12 * time.Second},    // the clock stepped back: left alone
		{6 * time.Second, 13 * time.Second},     // a second past the last move
	}
	at := time.Duration(0)
	for i, tt := range tests {
		at += tt.after
		now.Store(epoch.Add(at).UnixNano())
		mustAppend(t, s, sampleEntry(sess.ID, "alice", i))
		got := mustSession(t, s, "alice", sess.ID)
		if want := epoch.Add(tt.want); !got.UpdatedAt.Equal(want) || got.Entries != i+1 {
			t.Errorf("append %d at +%v: UpdatedAt +%v, %d entries; want +%v, %d",
				i+1, at, got.UpdatedAt.Sub(epoch), got.Entries, tt.want, i+1)
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
