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
// How it runs PostgreSQL:
//
//   - The binaries are found under /usr/lib/postgresql/*/bin (the newest
//     version first), then on PATH. Without them a test is skipped with a
//     message saying what to install, except when the CI environment
//     variable is set: then it fails, because CI must not skip.
//   - initdb refuses to run as root. As root, initdb and pg_ctl run as the
//     postgres user (runuser -u postgres --), and the postmaster itself is
//     started as that user through the process credentials, so that it can
//     be given a parent-death signal: a test binary that dies (a panic, a
//     -timeout) takes its server with it instead of leaving it running.
//     Not as root, everything runs as the current user.
//   - The data and socket directories live under a directory of their own
//     that everyone may traverse (t.TempDir's parents are 0700 root, which
//     the postgres user cannot enter); it is removed when the server stops.
//   - The server listens on 127.0.0.1 on a free port, with fsync=off and
//     full_page_writes=off (speed, not durability: a test server's data is
//     thrown away), and trusts local connections (initdb -A trust) for the
//     superuser "mcphost". initdb runs with --no-sync.
//   - It is stopped with pg_ctl -m immediate stop: a crash, as far as the
//     server can tell, which is also what fault tests want from Down.
//
// The package is test infrastructure: production code must never import it.
// It never downloads anything, never installs anything and never writes
// outside its own directory.
package pgtest
