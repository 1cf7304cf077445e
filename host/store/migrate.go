package store

import (
	"context"
	"fmt"
)

// migrations is the schema, one step per element: migrations[i] takes a
// database from user_version i to i+1. Steps are only ever appended; a
// released step is never edited, because databases in the field already ran
// it.
//
// Times are INTEGER Unix nanoseconds (UTC), so they sort and compare as
// numbers. JSON columns are TEXT holding the bytes exactly as given ("null"
// when absent).
var migrations = []string{
	// 1: sessions and transcript entries.
	`
CREATE TABLE sessions (
	id         TEXT    NOT NULL PRIMARY KEY,
	principal  TEXT    NOT NULL,
	title      TEXT    NOT NULL,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	entries    INTEGER NOT NULL DEFAULT 0
) STRICT;

-- Sessions: a principal's sessions, most recently updated first.
CREATE INDEX sessions_principal_updated ON sessions (principal, updated_at DESC);

CREATE TABLE entries (
	id               TEXT    NOT NULL PRIMARY KEY,
	session_id       TEXT    NOT NULL REFERENCES sessions (id),
	seq              INTEGER NOT NULL,
	call_id          TEXT    NOT NULL,
	principal        TEXT    NOT NULL,
	origin           TEXT    NOT NULL,
	server           TEXT    NOT NULL,
	tool             TEXT    NOT NULL,
	arguments        TEXT    NOT NULL,
	status           TEXT    NOT NULL,
	result           TEXT    NOT NULL,
	error            TEXT    NOT NULL,
	era              TEXT    NOT NULL,
	protocol_version TEXT    NOT NULL,
	started_at       INTEGER,          -- NULL when the caller gave no time
	duration_ms      REAL    NOT NULL,
	display          TEXT    NOT NULL,
	trail            TEXT    NOT NULL,
	-- Also the index behind Entries (session_id = ? AND seq > ? ORDER BY seq),
	-- the next seq (max(seq) of a session) and the foreign key.
	UNIQUE (session_id, seq)
) STRICT;
`,
	// 2: the era cache of version negotiation (negotiate.EraCache): one
	// verdict per server configuration key, as JSON.
	`
CREATE TABLE era_cache (
	key        TEXT    NOT NULL PRIMARY KEY,
	verdict    TEXT    NOT NULL,
	updated_at INTEGER NOT NULL
) STRICT;
`,
	// 3: MCP App requests and App compaction. kind tells tool calls from App
	// messages; app_entry_id is the entry of the App that made the call or
	// sent the message; message holds an App message's content;
	// app_html_bytes is the size of the display record's html (0 without
	// one, and after compaction), kept by AppendEntry and SetDisplay, so the
	// compaction pass finds its work through the two partial indexes without
	// reading any display record.
	`
ALTER TABLE entries ADD COLUMN kind           TEXT    NOT NULL DEFAULT 'call';
ALTER TABLE entries ADD COLUMN app_entry_id   TEXT    NOT NULL DEFAULT '';
ALTER TABLE entries ADD COLUMN message        TEXT    NOT NULL DEFAULT 'null';
ALTER TABLE entries ADD COLUMN app_html_bytes INTEGER NOT NULL DEFAULT 0;

UPDATE entries SET app_html_bytes = coalesce(length(CAST(json_extract(display, '$.html') AS BLOB)), 0)
 WHERE display <> 'null' AND json_valid(display) AND json_type(display, '$.html') = 'text';

-- Compaction by age: App records with HTML, oldest first.
CREATE INDEX entries_app_html_started ON entries (started_at) WHERE app_html_bytes > 0;
-- Compaction by size: App records with HTML per session, in order.
CREATE INDEX entries_app_html_session ON entries (session_id, seq) WHERE app_html_bytes > 0;
`,
	// 4: the audit log of policy decisions: one row per decision that a
	// rule made (or the default, when it denied), written in the same
	// transaction as the entry it belongs to; entry_id is '' for decisions
	// with no entry (a call of a tool a list rule hides).
	`
CREATE TABLE audit (
	id          INTEGER NOT NULL PRIMARY KEY,
	at          INTEGER NOT NULL,
	principal   TEXT    NOT NULL,
	session_id  TEXT    NOT NULL,
	entry_id    TEXT    NOT NULL,
	call_id     TEXT    NOT NULL,
	origin      TEXT    NOT NULL,
	server      TEXT    NOT NULL,
	tool        TEXT    NOT NULL,
	phase       TEXT    NOT NULL,
	rule        TEXT    NOT NULL,
	effect      TEXT    NOT NULL,
	reason      TEXT    NOT NULL,
	error       INTEGER NOT NULL,
	duration_us REAL    NOT NULL
) STRICT;
CREATE INDEX audit_principal_at ON audit (principal, at DESC);
`,

	// 5: the audit log is paged by principal and id (AuditLog: principal = ?
	// AND id < ? ORDER BY id DESC); an index on principal alone carries the
	// rowid in its order, so a page is a range scan without a sort. The
	// (principal, at) index matched no query.
	`
DROP INDEX audit_principal_at;
CREATE INDEX audit_principal ON audit (principal);
`,

	// 6: the context an MCP App gave for the model (ui/update-model-context),
	// one row per App entry, replaced on each update (SetAppContext).
	`
CREATE TABLE app_contexts (
	entry_id   TEXT    NOT NULL PRIMARY KEY,
	principal  TEXT    NOT NULL,
	context    TEXT    NOT NULL,
	updated_at INTEGER NOT NULL
) STRICT;
`,

	// 7 (oauth): OAuth credentials of remote servers (package oauth). One
	// client registration and one token row per (server, principal), the
	// principal "*" for a shared credential. Secret columns are BLOBs
	// sealed by oauth.Sealer (AES-256-GCM, bound to table, server,
	// principal and issuer); the store never sees them in the clear.
	// generation counts the saves of a token row (compare-and-swap).
	`
CREATE TABLE oauth_clients (
	server         TEXT    NOT NULL,
	principal      TEXT    NOT NULL,
	issuer         TEXT    NOT NULL,
	client_id      TEXT    NOT NULL,
	client_secret  BLOB,
	auth_style     INTEGER NOT NULL,
	registration   TEXT    NOT NULL,
	token_url      TEXT    NOT NULL,
	revocation_url TEXT    NOT NULL,
	updated_at     INTEGER NOT NULL,
	PRIMARY KEY (server, principal)
) STRICT;

CREATE TABLE oauth_tokens (
	server        TEXT    NOT NULL,
	principal     TEXT    NOT NULL,
	issuer        TEXT    NOT NULL,
	resource      TEXT    NOT NULL,
	scopes        TEXT    NOT NULL,
	access_token  BLOB,
	refresh_token BLOB,
	token_type    TEXT    NOT NULL,
	expiry        INTEGER NOT NULL,
	generation    INTEGER NOT NULL,
	updated_at    INTEGER NOT NULL,
	PRIMARY KEY (server, principal)
) STRICT;
`,

	// 8: the mcphost processes (replicas) registered in the store, each
	// with its address for forwarding, when it started, its last
	// heartbeat and whether it drains (PutReplica). A single node
	// registers itself too.
	`
CREATE TABLE replicas (
	id         TEXT    NOT NULL PRIMARY KEY,
	addr       TEXT    NOT NULL,
	started_at INTEGER NOT NULL,
	seen_at    INTEGER NOT NULL,
	draining   INTEGER NOT NULL
) STRICT;
`,

	// 9: questions waiting for a principal's answer (approvals and
	// elicitations) that any replica may list and answer: body is the
	// question as JSON, answer the first answer (NULL until then), and
	// replica the one whose call waits (PutQuestion).
	`
CREATE TABLE questions (
	id         TEXT    NOT NULL PRIMARY KEY,
	kind       TEXT    NOT NULL,
	principal  TEXT    NOT NULL,
	replica    TEXT    NOT NULL,
	body       TEXT    NOT NULL,
	created_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL,
	answer     TEXT
) STRICT;
CREATE INDEX questions_principal ON questions (principal, created_at);
`,

	// 10: the operation an audit record is about (resources/read,
	// prompts/get, …); '' for a tool call, as every earlier record is.
	`
ALTER TABLE audit ADD COLUMN op TEXT NOT NULL DEFAULT '';
`,
}

