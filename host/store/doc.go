// Package store is mcphost's database: one store contract ([Store] and
// its methods) on two backends, chosen when it is opened.
//
//   - SQLite, the embedded default: a single file in data_dir
//     (modernc.org/sqlite, no cgo), opened by [Open] or [OpenWith].
//   - PostgreSQL, for several replicas sharing one store: opened by
//     [OpenPostgres] with a DSN (pgx v5). Reads go through database/sql
//     over pgx's stdlib driver; the append path uses native pgx on a
//     connection of its own, so that a group of appends is one round trip.
//
// Callers cannot tell the backends apart: the same methods, the same
// errors ([ErrNotFound], [ErrDiskFull]) and the same guarantees below; one
// contract test suite runs against both. Inside the package the engine
// differences sit in one place each (dialect.go): placeholders, a few
// clauses, the migrations (migrate.go, migrate_postgres.go: same versions,
// same meaning), the append path (commit.go, postgres.go) and error mapping.
//
// It owns the transcript: [Session] values, each belonging to one principal,
// and the [Entry] values recorded in them, one per completed tool call, in
// the last stage of the call pipeline ("Record"), after policies and plugins
// have run, and one per message an MCP App sent ([KindAppMessage]). For the
// host's App compaction pass it lists records that still hold App HTML
// ([Store.AppHTMLStartedBefore], [Store.SessionsOverAppHTML],
// [Store.AppHTMLOfSession]). It also holds the era cache, the audit log of
// policy decisions, App contexts, sealed OAuth credentials, the
// [Replica] registrations of a cluster ([Store.PutReplica]) and the
// [Question] rows (approvals, elicitations) any replica may answer.
//
// On a clustered store (PostgreSQL with [Options.Replica] set) the store
// also carries events between replicas: [Store.Poke] sends a small
// [Poke] with pg_notify, [Store.Listen] hears the others' on a connection
// of its own and says to resync after a reconnect; every appended entry
// pokes the others from inside its group's transaction (no extra round
// trip; delivered only if it commits). Pokes are sealed with the cluster
// secret ([Options.Secret]): Listen refuses any other notification on the
// channel, such as another database role's pg_notify.
//
// # Guarantees
//
//   - Durability: [Store.AppendEntry] returns only after its transaction has
//     committed, or on SQLite with [SyncNormal] after its record is written
//     to the entry log (path + "-entries"), the same promise for less:
//     the applier writes it to the database in the order logged, every
//     read first waits for what was logged before it, and the next open
//     replays what a killed process left in the log. On SQLite (WAL mode) an acknowledged entry survives kill -9
//     of the process; with [SyncFull] (the default) the commit is also
//     fsynced, so it survives a power loss too, while [SyncNormal] leaves
//     the last commits to a power loss or an OS crash (see [OpenWith]). On
//     PostgreSQL the mode is synchronous_commit: [SyncFull] is "on" (the
//     commit is in the server's flushed WAL: it survives a crash of
//     mcphost, of PostgreSQL and of its machine), [SyncNormal] is "off" (it
//     survives a crash of mcphost and a clean restart of PostgreSQL, not a
//     crash of PostgreSQL or of its machine; see [OpenPostgres]). On both, appends that wait
//     at the same time share one transaction and one commit (group commit,
//     commit.go); on PostgreSQL the whole group is one pipeline, one round
//     trip ([Store.RoundTrips] counts them). An entry that fails alone fails
//     only its own append; a failed connection or commit fails the whole
//     group and stores none of it. On PostgreSQL one case is ambiguous, as
//     with any client of a remote database: when the connection breaks after
//     COMMIT was sent, the appends are reported failed although the server
//     may have committed them.
//   - Isolation between principals: every read and write takes the caller's
//     principal, and a session owned by another principal is [ErrNotFound],
//     exactly like a missing one.
//   - Order: the entries of a session carry gapless sequence numbers 1, 2, 3…
//     in the order they were appended, also under concurrent appends (on
//     PostgreSQL also from several replicas: an append bumps the session
//     row's counter, whose row lock serialises the appends of one session).
//   - Schema: versioned migrations, applied in order, each in its own
//     transaction; a database written by a newer mcphost is refused, never
//     downgraded, and a database that is not mcphost's is never touched:
//     SQLite's application_id and user_version, and on PostgreSQL the
//     mcphost_schema table (refused: a schema with other tables and no
//     marker). On PostgreSQL migrations run under pg_advisory_lock, so
//     replicas starting at once apply each step once.
//   - Recovery: on PostgreSQL a lost connection (the server restarted)
//     fails the calls that were using it, with an error naming the server;
//     the store then connects again by itself, without being reopened.
//   - Once across replicas: [Store.RefreshCredential] (package oauth's
//     refresh) holds the credential's row lock (SELECT … FOR UPDATE) while
//     it refreshes, so one replica redeems a rotating refresh token and the
//     others read its result; on SQLite (one node) the lock is a mutex per
//     credential in the Store, and every write is checked against the
//     generation read. [Store.TryLead] gives one leader per job name
//     (pg_try_advisory_lock on a connection of the [Lease]'s own, lost when
//     that connection ends; always granted on SQLite).
//   - Secrets: errors and logs name a PostgreSQL database by its DSN with
//     the password redacted ([RedactDSN]); connection attempts are bounded
//     by ctx and by connect_timeout (10 s when the DSN sets none).
//
// # What it must never do
//
// The store stores what it is given. It never parses, rewrites or interprets
// a tool result, a display record, a trail or an App message (it only checks
// that they are valid JSON, and notes the byte length of a display record's
// "html" string for compaction; JSON is stored as text on both backends,
// never as jsonb), never decides who may see what beyond matching the
// principal, never logs entry contents (arguments and results may hold
// secrets) nor a password, and never imports host, a leaf package or gin.
// Its only goroutines are one watcher per PostgreSQL [Lease] ([Store.Close]
// releases the leases first), with [SyncNormal] the entry log's applier
// (Close lets it write everything first) and, on SQLite, the checkpointer, which copies
// the WAL back into the database on a connection of its own so that no
// append waits for it (checkpoint.go; Close stops it first): the groups of
// appends are written by the appending callers themselves (commit.go), and
// Close writes what is still queued before it closes the database. It sets no process-wide driver
// knobs (such as sqlite.Fdatasync); those belong to main.
package store
