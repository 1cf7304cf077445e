package store

import (
	"path/filepath"
	"testing"

	"github.com/mcphost/mcphost/internal/pgtest"
)

// backend is one engine the contract tests run against.
type backend struct {
	name string
	// open opens a new, empty store with the fake clock; reopen opens the
	// same database again (with the real clock), for tests of what
	// survives a Close.
	open func(t testing.TB) (s *Store, reopen func(t testing.TB) *Store)
	// logged says its appends go through the entry log (entrylog.go),
	// whose applier alone feeds the group commit.
	logged bool
}

// backends are the engines of the store contract: SQLite, SQLite with
// SyncNormal (whose appends go through the entry log), and PostgreSQL
// from pgtest's shared server (skipped when PostgreSQL is not installed,
// failed instead when CI is set).
func backends(t testing.TB) []backend {
	t.Helper()
	return []backend{
		{name: "sqlite", open: func(t testing.TB) (*Store, func(testing.TB) *Store) {
			t.Helper()
			path := filepath.Join(t.TempDir(), "mcphost.db")
			s := mustOpen(t, path)
			s.now = fakeClock()
			return s, func(t testing.TB) *Store { t.Helper(); return mustOpen(t, path) }
		}},
		{name: "sqlite-entrylog", open: func(t testing.TB) (*Store, func(testing.TB) *Store) {
			t.Helper()
			path := filepath.Join(t.TempDir(), "mcphost.db")
			s := mustOpenWith(t, path, Options{Sync: SyncNormal})
			s.now = fakeClock()
			return s, func(t testing.TB) *Store { t.Helper(); return mustOpenWith(t, path, Options{Sync: SyncNormal}) }
		}, logged: true},
		{name: "postgres", open: func(t testing.TB) (*Store, func(testing.TB) *Store) {
			t.Helper()
			dsn := pgtest.Shared(t).NewDatabase(t)
			s := mustOpenPostgres(t, dsn, Options{})
			s.now = fakeClock()
			return s, func(t testing.TB) *Store { t.Helper(); return mustOpenPostgres(t, dsn, Options{}) }
		}},
	}
}

// testSecret is the cluster secret of the tests' replicas.
var testSecret = []byte("cluster-secret-of-the-store-tests-0123456789")

// mustOpenPostgres opens dsn with opts; a replica gets testSecret unless
// opts names a secret.
func mustOpenPostgres(t testing.TB, dsn string, opts Options) *Store {
	t.Helper()
	if opts.Replica != "" && opts.Secret == nil {
		opts.Secret = testSecret
	}
	s, err := OpenPostgres(t.Context(), dsn, nil, opts)
	if err != nil {
		t.Fatalf("OpenPostgres(%+v): %v", opts, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// onBackends runs test once per backend, as a subtest named after it.
func onBackends(t *testing.T, test func(t *testing.T, b backend)) {
	t.Helper()
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) { test(t, b) })
	}
}

// onCommitBackends is onBackends for the tests of the group commit seen
// from its callers (who leads, what a caller waits for): the backends
// whose appending callers write the groups, so not the entry log's, whose
// applier does (its tests are in entrylog_test.go).
func onCommitBackends(t *testing.T, test func(t *testing.T, b backend)) {
	t.Helper()
	for _, b := range backends(t) {
		if !b.logged {
			t.Run(b.name, func(t *testing.T) { test(t, b) })
		}
	}
}

// holdCommitter makes the leader wait before it writes its next group
// (holding the leadership), so that the appends made meanwhile queue up
// into one group. Calling the returned function lets it go on.
func holdCommitter(t *testing.T, s *Store) (release func()) {
	t.Helper()
	ch := make(chan struct{})
	hook := func() { <-ch }
	s.beforeGroup.Store(&hook)
	var closed bool
	release = func() {
		if !closed {
			closed = true
			close(ch)
		}
	}
	t.Cleanup(release)
	return release
}
