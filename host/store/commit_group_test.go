package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// queueGroup appends first, waits until its caller leads and holds it,
// queues entries behind it (one group) and lets the leader go. It returns
// each queued append's error, in order.
func queueGroup(t *testing.T, s *Store, first *Entry, entries []*Entry) []error {
	t.Helper()
	release := holdCommitter(t, s)
	taken := s.commit.taken.Load()
	firstErr := appendAsync(t.Context(), s, first)
	waitTaken(t, s, taken+1)
	var chans []<-chan error
	for i, e := range entries {
		chans = append(chans, appendAsync(t.Context(), s, e))
		waitQueued(t, s, i+1)
	}
	release()
	if err := <-firstErr; err != nil {
		t.Fatalf("first append: %v", err)
	}
	errs := make([]error, len(chans))
	for i, ch := range chans {
		errs[i] = <-ch
	}
	return errs
}

// TestGroupCommitSessionsAndAudit: in one group spread over two sessions,
// with and without audit records, each session's count and UpdatedAt are
// bumped for its stored entries only (the leader updates each session
// once per group), and the audit records of an entry that was refused are
// not stored while those of the others are, whole.
func TestGroupCommitSessionsAndAudit(t *testing.T) {
	onCommitBackends(t, func(t *testing.T, bk backend) {
		s, _ := bk.open(t)
		a := mustCreate(t, s, "alice", "a")
		b := mustCreate(t, s, "alice", "b")
		bob := mustCreate(t, s, "bob", "bob's")
		audited := func(e *Entry) *Entry {
			e.Audit = []Audit{
				{Origin: "user", Server: "files", Op: "resources/read", Tool: e.CallID, Phase: "call", Rule: "r1", Effect: "allow", Reason: "ok", DurationUs: 1.5},
				{Origin: "user", Server: "files", Tool: e.CallID, Phase: "result", Rule: "r2", Effect: "allow", Error: true},
			}
			return e
		}
		entries := []*Entry{
			audited(sampleEntry(a.ID, "alice", 1)),
			sampleEntry(b.ID, "alice", 2),
			audited(sampleEntry(bob.ID, "alice", 3)), // someone else's session
			audited(sampleEntry("s_missing", "alice", 4)),
			sampleEntry(a.ID, "alice", 5),
			audited(sampleEntry(b.ID, "alice", 6)),
		}
		errs := queueGroup(t, s, sampleEntry(a.ID, "alice", 0), entries)
		for i, err := range errs {
			want := error(nil)
			if i == 2 || i == 3 {
				want = ErrNotFound
			}
			if !errors.Is(err, want) || (want == nil) != (err == nil) {
				t.Errorf("append %d: %v, want %v", i+1, err, want)
			}
		}
		if got := s.commit.groups.Load(); got != 2 {
			t.Errorf("%d commits, want 2", got)
		}

		seqs := map[string][]int64{}
		for _, sess := range []Session{a, b} {
			for _, e := range mustEntries(t, s, "alice", sess.ID) {
				seqs[sess.Title] = append(seqs[sess.Title], e.Seq)
			}
		}
		if diff := cmp.Diff(map[string][]int64{"a": {1, 2, 3}, "b": {1, 2}}, seqs); diff != "" {
			t.Errorf("seqs (-want +got):\n%s", diff)
		}
		for _, want := range []struct {
			sess    Session
			entries int
		}{{a, 3}, {b, 2}} {
			got, err := s.Session(t.Context(), "alice", want.sess.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Entries != want.entries || !got.UpdatedAt.After(want.sess.UpdatedAt) {
				t.Errorf("session %s: %d entries, updated %v, want %d entries, updated after %v",
					want.sess.Title, got.Entries, got.UpdatedAt, want.entries, want.sess.UpdatedAt)
			}
		}
		if got, _ := s.Session(t.Context(), "bob", bob.ID); got.Entries != 0 || len(mustEntries(t, s, "bob", bob.ID)) != 0 {
			t.Errorf("bob's session has %d entries, want none", got.Entries)
		}

		log, err := s.AuditLog(t.Context(), "alice", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range log {
			got = append(got, fmt.Sprintf("%s %s %s %s err=%v %v", r.Tool, r.Op, r.Rule, r.SessionID, r.Error, r.DurationUs))
			if r.EntryID == "" || r.Principal != "alice" {
				t.Errorf("audit record %+v: want alice's, with its entry", r)
			}
		}
		want := []string{ // newest first
			"c_0006  r2 " + b.ID + " err=true 0",
			"c_0006 resources/read r1 " + b.ID + " err=false 1.5",
			"c_0001  r2 " + a.ID + " err=true 0",
			"c_0001 resources/read r1 " + a.ID + " err=false 1.5",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("audit log (-want +got):\n%s", diff)
		}
	})
}

// TestGroupCommitEntryFails: an entry the database refuses fails alone
// and the others of its group are stored, gapless, whether the entry had
// audit records (its savepoint is rolled back, the transaction goes on)
// or not (it is one statement without a savepoint: the transaction is
// rolled back and the others are written again).
func TestGroupCommitEntryFails(t *testing.T) {
	tests := []struct {
		name    string
		trigger string // makes the entry c_0002 fail
		audit   bool   // c_0002 has audit records
	}{
		{"entry without audit", `CREATE TRIGGER boom BEFORE INSERT ON entries WHEN NEW.call_id = 'c_0002'
			BEGIN SELECT RAISE(ABORT, 'boom'); END`, false},
		{"entry with audit", `CREATE TRIGGER boom BEFORE INSERT ON entries WHEN NEW.call_id = 'c_0002'
			BEGIN SELECT RAISE(ABORT, 'boom'); END`, true},
		{"audit record", `CREATE TRIGGER boom BEFORE INSERT ON audit WHEN NEW.rule = 'boom'
			BEGIN SELECT RAISE(ABORT, 'boom'); END`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := openTest(t)
			sess := mustCreate(t, s, "alice", "a")
			if _, err := s.w.ExecContext(t.Context(), tt.trigger); err != nil {
				t.Fatal(err)
			}
			var entries []*Entry
			for i := 1; i <= 4; i++ {
				e := sampleEntry(sess.ID, "alice", i)
				if i%2 == 1 || tt.audit {
					e.Audit = []Audit{{Origin: "user", Server: "x", Tool: "t", Phase: "call", Rule: "r", Effect: "allow"}}
				}
				if i == 2 && tt.audit {
					e.Audit = append(e.Audit, Audit{Origin: "user", Server: "x", Tool: "t", Phase: "result", Rule: "boom", Effect: "allow"})
				}
				entries = append(entries, e)
			}
			errs := queueGroup(t, s, sampleEntry(sess.ID, "alice", 0), entries)
			for i, err := range errs {
				if fails := i == 1; fails != (err != nil) || fails && !strings.Contains(err.Error(), "boom") {
					t.Errorf("append c_%04d: %v", i+1, err)
				}
			}
			var got []string
			for _, e := range mustEntries(t, s, "alice", sess.ID) {
				got = append(got, fmt.Sprintf("%d %s", e.Seq, e.CallID))
			}
			if diff := cmp.Diff([]string{"1 c_0000", "2 c_0001", "3 c_0003", "4 c_0004"}, got); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			if got, _ := s.Session(t.Context(), "alice", sess.ID); got.Entries != 4 {
				t.Errorf("the session counts %d entries, want 4", got.Entries)
			}
			log, err := s.AuditLog(t.Context(), "alice", 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			wantAudit := 2 // c_0001 and c_0003
			if tt.audit {
				wantAudit = 3 // and c_0004
			}
			if len(log) != wantAudit {
				t.Errorf("%d audit records, want %d: %+v", len(log), wantAudit, log)
			}
			for _, r := range log {
				if r.EntryID == entries[1].ID || r.Rule == "boom" {
					t.Errorf("the failed entry's audit record is stored: %+v", r)
				}
			}
		})
	}
}

// TestAppendAfterReconnect: the committer's statements survive the
// writer's connection being replaced (the new one prepares its own), and
// are finalized with their connection: Close, closing the last one,
// checkpoints and removes the WAL, which SQLite does only once no
// statement is left.
func TestAppendAfterReconnect(t *testing.T) {
	s, path := openTest(t)
	sess := mustCreate(t, s, "alice", "a")
	mustAppend(t, s, sampleEntry(sess.ID, "alice", 1))
	// With no idle connection allowed, the writer's connection is closed
	// after each use, so each append below runs on a new one.
	s.w.SetMaxIdleConns(0)
	for i := 2; i <= 4; i++ {
		e := sampleEntry(sess.ID, "alice", i)
		e.Audit = []Audit{{Origin: "user", Server: "x", Tool: "t", Phase: "call", Rule: "r", Effect: "allow"}}
		mustAppend(t, s, e)
		if e.Seq != int64(i) {
			t.Errorf("append %d got seq %d", i, e.Seq)
		}
	}
	s.w.SetMaxIdleConns(1)
	if st := s.w.Stats(); st.MaxIdleClosed < 3 {
		t.Errorf("the writer's connection was closed %d times, want at least 3", st.MaxIdleClosed)
	}
	if got := mustEntries(t, s, "alice", sess.ID); len(got) != 4 {
		t.Errorf("%d entries, want 4", len(got))
	}
	mustAppend(t, s, sampleEntry(sess.ID, "alice", 5))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after Close, the WAL is still there (%v): a statement outlived its connection", err)
	}
}
