package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// appDisplay is a display record with html of n bytes (multi-byte
// characters count by their UTF-8 length).
func appDisplay(html string) json.RawMessage {
	b, err := json.Marshal(map[string]any{"type": "mcp_app", "serverName": "revenue", "html": html, "fallbackText": "text"})
	if err != nil {
		panic(err)
	}
	return b
}

func TestAppMessageEntry(t *testing.T) {
	onBackends(t, func(t *testing.T, bk backend) {
		s, reopen := bk.open(t)
		sess := mustCreate(t, s, "alice", "")
		app := mustAppend(t, s, sampleEntry(sess.ID, "alice", 1))
		msg := &Entry{
			SessionID: sess.ID, Principal: "alice", Origin: "app", Server: "revenue",
			Kind: KindAppMessage, AppEntryID: app.ID, Status: StatusOK,
			Message: json.RawMessage(`{"content":[{"type":"text","text":"hi from the App"}]}`),
		}
		mustAppend(t, s, msg)
		call := mustAppend(t, s, &Entry{SessionID: sess.ID, Principal: "alice", Origin: "app", Server: "revenue",
			Tool: "show_revenue_dashboard", AppEntryID: app.ID, Status: StatusOK})
		if call.Kind != KindCall {
			t.Errorf("Kind after append = %q, want %q", call.Kind, KindCall)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = reopen(t)
		got := mustEntries(t, s, "alice", sess.ID)
		want := []Entry{stored(*app), stored(*msg), stored(*call)}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("entries (-want +got):\n%s", diff)
		}
		b, err := json.Marshal(got[1])
		if err != nil {
			t.Fatal(err)
		}
		for _, field := range []string{`"kind":"app_message"`, `"appEntryId":"` + app.ID + `"`, `"message":{"content":`} {
			if !strings.Contains(string(b), field) {
				t.Errorf("App message JSON %s lacks %s", b, field)
			}
		}
		if b, _ := json.Marshal(got[0]); strings.Contains(string(b), "appEntryId") || strings.Contains(string(b), `"message"`) {
			t.Errorf("a plain call's JSON %s has App fields", b)
		}

		// One entry by id, for its principal only.
		e, err := s.Entry(t.Context(), "alice", msg.ID)
		if err != nil || e.Kind != KindAppMessage || e.AppEntryID != app.ID {
			t.Errorf("Entry = %+v, %v", e, err)
		}
		if _, err := s.Entry(t.Context(), "bob", msg.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("Entry of another principal: %v, want ErrNotFound", err)
		}
		if _, err := s.Entry(t.Context(), "alice", "e_missing"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Entry of a missing id: %v, want ErrNotFound", err)
		}

		bad := &Entry{SessionID: sess.ID, Principal: "alice", Status: StatusOK, Kind: "note"}
		if err := s.AppendEntry(t.Context(), bad); err == nil {
			t.Error("an unknown kind was stored")
		}
		bad = &Entry{SessionID: sess.ID, Principal: "alice", Status: StatusOK, Kind: KindAppMessage, Message: json.RawMessage(`{`)}
		if err := s.AppendEntry(t.Context(), bad); err == nil {
			t.Error("a malformed message was stored")
		}
	})
}

