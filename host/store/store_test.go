package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// epoch is the fake clock's first reading.
var epoch = time.Date(2026, 11, 30, 9, 0, 0, 123456789, time.UTC)

// fakeClock returns a clock that starts at epoch and advances one second on
// every reading.
func fakeClock() func() time.Time {
	var n atomic.Int64
	return func() time.Time { return epoch.Add(time.Duration(n.Add(1)-1) * time.Second) }
}

// openTest opens a store in a new temporary directory with a fake clock.
func openTest(t testing.TB) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mcphost.db")
	s := mustOpen(t, path)
	s.now = fakeClock()
	return s, path
}

func mustOpen(t testing.TB, path string) *Store {
	t.Helper()
	return mustOpenWith(t, path, Options{})
}

func mustOpenWith(t testing.TB, path string, opts Options) *Store {
	t.Helper()
	s, err := OpenWith(t.Context(), path, nil, opts)
	if err != nil {
		t.Fatalf("OpenWith(%+v): %v", opts, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func mustCreate(t testing.TB, s *Store, principal, title string) Session {
	t.Helper()
	sess, err := s.CreateSession(t.Context(), principal, title)
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	return sess
}

// sampleEntry is an entry with every field set.
func sampleEntry(sessionID, principal string, i int) *Entry {
	return &Entry{
		SessionID:       sessionID,
		CallID:          fmt.Sprintf("c_%04d", i),
		Principal:       principal,
		Origin:          "user",
		Server:          "revenue",
		Tool:            "show_revenue_dashboard",
		Arguments:       json.RawMessage(fmt.Sprintf(`{"quarter": "Q3", "i": %d}`, i)),
		Status:          StatusOK,
		Result:          json.RawMessage(fmt.Sprintf(`{"content":[{"type":"text","text":"call %d"}],"isError":false}`, i)),
		Era:             "legacy",
		ProtocolVersion: "2025-11-25",
		StartedAt:       epoch.Add(time.Duration(i) * time.Millisecond),
		DurationMs:      12.5,
	}
}

// stored is e as Entries returns it: nil or empty JSON fields read back as
// null, and no kind as a call.
func stored(e Entry) Entry {
	for _, f := range []*json.RawMessage{&e.Arguments, &e.Result, &e.Display, &e.Trail} {
		if len(*f) == 0 {
			*f = json.RawMessage("null")
		}
	}
	if e.Kind == "" {
		e.Kind = KindCall
	}
	return e
}

func mustAppend(t testing.TB, s *Store, e *Entry) *Entry {
	t.Helper()
	if err := s.AppendEntry(t.Context(), e); err != nil {
		t.Fatalf("AppendEntry: %v", err)
	}
	return e
}

func mustEntries(t testing.TB, s *Store, principal, sessionID string) []Entry {
	t.Helper()
	var all []Entry
	var after int64
	for {
		page, next, err := s.Entries(t.Context(), principal, sessionID, after, maxLimit)
		if err != nil {
			t.Fatalf("Entries: %v", err)
		}
		all = append(all, page...)
		if next == 0 {
			return all
		}
		after = next
	}
}

func TestCreateSessionTitle(t *testing.T) {
	onBackends(t, func(t *testing.T, bk backend) {
		long := strings.Repeat("é", 250)
		tests := []struct {
			name, title, want string
		}{
			{"given", "Quarterly numbers", "Quarterly numbers"},
			{"trimmed", "  \t Quarterly numbers \n", "Quarterly numbers"},
			{"empty", "", "Session 2026-11-30 09:00:00"},
			{"blank", " \t\n ", "Session 2026-11-30 09:00:00"},
			{"capped in runes", long, strings.Repeat("é", 200)},
			{"capped then trimmed", strings.Repeat("a", 199) + "  tail", strings.Repeat("a", 199)},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s, _ := bk.open(t)
				got := mustCreate(t, s, "alice", tt.title)
				want := Session{ID: got.ID, Principal: "alice", Title: tt.want, CreatedAt: epoch, UpdatedAt: epoch}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("CreateSession (-want +got):\n%s", diff)
				}
				if !strings.HasPrefix(got.ID, "s_") || len(got.ID) != 18 || strings.Trim(got.ID[2:], "0123456789abcdef") != "" {
					t.Errorf("ID = %q, want s_ and 16 hex digits", got.ID)
				}
				back, err := s.Session(t.Context(), "alice", got.ID)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(got, back); diff != "" {
					t.Errorf("Session (-created +read):\n%s", diff)
				}
			})
		}
	})
}

