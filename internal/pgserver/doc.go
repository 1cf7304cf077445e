// Package pgserver runs a real PostgreSQL server of its own, from the
// distribution's binaries, for mcphost's tests (through internal/pgtest)
// and its load tool (cmd/mcphost-load's cluster run), which need one
// without a testing.TB.
//
// [Start] initializes a data directory and starts a server; [Server.Down],
// [Server.Up] and [Server.Restart] stop and start the same server again
// (same port, same data) for fault tests; [Server.Stop] stops it and
// removes its directory.
//
// How it runs PostgreSQL:
//
//   - The binaries are found under /usr/lib/postgresql/*/bin (the newest
//     version first), then on PATH. Without them Start returns a
//     [*MissingError] saying what to install.
//   - initdb refuses to run as root. As root, initdb and pg_ctl run as the
//     postgres user (runuser -u postgres --), and the postmaster itself is
//     started as that user through the process credentials, so that it can
//     be given a parent-death signal: a process that dies (a panic, a test
//     -timeout) takes its server with it instead of leaving it running.
//     Not as root, everything runs as the current user.
//   - The data and socket directories live under a directory of their own
//     that everyone may traverse (t.TempDir's parents are 0700 root, which
//     the postgres user cannot enter); it is removed when the server stops.
//   - The server listens on 127.0.0.1 on a free port, with fsync=off and
//     full_page_writes=off (speed, not durability: a test server's data is
//     thrown away), and trusts local connections (initdb -A trust) for the
//     superuser "mcphost". initdb runs with --no-sync.
//   - Down stops it with pg_ctl -m immediate stop: a crash, as far as the
//     server can tell, which is what fault tests want.
//
// Production code must never import it. It never downloads anything,
// never installs anything and never writes outside its own directory.
package pgserver
