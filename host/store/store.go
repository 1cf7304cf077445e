package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/mcphost/mcphost/cluster"
)

// ErrNotFound is returned when a session does not exist or belongs to another
// principal; the two cases are deliberately indistinguishable.
var ErrNotFound = errors.New("store: not found")

// ErrDiskFull is wrapped into the errors of writes that failed for lack of
// space: SQLite's SQLITE_FULL, ENOSPC, a file-size limit (EFBIG), or
// PostgreSQL's disk_full (SQLSTATE 53100).
var ErrDiskFull = errors.New("the data directory is full")

// diskFull wraps err with ErrDiskFull when it says the disk is full, so
// that callers can tell that case apart without reading error texts.
func diskFull(err error) error {
	var se *sqlite.Error
	var pe *pgconn.PgError
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL ||
		errors.As(err, &pe) && pe.Code == pgDiskFull ||
		errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EFBIG) {
		return fmt.Errorf("%w: %w", ErrDiskFull, err)
	}
	return err
}

// applicationID marks a SQLite file as mcphost's ("mcph" in ASCII). It is
// written with the first migration and checked on every open, so that a
// data_dir pointing at some other program's database is refused instead of
// having our tables added to it.
const applicationID = 0x6d637068

// busyTimeout is how long a connection waits for a lock held by another
// connection (another process on the same file, or a checkpoint) before
// failing with SQLITE_BUSY. Writers inside this process never wait on each
// other here: they queue for the single writer connection instead.
const busyTimeout = 10 * time.Second

// Store is the transcript database. It is safe for concurrent use by many
// goroutines. Create one with [Open] and release it with [Store.Close].
type Store struct {
	path   string
	logger *slog.Logger

	// w is the only connection that writes (MaxOpenConns 1), so writers
	// queue in database/sql, honouring their contexts, instead of
	// contending for SQLite's write lock. Its transactions begin IMMEDIATE
	// so a second process on the same file waits (busy_timeout) rather
	// than failing half-way through a transaction.
	//
	// On PostgreSQL, w and r are one database/sql pool (pgx's stdlib) and
	// the committer writes through its own connection (pg).
	w sqlDB
	// r is a pool of query_only connections. In WAL mode readers never
	// block the writer nor wait for it.
	r sqlDB

	// d is the engine's dialect; pg is set on PostgreSQL only.
	d  *dialect
	pg *pgBackend

	// replica is Options.Replica: the origin of this store's pokes.
	replica string
	// notices seal the pokes sent and open the ones heard (clustered
	// only); refused counts and logs the notifications Listen refused.
	notices *cluster.Notices
	refused pokeRefusals

	// appContexts counts the App contexts set (SetAppContext), so a
	// reader can tell that none changed without a query.
	appContexts atomic.Uint64

	now func() time.Time // time.Now; tests substitute a fake clock

	// commit is the group-commit queue every entry append goes through.
	commit *committer
	// ckpt makes the WAL checkpoints (SQLite only; checkpoint.go).
	ckpt *checkpointer
	// elog is the entry log (SQLite with SyncNormal only; entrylog.go).
	elog *entryLog
	// beforeGroup, when set (by tests only), runs on the leader's
	// goroutine before it writes each group (commit.go): a test holds it
	// to let appends queue up.
	beforeGroup atomic.Pointer[func()]

	// locks are the leases of TryLead and RefreshCredential's locks.
	locks storeLocks

	closeOnce sync.Once
	closeErr  error
}

// Sync says when a commit reaches stable storage: the `synchronous` pragma
// of every connection. The zero value is [SyncFull].
type Sync int

const (
	// SyncFull fsyncs the WAL on every commit (synchronous=FULL): an
	// acknowledged entry survives kill -9 and a power loss.
	SyncFull Sync = iota
	// SyncNormal fsyncs the WAL only at checkpoints (synchronous=NORMAL):
	// an acknowledged entry survives kill -9 of the process, but a power
	// loss or an operating-system crash can lose the last commits.
	SyncNormal
)

// String returns the mode's name in the configuration: "full" or "normal".
func (m Sync) String() string {
	switch m {
	case SyncFull:
		return "full"
	case SyncNormal:
		return "normal"
	}
	return fmt.Sprintf("Sync(%d)", int(m))
}

// pragma is the value of PRAGMA synchronous for m.
func (m Sync) pragma() (string, bool) {
	switch m {
	case SyncFull:
		return "FULL", true
	case SyncNormal:
		return "NORMAL", true
	}
	return "", false
}

