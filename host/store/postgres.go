package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/mcphost/mcphost/cluster"
)

// pgDiskFull is PostgreSQL's SQLSTATE disk_full.
const pgDiskFull = "53100"

// pgConnectTimeout bounds a connection attempt when the DSN sets no
// connect_timeout, so that a server that does not answer fails the open
// (or an append) instead of hanging.
const pgConnectTimeout = 10 * time.Second

// pgGroupTimeout bounds the writing of one group on PostgreSQL. The group
// is not bound to any caller's context (see tryGroup); this keeps a server
// that stopped answering from holding every append forever.
const pgGroupTimeout = 30 * time.Second

// pgReaders is the size of the database/sql pool for everything but the
// append path.
const pgReaders = 8

// synchronousCommit is the synchronous_commit setting of each Sync mode.
func (m Sync) synchronousCommit() (string, bool) {
	switch m {
	case SyncFull:
		return "on", true
	case SyncNormal:
		return "off", true
	}
	return "", false
}

// OpenPostgres opens the PostgreSQL database named by dsn (a URL such as
// postgres://user:password@host:5432/db or a key=value string, as libpq
// and pgx read them) and applies any pending migrations, under an advisory
// lock, so that replicas starting at once migrate once. The tables live in
// the connection's current schema.
//
// opts.Sync sets synchronous_commit on every connection:
//
//   - [SyncFull] (synchronous_commit=on, the default): an acknowledged
//     entry's commit has been flushed to the server's WAL (and to a
//     synchronous standby, if the server has one). It survives a crash of
//     mcphost, of PostgreSQL and of the server's machine.
//   - [SyncNormal] (synchronous_commit=off): the server acknowledges before
//     its WAL is flushed. An acknowledged entry survives a crash of mcphost
//     and a clean restart of PostgreSQL, but a crash of PostgreSQL or of its
//     machine can lose the last commits (up to three times
//     wal_writer_delay); the database stays consistent.
//
// OpenPostgres fails, with an error that names the database with its
// password redacted ([RedactDSN]), when dsn does not parse, when the
// server cannot be reached (within ctx, and within connect_timeout or 10 s),
// when the schema holds tables but is not mcphost's, and when its schema
// version is newer than this mcphost knows. A nil logger discards.
func OpenPostgres(ctx context.Context, dsn string, logger *slog.Logger, opts Options) (*Store, error) {
	return openPostgres(ctx, dsn, logger, opts, pgMigrations)
}

func openPostgres(ctx context.Context, dsn string, logger *slog.Logger, opts Options, migs []string) (*Store, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("component", "store")
	name := RedactDSN(dsn)
	secrets := dsnSecrets(dsn)
	wrap := func(err error) error {
		return scrub(fmt.Errorf("store: open postgres %s: %w", name, err), secrets)
	}
	if strings.TrimSpace(dsn) == "" {
		return nil, errors.New("store: open postgres: empty DSN")
	}
	if opts.Replica != "" && len(opts.Secret) == 0 {
		return nil, wrap(fmt.Errorf("replica %q has no cluster secret: the replicas seal their pokes with it", opts.Replica))
	}
	synchronous, ok := opts.Sync.synchronousCommit()
	if !ok {
		return nil, wrap(fmt.Errorf("unknown sync mode %v; use SyncFull or SyncNormal", opts.Sync))
	}
	cfg, err := ParsePostgresDSN(dsn)
	if err != nil {
		return nil, wrap(err)
	}
	if cfg.Password != "" {
		secrets = append(secrets, cfg.Password)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = pgConnectTimeout
	}
	cfg.RuntimeParams["synchronous_commit"] = synchronous
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "mcphost"
	}

	pg := &pgBackend{name: name, secrets: secrets, listenCfg: cfg.Copy()}
	wcfg := cfg.Copy()
	dial := wcfg.DialFunc
	wcfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countingConn{Conn: c, writes: &pg.writes}, nil
	}
	pg.cfg = wcfg

	s := &Store{path: name, logger: logger, d: pgDialect, pg: pg, now: time.Now, replica: opts.Replica}
	if opts.Replica != "" {
		s.notices = cluster.NewNotices(opts.Secret, func() time.Time { return s.now() })
	}
	conn, err := pg.connect(ctx)
	if err != nil {
		return nil, wrap(err)
	}
	if err := s.migratePostgres(ctx, conn, migs); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, wrap(err)
	}
	if err := pg.prepare(ctx, conn); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, wrap(err)
	}
	pg.conn = conn

	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(pgReaders)
	db.SetMaxIdleConns(pgReaders)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		conn.Close(context.WithoutCancel(ctx))
		return nil, wrap(err)
	}
	s.w = sqlDB{db, pgDialect}
	s.r = s.w
	s.startCommitter()
	return s, nil
}

