// Package pgtest starts a real PostgreSQL server, from the distribution's
// binaries, for tests of mcphost's PostgreSQL store.
//
// [Start] starts a server for one test (stopped in its cleanup); [Shared]
// gives every test of a test binary the same server, started on first use
// and stopped by [Main], which the package's TestMain must call:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// [Server.NewDatabase] creates a fresh database per test and returns its
// DSN, so tests sharing a server never see each other's tables.
// [Server.Down], [Server.Up] and [Server.Restart] stop and start the same
// server again (same port, same data) for fault tests.
//
// The server itself is internal/pgserver's (how it finds the binaries,
// runs as the postgres user under root, and where its files live). A test
// without PostgreSQL installed is skipped with a message saying what to
// install, except when the CI environment variable is set: then it fails,
// because CI must not skip.
//
// The package is test infrastructure: production code must never import it.
// It never downloads anything, never installs anything and never writes
// outside its own directory.
package pgtest