func TestCreateSessionEmptyPrincipal(t *testing.T) {
	onBackends(t, func(t *testing.T, bk backend) {
		s, _ := bk.open(t)
		if _, err := s.CreateSession(t.Context(), "", "x"); err == nil {
			t.Fatal("CreateSession with an empty principal succeeded")
		}
	})
}

func TestSessions(t *testing.T) {
	onBackends(t, func(t *testing.T, bk backend) {
		s, _ := bk.open(t)
		// The fake clock reads 0s, 1s, 2s, 3s for the sessions, 4s for the entry.
		a1 := mustCreate(t, s, "alice", "a1")
		a2 := mustCreate(t, s, "alice", "a2")
		b1 := mustCreate(t, s, "bob", "b1")
		a3 := mustCreate(t, s, "alice", "a3")
		mustAppend(t, s, sampleEntry(a1.ID, "alice", 1))

		a1.UpdatedAt, a1.Entries = epoch.Add(4*time.Second), 1
		tests := []struct {
			principal string
			want      []Session
		}{
			{"alice", []Session{a1, a3, a2}},
			{"bob", []Session{b1}},
			{"carol", []Session{}},
		}
		for _, tt := range tests {
			t.Run(tt.principal, func(t *testing.T) {
				got, err := s.Sessions(t.Context(), tt.principal)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("Sessions (-want +got):\n%s", diff)
				}
			})
		}
	})
}

func TestSessionNotFound(t *testing.T) {
	onBackends(t, func(t *testing.T, bk backend) {
		s, _ := bk.open(t)
		a := mustCreate(t, s, "alice", "mine")
		tests := []struct {
			name, principal, id string
		}{
			{"missing", "alice", "s_0000000000000000"},
			{"another principal's", "bob", a.ID},
			{"empty id", "alice", ""},
			{"empty principal", "", a.ID},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if _, err := s.Session(t.Context(), tt.principal, tt.id); !errors.Is(err, ErrNotFound) {
					t.Errorf("Session: err = %v, want ErrNotFound", err)
				}
				if _, _, err := s.Entries(t.Context(), tt.principal, tt.id, 0, 0); !errors.Is(err, ErrNotFound) {
					t.Errorf("Entries: err = %v, want ErrNotFound", err)
				}
				e := sampleEntry(tt.id, tt.principal, 1)
				if err := s.AppendEntry(t.Context(), e); !errors.Is(err, ErrNotFound) {
					t.Errorf("AppendEntry: err = %v, want ErrNotFound", err)
				}
				if e.ID != "" || e.Seq != 0 {
					t.Errorf("a refused AppendEntry set ID %q, Seq %d", e.ID, e.Seq)
				}
			})
		}
		got, err := s.Session(t.Context(), "alice", a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Entries != 0 {
			t.Errorf("Entries = %d after refused appends, want 0", got.Entries)
		}
	})
}

