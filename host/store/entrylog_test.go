package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// openLogged opens a store with SyncNormal, so with an entry log, at path.
func openLogged(t *testing.T, path string, logger *slog.Logger) *Store {
	t.Helper()
	s, err := OpenWith(t.Context(), path, logger, Options{Sync: SyncNormal})
	if err != nil {
		t.Fatalf("OpenWith(SyncNormal): %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// heldLog opens a store with an entry log, creates a session of alice's
// and holds the applier (holdCommitter): what is appended waits in the log
// until release.
func heldLog(t *testing.T, title string) (*Store, Session, func()) {
	t.Helper()
	s := openLogged(t, filepath.Join(t.TempDir(), "mcphost.db"), nil)
	sess := mustCreate(t, s, "alice", title)
	return s, sess, holdCommitter(t, s)
}

// copyFiles copies the database, its WAL and its entry log from dir to a
// new directory, as a crash would leave them, and returns the new path.
func copyFiles(t *testing.T, path string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(path))
	for _, suffix := range []string{"", "-wal", "-entries"} {
		b, err := os.ReadFile(path + suffix)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestEntryLogReplay checks that entries acknowledged but not yet applied
// when the process stops are in the database after the next open, with
// the ids and seqs their callers were told, and that records already
// applied are not applied twice.
func TestEntryLogReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcphost.db")
	s := openLogged(t, path, nil)
	sess := mustCreate(t, s, "alice", "replay")
	other := mustCreate(t, s, "alice", "other")
	first := mustAppend(t, s, sampleEntry(sess.ID, "alice", 1))
	if err := s.settle(t.Context()); err != nil {
		t.Fatal(err)
	}
	release := holdCommitter(t, s)
	var told []*Entry
	for i := 2; i <= 5; i++ {
		id := sess.ID
		if i == 4 {
			id = other.ID
		}
		e := sampleEntry(id, "alice", i)
		e.Audit = []Audit{{Origin: "user", Server: "revenue", Tool: "show_revenue_dashboard", Phase: "call", Effect: "allow", Reason: "r"}}
		told = append(told, mustAppend(t, s, e))
	}
	if got := []int64{told[0].Seq, told[1].Seq, told[2].Seq, told[3].Seq}; !slices.Equal(got, []int64{2, 3, 1, 4}) {
		t.Fatalf("seqs told = %v, want [2 3 1 4]", got)
	}
	// The files as a kill -9 would leave them: the first entry applied,
	// the other four only in the log (the applier waits on the hold).
	crashed, crashedFull := copyFiles(t, path), copyFiles(t, path)
	release()

	var logs bytes.Buffer
	r := openLogged(t, crashed, slog.New(slog.NewTextHandler(&logs, nil)))
	got := mustEntries(t, r, "alice", sess.ID)
	var ids []string
	for _, e := range got {
		ids = append(ids, e.ID+"/"+itoa(e.Seq))
	}
	want := []string{first.ID + "/1", told[0].ID + "/2", told[1].ID + "/3", told[3].ID + "/4"}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("entries after replay (-want +got):\n%s", diff)
	}
	if o := mustEntries(t, r, "alice", other.ID); len(o) != 1 || o[0].ID != told[2].ID || o[0].Seq != 1 {
		t.Errorf("other session after replay = %+v", o)
	}
	audit, err := r.AuditLog(t.Context(), "alice", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(audit) != 4 {
		t.Errorf("audit records after replay = %d, want 4", len(audit))
	}
	if !strings.Contains(logs.String(), "replayed the entry log") {
		t.Errorf("no replay logged:\n%s", logs.String())
	}
	if data, err := os.ReadFile(entryLogPath(crashed)); err != nil || len(data) > 0 && !bytes.Equal(data, make([]byte, len(data))) {
		t.Errorf("entry log after replay: %d bytes, not all zeros (%v); want empty", len(data), err)
	}

	// The operator switched to sync = "full" before the restart: the log
	// is replayed all the same, then removed.
	full := crashedFull
	f := mustOpenWith(t, full, Options{Sync: SyncFull})
	if got := mustEntries(t, f, "alice", sess.ID); len(got) != 4 || got[3].ID != told[3].ID {
		t.Errorf("entries after replay under sync=full = %d", len(got))
	}
	if _, err := os.Stat(entryLogPath(full)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("entry log after opening with sync=full: %v; want it removed", err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestEntryLogTornTail checks that a record cut short (a write a crash
// interrupted, never acknowledged) ends the log: what precedes it is
// replayed, and the open says what it dropped.
func TestEntryLogTornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcphost.db")
	s := openLogged(t, path, nil)
	sess := mustCreate(t, s, "alice", "torn")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var log []byte
	for i := 1; i <= 3; i++ {
		r := &appendReq{id: "e_" + itoa(int64(i)), kind: KindCall, e: sampleEntry(sess.ID, "alice", i), logged: int64(i)}
		var err error
		if log, err = appendRecord(log, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, cut := range []struct {
		name string
		log  []byte
	}{
		{"cut short", log[:len(log)-5]},
		{"bad crc", append(bytes.Clone(log[:len(log)-1]), log[len(log)-1]^1)},
	} {
		t.Run(cut.name, func(t *testing.T) {
			db := copyFiles(t, path)
			if err := os.WriteFile(entryLogPath(db), cut.log, 0o600); err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			r := openLogged(t, db, slog.New(slog.NewTextHandler(&logs, nil)))
			got := mustEntries(t, r, "alice", sess.ID)
			if len(got) != 2 || got[0].ID != "e_1" || got[1].ID != "e_2" || got[1].Seq != 2 {
				t.Errorf("entries = %+v, want e_1 and e_2", got)
			}
			if !strings.Contains(logs.String(), "torn record") {
				t.Errorf("the torn record is not logged:\n%s", logs.String())
			}
		})
	}
}

// TestEntryLogReadsWait checks that a read made after an append returned
// sees the entry even when the applier has not written it yet: it waits.
func TestEntryLogReadsWait(t *testing.T) {
	s, sess, release := heldLog(t, "reads")
	e := mustAppend(t, s, sampleEntry(sess.ID, "alice", 1))
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, _, err := s.Entries(ctx, "alice", sess.ID, 0, 10); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Entries while the entry waits to be applied: %v; want it to wait until its context ends", err)
	}
	release()
	got := mustEntries(t, s, "alice", sess.ID)
	if len(got) != 1 || got[0].ID != e.ID || got[0].Seq != 1 {
		t.Fatalf("entries = %+v", got)
	}
	if sessions, err := s.Sessions(t.Context(), "alice"); err != nil || sessions[0].Entries != 1 {
		t.Fatalf("Sessions = %+v, %v", sessions, err)
	}
}

// TestEntryLogDeleteSession checks that a session deleted while entries of
// it wait to be applied takes them with it, and that the log then refuses
// appends to it as the database would.
func TestEntryLogDeleteSession(t *testing.T) {
	s, sess, release := heldLog(t, "doomed")
	for i := 1; i <= 3; i++ {
		mustAppend(t, s, sampleEntry(sess.ID, "alice", i))
	}
	done := make(chan error, 1)
	var n int
	go func() {
		var err error
		n, err = s.DeleteSession(context.Background(), "alice", sess.ID)
		done <- err
	}()
	release()
	if err := <-done; err != nil || n != 3 {
		t.Fatalf("DeleteSession = %d, %v; want 3 entries", n, err)
	}
	if err := s.AppendEntry(t.Context(), sampleEntry(sess.ID, "alice", 4)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("append to the deleted session: %v; want ErrNotFound", err)
	}
	if err := s.AppendEntry(t.Context(), sampleEntry(mustCreate(t, s, "bob", "b").ID, "alice", 1)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("append to bob's session as alice: %v; want ErrNotFound", err)
	}
}

// TestEntryLogOneOwner checks that a second store cannot open a database
// whose entry log another one holds, and that Close removes the log.
func TestEntryLogOneOwner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcphost.db")
	s := openLogged(t, path, nil)
	mustAppend(t, s, sampleEntry(mustCreate(t, s, "alice", "a").ID, "alice", 1))
	if _, err := OpenWith(t.Context(), path, nil, Options{Sync: SyncNormal}); err == nil || !strings.Contains(err.Error(), "held by another process") {
		t.Fatalf("second open: %v; want it refused", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(entryLogPath(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("entry log after Close: %v; want it removed", err)
	}
	r := openLogged(t, path, nil)
	if got := mustEntries(t, r, "alice", mustSessions(t, r, "alice")[0].ID); len(got) != 1 {
		t.Fatalf("entries after reopening = %d", len(got))
	}
}

func mustSessions(t *testing.T, s *Store, principal string) []Session {
	t.Helper()
	out, err := s.Sessions(t.Context(), principal)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRecordRoundTrip checks that a record gives back every field it
// was made of.
func TestRecordRoundTrip(t *testing.T) {
	e := sampleEntry("s_1", "alice", 7)
	e.Display = json.RawMessage(`{"html":"<p>x</p>"}`)
	e.Trail = json.RawMessage(`[1]`)
	e.AppEntryID, e.Error, e.Message = "e_app", "boom", json.RawMessage(`"hi"`)
	e.Kind = KindAppMessage
	e.Audit = []Audit{{At: epoch, Origin: "app", Server: "s", Tool: "t", Phase: "call", Rule: "r1", Effect: "deny", Reason: "no", Error: true, DurationUs: 3.5}}
	in := &appendReq{id: "e_1", kind: KindAppMessage, e: e, logged: 42, htmlBytes: 8}
	b, err := appendRecord(nil, in)
	if err != nil {
		t.Fatal(err)
	}
	out, n, err := nextRecord(b)
	if err != nil || n != len(b) {
		t.Fatalf("nextRecord = %d, %v; want %d", n, err, len(b))
	}
	if out.id != in.id || out.kind != in.kind || out.logged != 42 || out.htmlBytes != 8 {
		t.Errorf("record = %+v", out)
	}
	if diff := cmp.Diff(e, out.e); diff != "" {
		t.Errorf("entry (-in +out):\n%s", diff)
	}
}

// FuzzNextRecord feeds the log's reader what a damaged file may hold: it
// must return a record, errTornRecord or an error, never panic, and a
// record it returns must encode to the bytes it read.
func FuzzNextRecord(f *testing.F) {
	good, _ := appendRecord(nil, &appendReq{id: "e_1", kind: KindCall, e: sampleEntry("s", "p", 1), logged: 1})
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, n, err := nextRecord(b)
		if err != nil {
			return
		}
		again, err := appendRecord(nil, r)
		if err != nil {
			t.Fatalf("re-encoding a record read back: %v", err)
		}
		if n > len(b) || len(again) == 0 {
			t.Fatalf("frame of %d bytes out of %d", n, len(b))
		}
		if _, _, err := nextRecord(again); err != nil {
			t.Fatalf("a record read back does not read again: %v", err)
		}
	})
}

// TestEntryLogApplyFails checks what happens while the database refuses
// writes (here made read-only; a full disk behaves the same): the entry
// already acknowledged stays in the log, reads and further appends fail
// with an error that says so, and once the database takes writes again
// the applier writes it with its seq and appends go on.
func TestEntryLogApplyFails(t *testing.T) {
	var logs bytes.Buffer
	s := openLogged(t, filepath.Join(t.TempDir(), "mcphost.db"), slog.New(slog.NewTextHandler(&logs, nil)))
	sess := mustCreate(t, s, "alice", "readonly")
	if _, err := s.w.ExecContext(t.Context(), "PRAGMA query_only = ON"); err != nil {
		t.Fatal(err)
	}
	first := mustAppend(t, s, sampleEntry(sess.ID, "alice", 1))
	err := s.settle(t.Context())
	if err == nil || !strings.Contains(err.Error(), "1 acknowledged entries wait to be written") {
		t.Fatalf("settle while the database refuses writes: %v", err)
	}
	if _, err := s.Sessions(t.Context(), "alice"); err == nil {
		t.Fatal("Sessions while an acknowledged entry cannot be written: no error")
	}
	if err := s.AppendEntry(t.Context(), sampleEntry(sess.ID, "alice", 2)); err == nil || !strings.Contains(err.Error(), "wait to be written") {
		t.Fatalf("append while the applier fails: %v", err)
	}
	if _, err := s.w.ExecContext(t.Context(), "PRAGMA query_only = OFF"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for s.settle(t.Context()) != nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	second := mustAppend(t, s, sampleEntry(sess.ID, "alice", 3))
	got := mustEntries(t, s, "alice", sess.ID)
	if len(got) != 2 || got[0].ID != first.ID || got[0].Seq != 1 || got[1].ID != second.ID || got[1].Seq != 2 {
		t.Fatalf("entries = %+v", got)
	}
	if !strings.Contains(logs.String(), "trying again") {
		t.Errorf("the failure is not logged:\n%s", logs.String())
	}
}

// TestEntryLogBounded checks that appends wait for the applier once
// maxPending entries wait to be applied: a burst faster than the database
// grows neither the memory nor the log without end.
func TestEntryLogBounded(t *testing.T) {
	s, sess, release := heldLog(t, "burst")
	for i := range maxPending { // waiting, the group the held applier took included
		mustAppend(t, s, sampleEntry(sess.ID, "alice", i))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := s.AppendEntry(ctx, sampleEntry(sess.ID, "alice", 0)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("append past the bound: %v; want it to wait until its context ends", err)
	}
	release()
	last := mustAppend(t, s, sampleEntry(sess.ID, "alice", 0))
	if last.Seq != maxPending+1 {
		t.Fatalf("seq after the wait = %d, want %d", last.Seq, maxPending+1)
	}
	if got := mustEntries(t, s, "alice", sess.ID); len(got) != maxPending+1 {
		t.Fatalf("entries = %d, want %d", len(got), maxPending+1)
	}
}

// TestEntryLogStaysSmall checks that the log is emptied under a steady
// stream of concurrent appends, when the applier is never idle on its
// own: it never holds much more than logTruncateBytes.
func TestEntryLogStaysSmall(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcphost.db")
	s := openLogged(t, path, nil)
	sess := mustCreate(t, s, "alice", "steady")
	result := json.RawMessage(`{"content":[{"type":"text","text":"` + strings.Repeat("x", 4000) + `"}]}`)
	const workers, each = 8, 400 // 3,200 entries of 4 KB: about three times the bound
	var biggest atomic.Int64
	errs := make(chan error, workers)
	for range workers {
		go func() {
			for i := range each {
				e := sampleEntry(sess.ID, "alice", i)
				e.Result = result
				if err := s.AppendEntry(t.Context(), e); err != nil {
					errs <- err
					return
				}
				s.elog.mu.Lock()
				if size := s.elog.size; size > biggest.Load() {
					biggest.Store(size)
				}
				s.elog.mu.Unlock()
			}
			errs <- nil
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if most := biggest.Load(); most > logTruncateBytes+workers*8<<10 {
		t.Errorf("the entry log reached %d bytes; want it emptied past %d", most, logTruncateBytes)
	}
	if got := mustEntries(t, s, "alice", sess.ID); len(got) != workers*each || got[len(got)-1].Seq != workers*each {
		t.Errorf("%d entries, last seq %d; want %d", len(got), got[len(got)-1].Seq, workers*each)
	}
}

// TestEntryLogOwnsTheEntry checks that what the caller does with its
// entry after AppendEntry returned (the host clears Audit and publishes
// it) does not change what the applier writes afterwards.
func TestEntryLogOwnsTheEntry(t *testing.T) {
	s, sess, release := heldLog(t, "owned")
	e := sampleEntry(sess.ID, "alice", 1)
	e.Audit = []Audit{{Origin: "user", Server: "revenue", Tool: "show_revenue_dashboard", Phase: "call", Effect: "allow", Reason: "kept"}}
	mustAppend(t, s, e)
	e.Audit[0].Reason = "changed"
	e.Audit, e.Tool = nil, "changed"
	release()
	got := mustEntries(t, s, "alice", sess.ID)
	if len(got) != 1 || got[0].Tool != "show_revenue_dashboard" {
		t.Fatalf("entries = %+v", got)
	}
	audit, err := s.AuditLog(t.Context(), "alice", 0, 10)
	if err != nil || len(audit) != 1 || audit[0].Reason != "kept" || audit[0].EntryID != got[0].ID {
		t.Fatalf("audit = %+v, %v; want the record as appended", audit, err)
	}
}