// ParsePostgresDSN parses dsn as OpenPostgres does (pgx's rules, libpq's
// environment variables for what dsn leaves out). Its error never holds
// the password: the configuration loader validates store.postgres with it.
func ParsePostgresDSN(dsn string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		var pe *pgconn.ParseConfigError
		if errors.As(err, &pe) {
			// Its text quotes the DSN (best-effort redacted) and the cause,
			// which may quote it whole: keep only what is wrong.
			msg := strings.TrimPrefix(pe.Error(), "cannot parse `"+redactedByPgx(pe.ConnString)+"`: ")
			return nil, scrub(fmt.Errorf("cannot parse the DSN: %s", msg), dsnSecrets(dsn))
		}
		return nil, scrub(fmt.Errorf("cannot parse the DSN: %w", err), dsnSecrets(dsn))
	}
	return cfg, nil
}

// redactedByPgx is how pgx quotes a DSN it could not parse; only used to
// cut that quote from its message (the DSN is then scrubbed anyway).
func redactedByPgx(dsn string) string {
	pe := &pgconn.ParseConfigError{ConnString: dsn}
	s := pe.Error()
	s = strings.TrimPrefix(s, "cannot parse `")
	if i := strings.LastIndex(s, "`: "); i >= 0 {
		return s[:i]
	}
	return dsn
}

// redacted replaces a password in RedactDSN's output.
const redacted = "xxxxx"

var (
	kvPassword  = regexp.MustCompile(`(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s]*)`)
	urlPassword = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9+.-]*://[^:/@]*:)([^@]*)(@)`)
)

// RedactDSN returns dsn with its password replaced by "xxxxx", in either
// form (URL user information or a password query parameter; key=value
// password=…), so that a DSN can be logged and put in errors. A DSN that
// does not parse is redacted as well as its shape allows.
func RedactDSN(dsn string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		if u, err := url.Parse(dsn); err == nil {
			if _, has := u.User.Password(); has {
				u.User = url.UserPassword(u.User.Username(), redacted)
			}
			if q := u.Query(); q.Has("password") {
				q.Set("password", redacted)
				u.RawQuery = q.Encode()
			}
			return u.String()
		}
		out := urlPassword.ReplaceAllString(dsn, "${1}"+redacted+"${3}")
		return kvPassword.ReplaceAllString(out, "${1}"+redacted)
	}
	return kvPassword.ReplaceAllString(dsn, "${1}"+redacted)
}

// dsnSecrets are the passwords written in dsn, as far as its shape shows
// them, to scrub from error texts.
func dsnSecrets(dsn string) []string {
	var out []string
	if m := urlPassword.FindStringSubmatch(dsn); m != nil && m[2] != "" {
		out = append(out, m[2])
		if p, err := url.PathUnescape(m[2]); err == nil && p != m[2] {
			out = append(out, p)
		}
	}
	for _, m := range kvPassword.FindAllStringSubmatch(dsn, -1) {
		if v := strings.Trim(m[2], "'"); v != "" {
			out = append(out, v)
			if p, err := url.QueryUnescape(v); err == nil && p != v {
				out = append(out, p)
			}
		}
	}
	return out
}

// scrub returns err with every secret replaced in its text; errors.Is and
// errors.As still see the original.
func scrub(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	changed := false
	for _, s := range secrets {
		if len(s) >= 1 && strings.Contains(msg, s) {
			msg = strings.ReplaceAll(msg, s, redacted)
			changed = true
		}
	}
	if !changed {
		return err
	}
	return &scrubbed{msg: msg, err: err}
}