func TestSessionJSON(t *testing.T) {
	b, err := json.Marshal(Session{ID: "s_1", Principal: "alice", Title: "t", CreatedAt: epoch, UpdatedAt: epoch, Entries: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"s_1","title":"t","createdAt":"2026-11-30T09:00:00.123456789Z","updatedAt":"2026-11-30T09:00:00.123456789Z","entries":3}`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("Session JSON (-want +got):\n%s", diff)
	}
}

func TestEntryRoundTrip(t *testing.T) {
	onBackends(t, func(t *testing.T, bk backend) {
		tests := []struct {
			name string
			in   Entry
			// wantJSON are the stored Arguments, Result, Display, Trail.
			wantJSON [4]string
		}{
			{
				name: "every field",
				in: Entry{
					CallID: "c_1", Origin: "user", Server: "revenue", Tool: "show_revenue_dashboard",
					Arguments:       json.RawMessage(`{ "quarter" : "Q3",  "n": 1.50e2 }`),
					Status:          StatusToolError,
					Result:          json.RawMessage("{\"content\":[{\"type\":\"text\",\"text\":\"caf\u00e9 \\u00e9 \\ud83d\\ude00\"}],\n \"isError\":true}"),
					Error:           "",
					Era:             "legacy",
					ProtocolVersion: "2025-11-25",
					StartedAt:       time.Date(2026, 11, 30, 9, 0, 0, 123456789, time.UTC),
					DurationMs:      12.5,
					Display:         json.RawMessage(`{"type":"mcp_app","html":"<p>\u003c</p>"}`),
					Trail:           json.RawMessage(`[{"plugin":"redact","changed":true}]`),
				},
				wantJSON: [4]string{
					`{ "quarter" : "Q3",  "n": 1.50e2 }`,
					"{\"content\":[{\"type\":\"text\",\"text\":\"caf\u00e9 \\u00e9 \\ud83d\\ude00\"}],\n \"isError\":true}",
					`{"type":"mcp_app","html":"<p>\u003c</p>"}`,
					`[{"plugin":"redact","changed":true}]`,
				},
			},
			{
				name:     "nil JSON fields become null",
				in:       Entry{CallID: "c_2", Origin: "api", Server: "s", Tool: "t", Status: StatusError, Error: "server exited", StartedAt: epoch},
				wantJSON: [4]string{"null", "null", "null", "null"},
			},
			{
				name: "empty JSON fields become null, explicit null kept",
				in: Entry{CallID: "c_3", Origin: "api", Server: "s", Tool: "t", Status: StatusCancelled,
					Arguments: json.RawMessage{}, Result: json.RawMessage("null"), Display: json.RawMessage(" null "), Trail: json.RawMessage{}},
				wantJSON: [4]string{"null", "null", " null ", "null"},
			},
			{
				name: "start time in another zone",
				in: Entry{CallID: "c_4", Origin: "api", Server: "s", Tool: "t", Status: StatusOK,
					Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{"content":[]}`), DurationMs: 0.001,
					StartedAt: time.Date(2026, 11, 30, 10, 0, 0, 1, time.FixedZone("CET", 3600))},
				wantJSON: [4]string{`{}`, `{"content":[]}`, "null", "null"},
			},
			{
				name: "no start time",
				in: Entry{CallID: "c_5", Origin: "api", Server: "s", Tool: "t", Status: StatusOK,
					Arguments: json.RawMessage(`[]`), Result: json.RawMessage(`{"content":[]}`)},
				wantJSON: [4]string{`[]`, `{"content":[]}`, "null", "null"},
			},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s, reopen := bk.open(t)
				sess := mustCreate(t, s, "alice", "")
				in := tt.in
				in.SessionID, in.Principal = sess.ID, "alice"
				mustAppend(t, s, &in)
				if !strings.HasPrefix(in.ID, "e_") || len(in.ID) != 18 {
					t.Errorf("ID = %q, want e_ and 16 hex digits", in.ID)
				}
				if in.Seq != 1 {
					t.Errorf("Seq = %d, want 1", in.Seq)
				}

				want := in
				want.Arguments = json.RawMessage(tt.wantJSON[0])
				want.Result = json.RawMessage(tt.wantJSON[1])
				want.Display = json.RawMessage(tt.wantJSON[2])
				want.Trail = json.RawMessage(tt.wantJSON[3])
				check := func(s *Store) {
					t.Helper()
					got, next, err := s.Entries(t.Context(), "alice", sess.ID, 0, 0)
					if err != nil {
						t.Fatal(err)
					}
					if next != 0 {
						t.Errorf("next = %d, want 0", next)
					}
					if diff := cmp.Diff([]Entry{want}, got); diff != "" {
						t.Errorf("Entries (-want +got):\n%s", diff)
					}
					if len(got) == 1 && got[0].StartedAt.Location() != time.UTC {
						t.Errorf("StartedAt location = %v, want UTC", got[0].StartedAt.Location())
					}
				}
				check(s)
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				check(reopen(t))
			})
		}
	})
}

