package store

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/pgtest"
)

// takeover is how long a test waits for a lock PostgreSQL freed to be
// taken by another Store: generous, never a threshold the code must beat.
const takeover = 30 * time.Second

// waitLead polls s.TryLead until it leads job or the deadline passes.
func waitLead(t *testing.T, s *Store, job string) *Lease {
	t.Helper()
	deadline := time.Now().Add(takeover)
	for {
		l, ok, err := s.TryLead(t.Context(), job)
		if err != nil {
			t.Fatalf("TryLead: %v", err)
		}
		if ok {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("no leadership of %q within %s", job, takeover)
		}
		time.Sleep(20 * time.Millisecond) // polling a lock another server session frees
	}
}

func TestTryLeadOneLeaderAcrossStores(t *testing.T) {
	dsn := pgtest.Shared(t).NewDatabase(t)
	a := mustOpenPostgres(t, dsn, Options{Replica: "a"})
	b := mustOpenPostgres(t, dsn, Options{Replica: "b"})
	leader := func(job, want string) {
		t.Helper()
		for _, s := range []*Store{a, b} {
			got, ok, err := s.Leader(t.Context(), job)
			if err != nil || got != want || ok != (want != "") {
				t.Fatalf("Leader(%q) from replica %s: %q %v %v, want %q", job, s.replica, got, ok, err, want)
			}
		}
	}
	leader("compact", "")

	la, ok, err := a.TryLead(t.Context(), "compact")
	if err != nil || !ok {
		t.Fatalf("first TryLead: %v %v, want the lead", ok, err)
	}
	if _, ok, err := b.TryLead(t.Context(), "compact"); err != nil || ok {
		t.Fatalf("second store's TryLead while a leads: %v %v, want no lead", ok, err)
	}
	if _, ok, err := a.TryLead(t.Context(), "compact"); err != nil || ok {
		t.Fatalf("a second lease of the same job on the same store: %v %v, want none (a lease is a session's)", ok, err)
	}
	lo, ok, err := b.TryLead(t.Context(), "other-job")
	if err != nil || !ok {
		t.Fatalf("another job: %v %v, want the lead", ok, err)
	}
	leader("compact", "a")
	leader("other-job", "b")
	lo.Release()
	leader("other-job", "")

	// Release hands it over.
	la.Release()
	select {
	case <-la.Lost():
	default:
		t.Fatal("Lost is open after Release")
	}
	lb := waitLead(t, b, "compact")
	leader("compact", "b")

	// Killing the leader's lock connection loses the lease (its holder is
	// told) and frees the lock for the other store.
	var pid int
	if err := a.w.QueryRowContext(t.Context(), `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := a.w.ExecContext(t.Context(), `SELECT pg_terminate_backend(?)`, pid); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lb.Lost():
	case <-time.After(takeover):
		t.Fatal("the lease was not lost after its connection was terminated")
	}
	la = waitLead(t, a, "compact")
	leader("compact", "a")

	// Closing the leader's store frees it too.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-la.Lost():
	default:
		t.Fatal("Lost is open after the store closed")
	}
	waitLead(t, b, "compact").Release()
}

func TestTryLeadSQLiteAlwaysLeads(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), "mcphost.db"))
	for range 2 {
		l, ok, err := s.TryLead(t.Context(), "compact")
		if err != nil || !ok {
			t.Fatalf("TryLead on SQLite: %v %v, want the lead (one node)", ok, err)
		}
		defer l.Release()
	}
	if got, ok, err := s.Leader(t.Context(), "compact"); err != nil || !ok || got != s.replica {
		t.Fatalf("Leader on SQLite: %q %v %v, want the store's own replica", got, ok, err)
	}
}