// Options are the settings of [OpenWith]. The zero value is what [Open]
// uses.
type Options struct {
	// Sync is SyncFull (the default) or SyncNormal.
	Sync Sync
	// Replica is this process's id among the replicas sharing a
	// PostgreSQL store; empty (the default) is a single node. With it,
	// pokes travel between replicas (see [Store.Poke], [Store.Listen]).
	Replica string
	// Secret is the secret the replicas share ([cluster.SharedSecret]),
	// required on PostgreSQL with a Replica: pokes are sealed with a key
	// derived from it, and a notification on [PokeChannel] that is not
	// (another role's pg_notify) is refused.
	Secret []byte
}

// Open opens the database at path with the default [Options]
// (synchronous=FULL); see [OpenWith].
func Open(ctx context.Context, path string, logger *slog.Logger) (*Store, error) {
	return OpenWith(ctx, path, logger, Options{})
}

// OpenWith opens the database at path, creating it and its directory if
// needed, and applies any pending migrations.
//
// A new directory is created with mode 0700 and a new file with mode 0600
// (SQLite gives the -wal and -shm files the mode of the database); existing
// ones keep their modes.
//
// Every connection runs with journal_mode=WAL, foreign_keys=ON, busy_timeout
// and the synchronous mode of opts.Sync. With WAL, a commit appends to the
// -wal file before [Store.AppendEntry] returns, so with either mode an
// acknowledged entry survives kill -9 of the process: the written pages are
// in the operating system's cache, and the next open recovers them from the
// WAL.
//
//   - [SyncFull] (synchronous=FULL, the default) also fsyncs the WAL on
//     every commit, so an acknowledged entry is on stable storage and
//     survives a power loss or an operating-system crash. The cost is one
//     fsync per commit; concurrent appends share commits (group commit).
//   - [SyncNormal] (synchronous=NORMAL) fsyncs the WAL only at checkpoints.
//     A power loss or an operating-system crash can then drop the last
//     transactions that had been acknowledged (those since the last
//     checkpoint), though the database stays consistent: it opens cleanly
//     with the earlier entries, and the sequence numbers stay gapless.
//
// OpenWith fails, with an error naming path, when opts.Sync is not one of
// the modes above, when the file is not a SQLite database or is corrupt,
// when it is a SQLite database of another program, and when its schema
// version is newer than this mcphost knows (it was written by a newer
// release; it is never downgraded). ctx bounds the opening and the
// migrations. A nil logger discards.
func OpenWith(ctx context.Context, path string, logger *slog.Logger, opts Options) (*Store, error) {
	return open(ctx, path, logger, opts, migrations)
}

func open(ctx context.Context, path string, logger *slog.Logger, opts Options, migs []string) (*Store, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("component", "store")
	if path == "" {
		return nil, errors.New("store: open: empty path")
	}
	wrap := func(err error) error { return fmt.Errorf("store: open %q: %w", path, err) }
	synchronous, ok := opts.Sync.pragma()
	if !ok {
		return nil, wrap(fmt.Errorf("unknown sync mode %v; use SyncFull or SyncNormal", opts.Sync))
	}

	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, wrap(err)
	}
	if err := createFile(abs); err != nil {
		return nil, wrap(err)
	}

	wc, err := newWriterConnector(dsn(abs, synchronous, roleWriter))
	if err != nil {
		return nil, wrap(err)
	}
	w := sql.OpenDB(wc)
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)

	s := &Store{path: path, logger: logger, w: sqlDB{w, sqliteDialect}, d: sqliteDialect, now: time.Now, replica: opts.Replica}
	if err := s.prepare(ctx, migs); err != nil {
		w.Close()
		return nil, wrap(err)
	}

	readers := max(4, runtime.GOMAXPROCS(0))
	r, err := sql.Open("sqlite", dsn(abs, synchronous, roleReader))
	if err != nil {
		w.Close()
		return nil, wrap(err)
	}
	r.SetMaxOpenConns(readers)
	r.SetMaxIdleConns(readers)
	if err := r.PingContext(ctx); err != nil {
		r.Close()
		w.Close()
		return nil, wrap(err)
	}
	s.r = sqlDB{r, sqliteDialect}
	k, err := sql.Open("sqlite", dsn(abs, synchronous, roleCheckpointer))
	if err != nil {
		r.Close()
		w.Close()
		return nil, wrap(err)
	}
	s.startCommitter()
	s.ckpt = startCheckpointer(k, logger, s.commit)
	if err := s.openEntryLog(ctx, abs, opts.Sync == SyncNormal); err != nil {
		s.ckpt.close() // and its connection
		s.stopCommitter()
		r.Close()
		w.Close()
		return nil, wrap(err)
	}
	return s, nil
}

