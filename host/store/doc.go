// Package store is mcphost's one embedded database: a single SQLite file in
// data_dir (modernc.org/sqlite, no cgo), opened by [Open] or [OpenWith].
//
// It owns the transcript: [Session] values, each belonging to one principal,
// and the [Entry] values recorded in them, one per completed tool call, in
// the last stage of the call pipeline ("Record"), after policies and plugins
// have run, and one per message an MCP App sent ([KindAppMessage]). For the
// host's App compaction pass it lists records that still hold App HTML
// ([Store.AppHTMLStartedBefore], [Store.SessionsOverAppHTML],
// [Store.AppHTMLOfSession]). Later issues add the era cache and the audit log of policy
// decisions to the same file, each as a new migration.
//
// # Guarantees
//
//   - Durability: [Store.AppendEntry] returns only after its transaction has
//     committed in WAL mode, so an acknowledged entry survives kill -9 of the
//     process; with [SyncFull] (the default) the commit is also fsynced, so it
//     survives a power loss too, while [SyncNormal] leaves the last commits
//     to a power loss or an OS crash (see [OpenWith]). Appends that wait at
//     the same time share one transaction and one commit (group commit,
//     commit.go); an entry that fails alone fails only its own append.
//   - Isolation between principals: every read and write takes the caller's
//     principal, and a session owned by another principal is [ErrNotFound],
//     exactly like a missing one.
//   - Order: the entries of a session carry gapless sequence numbers 1, 2, 3…
//     in the order they were appended, also under concurrent appends.
//   - Schema: versioned migrations, applied in order, each in its own
//     transaction; a database written by a newer mcphost is refused, never
//     downgraded, and a SQLite file that is not mcphost's is never touched.
//
// # What it must never do
//
// The store stores what it is given. It never parses, rewrites or interprets
// a tool result, a display record, a trail or an App message (it only checks
// that they are valid JSON, and notes the byte length of a display record's
// "html" string for compaction), never decides who may see what beyond matching the principal,
// never logs entry contents (arguments and results may hold secrets), and
// never imports host, a leaf package or gin. Its one goroutine is the group
// committer, which [Store.Close] stops after the queued appends; it sets no
// process-wide driver knobs (such as sqlite.Fdatasync); those belong to main.
package store