type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// pgBackend is the PostgreSQL state of a Store: the committer's own
// connection and what it takes to make it again.
type pgBackend struct {
	name    string   // the redacted DSN, for messages
	secrets []string // passwords to scrub from errors
	cfg     *pgx.ConnConfig
	// listenCfg is the configuration of Listen's connection: cfg without
	// the counting of round trips, which is the append path's.
	listenCfg *pgx.ConnConfig

	// conn is the committer's connection: only the leader of the group
	// commit (commit.go) uses it once the store is open. nil after a connection failure,
	// until the next group dials again.
	conn *pgx.Conn

	// writes counts the network writes of the committer's connections:
	// each is one round trip (the client writes, then waits for the
	// answer), which tests and benchmarks read.
	writes atomic.Int64
}

// countingConn counts the writes made on a connection.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c *countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// The append path's prepared statements on the committer's connection.
// They are prepared by name when the connection is made, so a group is
// one pipeline with no describe round trip first.
const (
	pgStmtBegin  = "mcphost_begin"
	pgStmtCommit = "mcphost_commit"
	pgStmtEntry  = "mcphost_append_entry"
	pgStmtAudit  = "mcphost_append_audit"
	pgStmtNotify = "mcphost_notify_entry"
)

// pgAppendEntry appends one entry in one statement: it bumps the session's
// counter (which takes the session's row lock, so appends to one session
// are serialised until the commit) and inserts the entry with the new
// value as its seq. A session that is missing or another principal's
// updates no row, so nothing is inserted and no row comes back.
const pgAppendEntry = `
WITH s AS (
	UPDATE sessions SET entries = entries + 1, updated_at = $22::bigint
	 WHERE id = $2::text AND principal = $4::text
	RETURNING entries
)
INSERT INTO entries (id, session_id, seq, call_id, principal, origin, server, tool,
	arguments, status, result, error, era, protocol_version, started_at, duration_ms, display, trail,
	kind, app_entry_id, message, app_html_bytes)
SELECT $1::text, $2::text, s.entries, $3::text, $4::text, $5::text, $6::text, $7::text,
	$8::text, $9::text, $10::text, $11::text, $12::text, $13::text, $14::bigint, $15::double precision, $16::text, $17::text,
	$18::text, $19::text, $20::text, $21::bigint
FROM s
RETURNING seq`

// pgAppendAudit adds one decision of an entry, only when the entry was
// inserted just before in the same transaction.
const pgAppendAudit = `
INSERT INTO audit (at, principal, session_id, entry_id, call_id, origin, server, tool, phase, rule, effect, reason, error, duration_us, op)
SELECT $1::bigint, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text, $8::text, $9::text, $10::text, $11::text, $12::text,
	$13::boolean, $14::double precision, $15::text
WHERE EXISTS (SELECT 1 FROM entries WHERE id = $4::text)`

// pgNotifyEntry pokes the other replicas about an entry ([PokeEntry]),
// only when the entry was inserted just before in the same transaction.
// A notification is delivered at commit, and only if the transaction
// commits: it costs the group no round trip of its own.
const pgNotifyEntry = `SELECT pg_notify($1::text, $2::text) FROM entries WHERE id = $3::text`

// connect dials a connection for the committer.
func (pg *pgBackend) connect(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, pg.cfg)
	if err != nil {
		return nil, err
	}
	return conn, nil
}

// prepare prepares the append path's statements on conn.
func (pg *pgBackend) prepare(ctx context.Context, conn *pgx.Conn) error {
	for _, st := range []struct{ name, sql string }{
		{pgStmtBegin, "BEGIN"}, {pgStmtCommit, "COMMIT"}, {pgStmtEntry, pgAppendEntry}, {pgStmtAudit, pgAppendAudit},
		{pgStmtNotify, pgNotifyEntry},
	} {
		if _, err := conn.Prepare(ctx, st.name, st.sql); err != nil {
			return fmt.Errorf("prepare %s: %w", st.name, err)
		}
	}
	return nil
}