// Close closes the database after the queries already running have finished;
// calls made after it fail. Calling it again returns the first result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.locks.close() // leadership ends first: another replica takes over
		var errs []error
		errs = append(errs, s.closeEntryLog()) // while the committer still writes
		if s.ckpt != nil {
			errs = append(errs, s.ckpt.close()) // before it could wait for the committer's leadership
		}
		s.stopCommitter() // the appends already queued are written first
		if s.pg != nil {
			errs = append(errs, s.pg.close(), s.w.Close())
		} else {
			if s.r.DB != nil {
				errs = append(errs, s.r.Close())
			}
			errs = append(errs, s.w.Close()) // last: it checkpoints and removes the WAL
		}
		if err := errors.Join(errs...); err != nil {
			s.closeErr = fmt.Errorf("store: close %q: %w", s.path, err)
		}
	})
	return s.closeErr
}

// createFile creates path's directory (0700) and the file itself (0600) when
// they are missing, so that SQLite, which would create them with the umask's
// defaults, finds them already there with private modes.
func createFile(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	// Make the new directory entry durable, as SQLite does for its WAL.
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && runtime.GOOS != "windows" {
		return err
	}
	return nil
}

// connRole is what a connection of the store is for.
type connRole int

const (
	roleWriter       connRole = iota // the writer: transactions begin IMMEDIATE; no automatic checkpoint
	roleReader                       // the readers: query_only
	roleCheckpointer                 // the checkpointer (checkpoint.go): no automatic checkpoint
)

// dsn builds a file: URI for modernc.org/sqlite. The path is escaped, so a
// '?' or '#' in it cannot be taken for the query. Each pragma runs on every
// new connection of the pool; synchronous is the mode ("FULL" or "NORMAL").
// Automatic checkpoints are off where a connection commits: the
// checkpointer makes them instead.
func dsn(abs, synchronous string, role connRole) string {
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows volume: file:///C:/…
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous("+synchronous+")")
	switch role {
	case roleWriter:
		q.Set("_txlock", "immediate")
		q.Add("_pragma", "wal_autocheckpoint(0)")
	case roleReader:
		q.Add("_pragma", "query_only(1)")
	case roleCheckpointer:
		q.Add("_pragma", "wal_autocheckpoint(0)")
	}
	u := url.URL{Scheme: "file", Path: p, RawQuery: q.Encode()}
	return u.String()
}

// prepare checks that the file is an mcphost database this release can use,
// switches it to WAL and migrates it. journal_mode is changed only after the
// checks, so a foreign or newer file is left exactly as it was.
func (s *Store) prepare(ctx context.Context, migs []string) error {
	st, err := inspect(ctx, s.w)
	if err != nil {
		return err
	}
	if err := st.check(len(migs), sqliteDialect); err != nil {
		return err
	}
	var mode string
	if err := s.w.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode); err != nil {
		return fmt.Errorf("set journal_mode: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("set journal_mode: got %q, want wal", mode)
	}
	return s.migrate(ctx, migs)
}

// state is what prepare needs to know about a database file.
type state struct {
	appID   int64
	version int
	objects int // rows in sqlite_schema
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func inspect(ctx context.Context, q querier) (state, error) {
	var st state
	// Reading sqlite_schema makes SQLite read and check the header and the
	// schema, so a file that is not a database, or a damaged one, fails here.
	if err := q.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&st.objects); err != nil {
		return st, err
	}
	if err := q.QueryRowContext(ctx, "PRAGMA application_id").Scan(&st.appID); err != nil {
		return st, err
	}
	if err := q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&st.version); err != nil {
		return st, err
	}
	return st, nil
}

// check reports whether a file in state st can be opened by a release that
// knows known migrations.
func (st state) check(known int, d *dialect) error {
	switch {
	case st.appID != 0 && st.appID != applicationID,
		st.appID == 0 && (st.version != 0 || st.objects != 0):
		return fmt.Errorf("not an mcphost database (application_id %#x, user_version %d); %s", st.appID, st.version, d.hint)
	case st.version > known:
		return fmt.Errorf("schema version %d is newer than this mcphost supports (%d): it was written by a newer release; upgrade mcphost", st.version, known)
	}
	return nil
}