// migrate applies the steps the database has not run yet, each in its own
// IMMEDIATE transaction together with the user_version it reaches. The
// version is read again inside each transaction, so two processes opening
// the same file at once cannot apply a step twice.
func (s *Store) migrate(ctx context.Context, migs []string) error {
	from := -1
	for {
		done, to, err := s.migrateOne(ctx, migs)
		if err != nil {
			return err
		}
		if done {
			if from >= 0 {
				// One line for the whole upgrade (a new database runs every
				// migration); nothing an operator must act on.
				s.logger.DebugContext(ctx, "migrated schema", "path", s.path, "from_version", from, "schema_version", to)
			}
			return nil
		}
		if from < 0 {
			from = to - 1
		}
	}
}

// migrateOne runs the next migration in its own transaction. It returns
// done when the schema is current, and the version the schema is at.
func (s *Store) migrateOne(ctx context.Context, migs []string) (done bool, version int, err error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return false, 0, err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	st, err := inspect(ctx, tx)
	if err != nil {
		return false, 0, err
	}
	if err := st.check(len(migs), sqliteDialect); err != nil {
		return false, 0, err
	}
	if st.version == len(migs) {
		return true, st.version, tx.Rollback()
	}
	to := st.version + 1
	if _, err := tx.ExecContext(ctx, migs[st.version]); err != nil {
		return false, 0, fmt.Errorf("migration %d: %w", to, err)
	}
	// PRAGMA takes no parameters; both values are integers we control.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d; PRAGMA user_version = %d", applicationID, to)); err != nil {
		return false, 0, fmt.Errorf("migration %d: %w", to, err)
	}
	if err := tx.Commit(); err != nil {
		return false, 0, fmt.Errorf("migration %d: commit: %w", to, err)
	}
	return false, to, nil
}