// TestAppHTMLQueries covers what the compaction pass reads: App HTML by age,
// per session, and its upkeep by SetDisplay.
func TestAppHTMLQueries(t *testing.T) {
	onBackends(t, func(t *testing.T, bk backend) {
		s, _ := bk.open(t)
		ctx := t.Context()
		a := mustCreate(t, s, "alice", "a")
		b := mustCreate(t, s, "bob", "b")
		add := func(sess Session, i int, display json.RawMessage) *Entry {
			e := sampleEntry(sess.ID, sess.Principal, i)
			e.StartedAt = epoch.Add(time.Duration(i) * time.Hour)
			e.Display = display
			return mustAppend(t, s, e)
		}
		a1 := add(a, 1, appDisplay(strings.Repeat("x", 100)))
		add(a, 2, nil)
		a3 := add(a, 3, appDisplay(strings.Repeat("é", 100))) // 200 bytes
		a4 := add(a, 4, appDisplay(""))                       // failure form: nothing to compact
		b5 := add(b, 5, appDisplay(strings.Repeat("y", 50)))
		noStart := sampleEntry(b.ID, "bob", 6)
		noStart.StartedAt = time.Time{}
		noStart.Display = appDisplay("zz")
		mustAppend(t, s, noStart)

		old, err := s.AppHTMLStartedBefore(ctx, epoch.Add(4*time.Hour), 0)
		if err != nil {
			t.Fatal(err)
		}
		want := []AppHTML{
			{a1.ID, a.ID, "alice", 1, a1.StartedAt, 100},
			{a3.ID, a.ID, "alice", 3, a3.StartedAt, 200},
		}
		if diff := cmp.Diff(want, old); diff != "" {
			t.Errorf("AppHTMLStartedBefore (-want +got):\n%s", diff)
		}
		if old, _ := s.AppHTMLStartedBefore(ctx, epoch.Add(10*time.Hour), 1); len(old) != 1 || old[0].EntryID != a1.ID {
			t.Errorf("AppHTMLStartedBefore with limit 1 = %+v, want the oldest", old)
		}

		over, err := s.SessionsOverAppHTML(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]SessionAppHTML{{a.ID, "alice", 300}}, over); diff != "" {
			t.Errorf("SessionsOverAppHTML(100) (-want +got):\n%s", diff)
		}
		over, _ = s.SessionsOverAppHTML(ctx, 0)
		if diff := cmp.Diff([]SessionAppHTML{{a.ID, "alice", 300}, {b.ID, "bob", 52}}, over); diff != "" {
			t.Errorf("SessionsOverAppHTML(0) (-want +got):\n%s", diff)
		}

		ofA, err := s.AppHTMLOfSession(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(ofA) != 2 || ofA[0].EntryID != a1.ID || ofA[1].EntryID != a3.ID || ofA[1].Bytes != 200 {
			t.Errorf("AppHTMLOfSession = %+v, want a1 then a3", ofA)
		}
		ofB, _ := s.AppHTMLOfSession(ctx, b.ID)
		if len(ofB) != 2 || ofB[0].EntryID != b5.ID || !ofB[1].StartedAt.IsZero() {
			t.Errorf("AppHTMLOfSession(b) = %+v", ofB)
		}

		// SetDisplay keeps the size: a compacted record no longer counts.
		if err := s.SetDisplay(ctx, "alice", a3.ID, appDisplay("")); err != nil {
			t.Fatal(err)
		}
		if err := s.SetDisplay(ctx, "alice", a4.ID, appDisplay("new")); err != nil {
			t.Fatal(err)
		}
		ofA, _ = s.AppHTMLOfSession(ctx, a.ID)
		if len(ofA) != 2 || ofA[0].EntryID != a1.ID || ofA[1].EntryID != a4.ID || ofA[1].Bytes != 3 {
			t.Errorf("after SetDisplay: %+v, want a1 and a4 (3 bytes)", ofA)
		}
	})
}

// TestMigration3Backfills opens a database written at schema version 2 with
// App records in it: the new column gets their HTML sizes.
func TestMigration3Backfills(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v2.db")
	db := rawDB(t, path)
	ctx := t.Context()
	for i, m := range migrations[:2] {
		if _, err := db.ExecContext(ctx, m); err != nil {
			t.Fatalf("migration %d: %v", i+1, err)
		}
	}
	if _, err := db.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d; PRAGMA user_version = 2", applicationID)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO sessions (id, principal, title, created_at, updated_at, entries) VALUES ('s_1', 'alice', 't', 0, 0, 4)`); err != nil {
		t.Fatal(err)
	}
	for i, display := range []string{string(appDisplay("<p>é</p>")), "null", `{"type":"mcp_app","html":""}`, `{"html":42}`} {
		if _, err := db.ExecContext(ctx, `INSERT INTO entries (id, session_id, seq, call_id, principal, origin, server, tool,
			arguments, status, result, error, era, protocol_version, started_at, duration_ms, display, trail)
			VALUES (?, 's_1', ?, '', 'alice', 'user', 'revenue', 't', 'null', 'ok', 'null', '', '', '', 1, 0, ?, 'null')`,
			fmt.Sprintf("e_%d", i), i+1, display); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	s := mustOpen(t, path)
	got, err := s.AppHTMLOfSession(ctx, "s_1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].EntryID != "e_0" || got[0].Bytes != int64(len("<p>é</p>")) {
		t.Errorf("after migrating: %+v, want e_0 with %d bytes", got, len("<p>é</p>"))
	}
	entries := mustEntries(t, s, "alice", "s_1")
	if len(entries) != 4 || entries[0].Kind != KindCall || entries[0].Message != nil {
		t.Errorf("migrated entries %+v, want four calls", entries)
	}
}