func TestAppendEntryInvalid(t *testing.T) {
	onBackends(t, func(t *testing.T, bk backend) {
		tests := []struct {
			name   string
			modify func(e *Entry)
		}{
			{"malformed arguments", func(e *Entry) { e.Arguments = json.RawMessage(`{"quarter":`) }},
			{"malformed result", func(e *Entry) { e.Result = json.RawMessage(`{"content":[}`) }},
			{"result not JSON", func(e *Entry) { e.Result = json.RawMessage(`hello`) }},
			{"two JSON values", func(e *Entry) { e.Arguments = json.RawMessage(`{} {}`) }},
			{"malformed display", func(e *Entry) { e.Display = json.RawMessage(`{'a':1}`) }},
			{"malformed trail", func(e *Entry) { e.Trail = json.RawMessage(`[1,]`) }},
			{"empty status", func(e *Entry) { e.Status = "" }},
			{"unknown status", func(e *Entry) { e.Status = "paused" }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s, _ := bk.open(t)
				sess := mustCreate(t, s, "alice", "")
				e := sampleEntry(sess.ID, "alice", 1)
				tt.modify(e)
				err := s.AppendEntry(t.Context(), e)
				if err == nil || errors.Is(err, ErrNotFound) {
					t.Fatalf("AppendEntry: err = %v, want a validation error", err)
				}
				if e.ID != "" || e.Seq != 0 {
					t.Errorf("a refused AppendEntry set ID %q, Seq %d", e.ID, e.Seq)
				}
				if got := mustEntries(t, s, "alice", sess.ID); len(got) != 0 {
					t.Errorf("a refused entry was stored: %+v", got)
				}
			})
		}
		t.Run("nil entry", func(t *testing.T) {
			s, _ := bk.open(t)
			if err := s.AppendEntry(t.Context(), nil); err == nil {
				t.Fatal("AppendEntry(nil) succeeded")
			}
		})
	})
}

func TestEntriesPagination(t *testing.T) {
	onBackends(t, func(t *testing.T, bk backend) {
		s, _ := bk.open(t)
		sess := mustCreate(t, s, "alice", "")
		other := mustCreate(t, s, "alice", "")
		for i := 1; i <= 7; i++ {
			e := mustAppend(t, s, sampleEntry(sess.ID, "alice", i))
			if e.Seq != int64(i) {
				t.Fatalf("entry %d got Seq %d", i, e.Seq)
			}
			// Interleave another session: seqs are per session.
			if o := mustAppend(t, s, sampleEntry(other.ID, "alice", 100+i)); o.Seq != int64(i) {
				t.Fatalf("other session entry %d got Seq %d", i, o.Seq)
			}
		}
		got, err := s.Session(t.Context(), "alice", sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Entries != 7 {
			t.Errorf("session Entries = %d, want 7", got.Entries)
		}

		tests := []struct {
			name     string
			after    int64
			limit    int
			wantSeqs []int64
			wantNext int64
		}{
			{"first page", 0, 3, []int64{1, 2, 3}, 3},
			{"second page", 3, 3, []int64{4, 5, 6}, 6},
			{"last page", 6, 3, []int64{7}, 0},
			{"exactly the rest", 4, 3, []int64{5, 6, 7}, 0},
			{"default limit", 2, 0, []int64{3, 4, 5, 6, 7}, 0},
			{"negative limit", 0, -5, []int64{1, 2, 3, 4, 5, 6, 7}, 0},
			{"limit one", 5, 1, []int64{6}, 6},
			{"after the end", 7, 10, []int64{}, 0},
			{"far after the end", 1000, 10, []int64{}, 0},
			{"negative after", -3, 2, []int64{1, 2}, 2},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				page, next, err := s.Entries(t.Context(), "alice", sess.ID, tt.after, tt.limit)
				if err != nil {
					t.Fatal(err)
				}
				seqs := []int64{}
				for _, e := range page {
					seqs = append(seqs, e.Seq)
					if e.SessionID != sess.ID {
						t.Errorf("entry %d belongs to session %q", e.Seq, e.SessionID)
					}
				}
				if diff := cmp.Diff(tt.wantSeqs, seqs); diff != "" {
					t.Errorf("seqs (-want +got):\n%s", diff)
				}
				if next != tt.wantNext {
					t.Errorf("next = %d, want %d", next, tt.wantNext)
				}
			})
		}
	})
}

