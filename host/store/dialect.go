package store

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"
)

// The two backends share every query that reads or writes the same way on
// both engines. What differs is isolated here and in the files named
// *_postgres.go:
//
//   - placeholders: queries are written with SQLite's '?' and rebound to
//     PostgreSQL's $1, $2… once per query text (dialect.rebind);
//   - a few clauses (dialect.forUpdate: SQLite's writer transactions are
//     IMMEDIATE, so they already hold the write lock);
//   - types and migrations (migrations / pgMigrations, same versions and
//     meaning);
//   - the append path (commit.go for SQLite, commit_postgres.go);
//   - error mapping (diskFull) and the schema marker (inspect /
//     inspectPostgres).

// dialect is the engine a Store runs on, chosen at open.
type dialect struct {
	name string // "sqlite" or "postgres"
	// dollar says placeholders are $n (PostgreSQL), not '?'.
	dollar bool
	// forUpdate is appended to a SELECT that reads a row a transaction is
	// about to change: "" on SQLite (the transaction holds the database's
	// write lock from BEGIN IMMEDIATE), " FOR UPDATE" on PostgreSQL.
	forUpdate string
	// hint says where to point mcphost when the database is not its own.
	hint string

	cache sync.Map // query text → rebound text
}

var (
	sqliteDialect = &dialect{name: "sqlite", hint: "point data_dir at another directory"}
	pgDialect     = &dialect{name: "postgres", dollar: true, forUpdate: " FOR UPDATE", hint: "point store.postgres at another database"}
)

// rebind returns q with its '?' placeholders numbered $1, $2… for
// PostgreSQL, and q itself for SQLite. The store's queries hold no '?'
// inside string literals, which is what makes the plain scan enough.
func (d *dialect) rebind(q string) string {
	if !d.dollar || !strings.Contains(q, "?") {
		return q
	}
	if v, ok := d.cache.Load(q); ok {
		return v.(string)
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	out := b.String()
	d.cache.Store(q, out)
	return out
}

// sqlDB is a database/sql pool whose queries are rebound for its dialect.
type sqlDB struct {
	*sql.DB
	d *dialect
}

func (db sqlDB) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	res, err := db.DB.ExecContext(ctx, db.d.rebind(q), args...)
	if db.lostConn(ctx, err) {
		// A write is not repeated: it may have been applied. The next
		// one gets a fresh connection.
		db.flushIdle()
	}
	return res, err
}

// A read that fails because its pooled connection was lost (PostgreSQL
// restarted, a proxy dropped it) is repeated once on a fresh connection,
// after the pool's idle connections, probably lost too, are closed: the
// pool recovers without the Store being reopened.

func (db sqlDB) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	q = db.d.rebind(q)
	rows, err := db.DB.QueryContext(ctx, q, args...)
	if db.lostConn(ctx, err) {
		db.flushIdle()
		rows, err = db.DB.QueryContext(ctx, q, args...)
	}
	return rows, err
}

func (db sqlDB) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	q = db.d.rebind(q)
	row := db.DB.QueryRowContext(ctx, q, args...)
	if db.lostConn(ctx, row.Err()) {
		db.flushIdle()
		row = db.DB.QueryRowContext(ctx, q, args...)
	}
	return row
}

// lostConn says that err is a lost connection of PostgreSQL's pool: not an
// error the server reported, not the end of ctx, not "no rows".
func (db sqlDB) lostConn(ctx context.Context, err error) bool {
	if err == nil || !db.d.dollar || ctx.Err() != nil || errors.Is(err, sql.ErrNoRows) {
		return false
	}
	var pe *pgconn.PgError
	return !errors.As(err, &pe)
}

// flushIdle closes the pool's idle connections.
func (db sqlDB) flushIdle() {
	db.DB.SetMaxIdleConns(0)
	db.DB.SetMaxIdleConns(pgReaders)
}

func (db sqlDB) BeginTx(ctx context.Context, opts *sql.TxOptions) (sqlTx, error) {
	tx, err := db.DB.BeginTx(ctx, opts)
	return sqlTx{Tx: tx, d: db.d}, err
}

// sqlTx is a transaction of a sqlDB.
type sqlTx struct {
	*sql.Tx
	d *dialect
}

func (tx sqlTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return tx.Tx.ExecContext(ctx, tx.d.rebind(q), args...)
}

func (tx sqlTx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return tx.Tx.QueryContext(ctx, tx.d.rebind(q), args...)
}

func (tx sqlTx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return tx.Tx.QueryRowContext(ctx, tx.d.rebind(q), args...)
}