// writer returns the committer's connection, dialling a new one when the
// last one failed.
func (pg *pgBackend) writer(ctx context.Context) (*pgx.Conn, error) {
	if pg.conn != nil && !pg.conn.IsClosed() {
		return pg.conn, nil
	}
	pg.drop()
	conn, err := pg.connect(ctx)
	if err != nil {
		return nil, err
	}
	if err := pg.prepare(ctx, conn); err != nil {
		conn.Close(ctx)
		return nil, err
	}
	pg.conn = conn
	return conn, nil
}

// drop closes the committer's connection after a failure.
func (pg *pgBackend) drop() {
	if pg.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		pg.conn.Close(ctx)
		cancel()
		pg.conn = nil
	}
}

func (pg *pgBackend) close() error {
	if pg.conn == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := pg.conn.Close(ctx)
	pg.conn = nil
	return err
}

// RoundTrips is how many round trips the append path has made to
// PostgreSQL since the store was opened (0 on SQLite): with group commit,
// one per group while nothing fails.
func (s *Store) RoundTrips() int64 {
	if s.pg == nil {
		return 0
	}
	return s.pg.writes.Load()
}

// tryGroupPostgres writes group as one pipeline: BEGIN, one statement per
// entry (and one per audit record), COMMIT, sent in one write and answered
// in one read. An entry whose session is missing or someone else's inserts
// nothing and gets ErrNotFound; the others commit. When the server refuses
// one entry's statement, PostgreSQL aborts the whole transaction: that
// entry keeps its error and the others are returned to be written again.
// When the connection or the commit fails, every entry of the group fails
// and none is stored (if the connection broke after COMMIT was sent, the
// outcome is unknown to mcphost: the entries are reported failed, and may
// be stored).
func (s *Store) tryGroupPostgres(group []*appendReq) (retry []*appendReq) {
	pg := s.pg
	ctx, cancel := context.WithTimeout(context.Background(), pgGroupTimeout)
	defer cancel()
	conn, err := pg.writer(ctx)
	if err != nil {
		pg.failGroup(group, fmt.Errorf("postgres %s: %w", pg.name, err))
		return nil
	}
	notify := s.Clustered()
	br := conn.SendBatch(ctx, s.pgGroupBatch(group, notify))
	if _, err := br.Exec(); err != nil { // BEGIN
		pg.brokenGroup(br, group, err)
		return nil
	}
	bad, badErr, err := readGroupResults(br, group, notify)
	if err != nil {
		pg.brokenGroup(br, group, err)
		return nil
	}
	if bad >= 0 {
		return s.retryAbortedGroup(ctx, conn, br, group, bad, badErr)
	}
	pg.commitGroup(br, group)
	return nil
}

// failGroup gives err, scrubbed of the DSN's secrets, to every entry of
// group that has no error of its own.
func (pg *pgBackend) failGroup(group []*appendReq, err error) {
	err = scrub(err, pg.secrets)
	for _, r := range group {
		if r.err == nil {
			r.seq, r.err = 0, err
		}
	}
}

// brokenGroup ends a pipeline whose connection failed with err: the
// connection is dropped (the next group dials again) and every entry of
// group without an error of its own fails.
func (pg *pgBackend) brokenGroup(br pgx.BatchResults, group []*appendReq, err error) {
	br.Close()
	pg.drop()
	pg.failGroup(group, fmt.Errorf("postgres %s: %w", pg.name, err))
}

