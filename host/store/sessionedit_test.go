package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestSessionEdits(t *testing.T) {
	onBackends(t, func(t *testing.T, bk backend) {
		ctx := context.Background()
		s, _ := bk.open(t)
		s.now = time.Now
		a, _ := s.CreateSession(ctx, "alice", "Quarterly numbers")
		b, _ := s.CreateSession(ctx, "alice", "scratch")
		other, _ := s.CreateSession(ctx, "bob", "Quarterly numbers")
		for i, tool := range []string{"show_revenue_dashboard", "echo"} {
			if err := s.AppendEntry(ctx, &Entry{SessionID: []string{a.ID, b.ID}[i], CallID: "c1", Principal: "alice", Origin: "api",
				Server: "revenue", Tool: tool, Arguments: []byte(`{}`), Status: StatusOK}); err != nil {
				t.Fatal(err)
			}
		}

		// Rename: trimmed, cut, only one's own.
		if got, err := s.RenameSession(ctx, "alice", b.ID, "  Echo tests  "); err != nil || got.Title != "Echo tests" {
			t.Fatalf("rename: %+v, %v", got, err)
		}
		if _, err := s.RenameSession(ctx, "bob", b.ID, "mine"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("rename of another's session: %v", err)
		}

		// Search: title or a call's server or tool, every word, one's own only.
		tests := []struct {
			q    string
			want []string
		}{
			{"quarterly", []string{a.ID}},
			{"REVENUE", []string{b.ID, a.ID}},
			{"dashboard quarterly", []string{a.ID}},
			{"echo", []string{b.ID}},
			{"100%", nil},
			{"_", []string{a.ID}}, // a literal underscore: show_revenue_dashboard
			{"", []string{b.ID, a.ID}},
		}
		for _, tt := range tests {
			got, err := s.SearchSessions(ctx, "alice", tt.q)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, x := range got {
				ids = append(ids, x.ID)
			}
			if len(ids) != len(tt.want) {
				t.Errorf("search %q: %v, want %v", tt.q, ids, tt.want)
				continue
			}
			for i := range ids {
				if ids[i] != tt.want[i] {
					t.Errorf("search %q: %v, want %v", tt.q, ids, tt.want)
				}
			}
		}

		// Delete: the session and its entries, not another's.
		if _, err := s.DeleteSession(ctx, "bob", a.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("delete of another's session: %v", err)
		}
		if n, err := s.DeleteSession(ctx, "alice", a.ID); err != nil || n != 1 {
			t.Fatalf("delete: %d, %v", n, err)
		}
		if _, err := s.Session(ctx, "alice", a.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("the deleted session is still there: %v", err)
		}
		if _, _, err := s.Entries(ctx, "alice", a.ID, 0, 10); !errors.Is(err, ErrNotFound) {
			t.Fatalf("entries of the deleted session: %v", err)
		}
		if _, err := s.Session(ctx, "bob", other.ID); err != nil {
			t.Fatalf("bob's session went too: %v", err)
		}
		// An append to the deleted session fails; nothing is left behind.
		if err := s.AppendEntry(ctx, &Entry{SessionID: a.ID, CallID: "c2", Principal: "alice", Origin: "api", Server: "revenue", Tool: "echo", Arguments: []byte(`{}`), Status: StatusOK}); !errors.Is(err, ErrNotFound) {
			t.Fatalf("append to a deleted session: %v", err)
		}
	})
}