func TestClampLimit(t *testing.T) {
	tests := []struct{ in, want int }{
		{-1, 100}, {0, 100}, {1, 1}, {100, 100}, {499, 499}, {500, 500}, {501, 500}, {1 << 30, 500},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.in), func(t *testing.T) {
			if got := clampLimit(tt.in); got != tt.want {
				t.Errorf("clampLimit(%d) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestReopenKeepsEverything(t *testing.T) {
	onBackends(t, func(t *testing.T, bk backend) {
		s, reopen := bk.open(t)
		a := mustCreate(t, s, "alice", "a")
		b := mustCreate(t, s, "bob", "b")
		var want []Entry
		for i := 1; i <= 5; i++ {
			want = append(want, stored(*mustAppend(t, s, sampleEntry(a.ID, "alice", i))))
		}
		mustAppend(t, s, sampleEntry(b.ID, "bob", 9))
		wantSessions, err := s.Sessions(t.Context(), "alice")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}

		for round := range 3 {
			s2 := reopen(t)
			gotSessions, err := s2.Sessions(t.Context(), "alice")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantSessions, gotSessions); diff != "" {
				t.Errorf("round %d: Sessions (-want +got):\n%s", round, diff)
			}
			if diff := cmp.Diff(want, mustEntries(t, s2, "alice", a.ID)); diff != "" {
				t.Errorf("round %d: Entries (-want +got):\n%s", round, diff)
			}
			if err := s2.Close(); err != nil {
				t.Fatal(err)
			}
		}

		// Appending after a reopen continues the sequence.
		s3 := reopen(t)
		if e := mustAppend(t, s3, sampleEntry(a.ID, "alice", 6)); e.Seq != 6 {
			t.Errorf("Seq after reopen = %d, want 6", e.Seq)
		}
	})
}

// rawDB opens path with database/sql directly, bypassing the store.
func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func pragmaInt(t testing.TB, db *sql.DB, name string) int64 {
	t.Helper()
	var v int64
	if err := db.QueryRowContext(t.Context(), "PRAGMA "+name).Scan(&v); err != nil {
		t.Fatalf("PRAGMA %s: %v", name, err)
	}
	return v
}

func TestMigrations(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcphost.db")
	ctx := t.Context()

	// Open twice with the released migrations: the second open changes nothing.
	for range 2 {
		s, err := open(ctx, path, nil, Options{}, migrations)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	db := rawDB(t, path)
	if got := pragmaInt(t, db, "user_version"); got != int64(len(migrations)) {
		t.Errorf("user_version = %d, want %d", got, len(migrations))
	}
	if got := pragmaInt(t, db, "application_id"); got != applicationID {
		t.Errorf("application_id = %#x, want %#x", got, applicationID)
	}
	db.Close()

	// A release with one more step applies only that step, once.
	next := append(append([]string(nil), migrations...), `CREATE TABLE extra (id INTEGER PRIMARY KEY) STRICT;`)
	for range 2 {
		s, err := open(ctx, path, nil, Options{}, next)
		if err != nil {
			t.Fatalf("open with a new migration: %v", err)
		}
		s.Close()
	}
	db = rawDB(t, path)
	if got := pragmaInt(t, db, "user_version"); got != int64(len(next)) {
		t.Errorf("user_version = %d, want %d", got, len(next))
	}
	db.Close()

	// A failing step rolls back entirely and leaves the version alone.
	broken := append(append([]string(nil), next...), `CREATE TABLE half (id INTEGER); CREATE TABLE nope (;`)
	if _, err := open(ctx, path, nil, Options{}, broken); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("open with a broken migration: err = %v, want an error naming %s", err, path)
	}
	db = rawDB(t, path)
	if got := pragmaInt(t, db, "user_version"); got != int64(len(next)) {
		t.Errorf("user_version after a failed migration = %d, want %d", got, len(next))
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name = 'half'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Error("a failed migration left table half behind")
	}
	db.Close()

	// The released binary now sees a database from the future (next has
	// one more step than it knows).
	if _, err := Open(ctx, path, nil); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("Open of a newer database: err = %v, want a 'newer' error", err)
	}
}