// pgGroupBatch queues group's pipeline: BEGIN; for each entry its insert,
// one insert per audit record and (when the store is clustered) a NOTIFY
// for the other replicas; COMMIT. readGroupResults reads the answers in
// this order.
func (s *Store) pgGroupBatch(group []*appendReq, notify bool) *pgx.Batch {
	now := s.now().UnixNano()
	b := &pgx.Batch{}
	b.Queue(pgStmtBegin)
	for _, r := range group {
		e := r.e
		var started any // NULL for a zero time
		if !e.StartedAt.IsZero() {
			started = e.StartedAt.UnixNano()
		}
		b.Queue(pgStmtEntry, r.id, e.SessionID, e.CallID, e.Principal, e.Origin, e.Server, e.Tool,
			jsonBytes(e.Arguments), e.Status, jsonBytes(e.Result), e.Error, e.Era, e.ProtocolVersion,
			started, e.DurationMs, jsonBytes(e.Display), jsonBytes(e.Trail),
			r.kind, e.AppEntryID, jsonBytes(e.Message), r.htmlBytes, now)
		for _, a := range e.Audit {
			at, reason := s.auditValues(a)
			b.Queue(pgStmtAudit, at, e.Principal, e.SessionID, r.id, a.CallID, a.Origin, a.Server, a.Tool,
				a.Phase, a.Rule, a.Effect, reason, a.Error, a.DurationUs, a.Op)
		}
		if notify {
			id := r.id
			payload, err := s.encodePoke(Poke{Kind: PokeEntry, ID: r.id, Principal: e.Principal})
			if err != nil { // a principal name of nearly 8000 bytes: no poke (no entry has id "")
				id = ""
			}
			b.Queue(pgStmtNotify, PokeChannel, string(payload), id)
		}
	}
	b.Queue(pgStmtCommit)
	return b
}

// readGroupResults reads the answers to the entries' statements (after
// BEGIN's, before COMMIT's), setting each entry's seq, or ErrNotFound when
// its insert found no session of its own. It stops at the first statement
// the server refused, returning that entry's index as bad with the refusal
// (the transaction is then aborted); bad is -1 when there was none. err is
// a failure of the connection, after which nothing more can be read.
func readGroupResults(br pgx.BatchResults, group []*appendReq, notify bool) (bad int, badErr, err error) {
	for i, r := range group {
		err := br.QueryRow().Scan(&r.seq)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			r.seq, r.err = 0, ErrNotFound
		case err != nil:
			if !isServerError(err) {
				return -1, nil, err
			}
			return i, err, nil
		}
		more := len(r.e.Audit) // the audit inserts, then the NOTIFY
		if notify {
			more++
		}
		for range more {
			if _, err := br.Exec(); err != nil {
				if !isServerError(err) {
					return -1, nil, err
				}
				return i, err, nil
			}
		}
	}
	return -1, nil, nil
}

// retryAbortedGroup ends a transaction the server aborted when it refused
// the statement of group[bad] with badErr: that entry keeps the refusal,
// and the others that had not failed on their own (and every one after
// it, whose statements were never run) are returned to be written again.
func (s *Store) retryAbortedGroup(ctx context.Context, conn *pgx.Conn, br pgx.BatchResults,
	group []*appendReq, bad int, badErr error) (retry []*appendReq) {
	pg := s.pg
	br.Close()
	if _, err := conn.Exec(ctx, "ROLLBACK"); err != nil {
		pg.drop()
	}
	for j, o := range group {
		switch {
		case j == bad:
			o.seq, o.err = 0, scrub(badErr, pg.secrets)
		case o.err == nil || j > bad:
			o.seq, o.err = 0, nil
			retry = append(retry, o)
		}
	}
	s.logger.Warn("an entry's failure rolled back its group's transaction; writing the others again",
		"session", group[bad].e.SessionID, "error", badErr, "retrying", len(retry))
	return retry
}

// commitGroup reads COMMIT's answer and closes the pipeline. A commit the
// server refused, or one that ended in a rollback, fails every entry of
// group without an error of its own, as does a broken connection.
func (pg *pgBackend) commitGroup(br pgx.BatchResults, group []*appendReq) {
	tag, err := br.Exec() // COMMIT
	if err != nil {
		if !isServerError(err) {
			pg.brokenGroup(br, group, err)
			return
		}
		br.Close()
		pg.failGroup(group, fmt.Errorf("commit: %w", err))
		return
	}
	if err := br.Close(); err != nil {
		pg.drop()
		pg.failGroup(group, fmt.Errorf("postgres %s: %w", pg.name, err))
		return
	}
	if tag.String() != "COMMIT" {
		pg.failGroup(group, fmt.Errorf("commit: the transaction was rolled back (%s)", tag))
	}
}

// isServerError says that err is an error the server reported for one
// statement (the connection is still usable), not a failure to reach it.
func isServerError(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe)
}