func TestOpenRefuses(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string) // makes the file at path
		want    string                          // in the error, besides the path
	}{
		{
			name: "future schema version",
			prepare: func(t *testing.T, path string) {
				s := mustOpen(t, path)
				mustCreate(t, s, "alice", "")
				s.Close()
				db := rawDB(t, path)
				if _, err := db.ExecContext(t.Context(), fmt.Sprintf("PRAGMA user_version = %d", len(migrations)+1)); err != nil {
					t.Fatal(err)
				}
				db.Close()
			},
			want: "newer than this mcphost supports",
		},
		{
			name: "random bytes",
			prepare: func(t *testing.T, path string) {
				if err := os.WriteFile(path, []byte(rand.Text()+rand.Text()+strings.Repeat("\x00\xff", 4096)), 0o600); err != nil {
					t.Fatal(err)
				}
			},
			want: "not a database",
		},
		{
			name: "damaged header",
			prepare: func(t *testing.T, path string) {
				s := mustOpen(t, path)
				mustCreate(t, s, "alice", "")
				s.Close()
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				copy(b[16:], []byte{0xde, 0xad, 0xbe, 0xef}) // page size and format bytes
				if err := os.WriteFile(path, b, 0o600); err != nil {
					t.Fatal(err)
				}
			},
			want: "not a database",
		},
		{
			name: "another program's database",
			prepare: func(t *testing.T, path string) {
				db := rawDB(t, path)
				if _, err := db.ExecContext(t.Context(), `CREATE TABLE notes (body TEXT)`); err != nil {
					t.Fatal(err)
				}
				db.Close()
			},
			want: "not an mcphost database",
		},
		{
			name: "another program's application_id",
			prepare: func(t *testing.T, path string) {
				db := rawDB(t, path)
				if _, err := db.ExecContext(t.Context(), `PRAGMA application_id = 1234`); err != nil {
					t.Fatal(err)
				}
				db.Close()
			},
			want: "not an mcphost database",
		},
		{
			name: "a directory",
			prepare: func(t *testing.T, path string) {
				if err := os.Mkdir(path, 0o700); err != nil {
					t.Fatal(err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "mcphost.db")
			tt.prepare(t, path)
			before, _ := os.ReadFile(path)
			s, err := Open(t.Context(), path, nil)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Open: err = %q, want it to name %q and say %q", err, path, tt.want)
			}
			after, _ := os.ReadFile(path)
			if !cmp.Equal(before, after, cmpopts.EquateEmpty()) {
				t.Error("a refused Open changed the file")
			}
		})
	}
}

func TestOpenUnknownSync(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "mcphost.db")
	s, err := OpenWith(t.Context(), path, nil, Options{Sync: Sync(7)})
	if err == nil {
		s.Close()
		t.Fatal("OpenWith succeeded")
	}
	if want := "unknown sync mode Sync(7)"; !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want) {
		t.Errorf("OpenWith: err = %q, want it to name %q and say %q", err, path, want)
	}
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused OpenWith created its directory: %v", err)
	}
}

func TestSyncString(t *testing.T) {
	for m, want := range map[Sync]string{SyncFull: "full", SyncNormal: "normal", Sync(7): "Sync(7)"} {
		if got := m.String(); got != want {
			t.Errorf("Sync(%d).String() = %q, want %q", int(m), got, want)
		}
	}
}

func TestFileModes(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "state", "mcphost")
	path := filepath.Join(dir, "mcphost.db")
	s := mustOpen(t, path)
	sess := mustCreate(t, s, "alice", "")
	mustAppend(t, s, sampleEntry(sess.ID, "alice", 1))

	tests := []struct {
		path string
		want os.FileMode
	}{
		{filepath.Join(root, "state"), os.ModeDir | 0o700},
		{dir, os.ModeDir | 0o700},
		{path, 0o600},
		{path + "-wal", 0o600},
		{path + "-shm", 0o600},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			fi, err := os.Stat(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode(); got != tt.want {
				t.Errorf("mode = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestOpenPathWithSpecialCharacters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a dir?x=1#frag%20", "mcp host.db")
	s := mustOpen(t, path)
	mustCreate(t, s, "alice", "")
	s.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not at %q: %v", path, err)
	}
	s2 := mustOpen(t, path)
	if got, err := s2.Sessions(t.Context(), "alice"); err != nil || len(got) != 1 {
		t.Fatalf("Sessions after reopen = %v, %v; want one session", got, err)
	}
}

// synchronousPragma is what PRAGMA synchronous reads under each mode.
var synchronousPragma = map[Sync]int{SyncNormal: 1, SyncFull: 2}

func TestPragmas(t *testing.T) {
	ctx := t.Context()
	opens := []struct {
		name string
		open func(t testing.TB, path string) *Store
		sync Sync
	}{
		{"Open", mustOpen, SyncFull},
		{"full", func(t testing.TB, path string) *Store { return mustOpenWith(t, path, Options{Sync: SyncFull}) }, SyncFull},
		{"normal", func(t testing.TB, path string) *Store { return mustOpenWith(t, path, Options{Sync: SyncNormal}) }, SyncNormal},
	}
	for _, o := range opens {
		t.Run(o.name, func(t *testing.T) {
			s := o.open(t, filepath.Join(t.TempDir(), "mcphost.db"))
			synchronous := fmt.Sprint(synchronousPragma[o.sync])
			tests := []struct {
				name string
				db   *sql.DB
				want map[string]string
			}{
				{"writer", s.w.DB, map[string]string{"journal_mode": "wal", "synchronous": synchronous, "foreign_keys": "1", "busy_timeout": "10000", "query_only": "0"}},
				{"reader", s.r.DB, map[string]string{"journal_mode": "wal", "synchronous": synchronous, "foreign_keys": "1", "busy_timeout": "10000", "query_only": "1"}},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					got := map[string]string{}
					for name := range tt.want {
						var v string
						if err := tt.db.QueryRowContext(ctx, "PRAGMA "+name).Scan(&v); err != nil {
							t.Fatal(err)
						}
						got[name] = v
					}
					if diff := cmp.Diff(tt.want, got); diff != "" {
						t.Errorf("pragmas (-want +got):\n%s", diff)
					}
				})
			}
		})
	}

	s, _ := openTest(t)
	// The foreign key is enforced.
	_, err := s.w.ExecContext(ctx, `INSERT INTO entries (id, session_id, seq, call_id, principal, origin, server, tool,
		arguments, status, result, error, era, protocol_version, started_at, duration_ms, display, trail)
		VALUES ('e_x', 's_missing', 1, '', '', '', '', '', 'null', 'ok', 'null', '', '', '', NULL, 0, 'null', 'null')`)
	if err == nil {
		t.Error("an entry of a missing session was inserted")
	}
}

func TestClosedStore(t *testing.T) {
	onBackends(t, func(t *testing.T, bk backend) {
		s, _ := bk.open(t)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		ctx := context.WithoutCancel(t.Context())
		if _, err := s.CreateSession(ctx, "alice", ""); err == nil {
			t.Error("CreateSession on a closed store succeeded")
		}
		if _, err := s.Sessions(ctx, "alice"); err == nil {
			t.Error("Sessions on a closed store succeeded")
		}
	})
}
