package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// The committer's statements on SQLite. The committer writes through the
// driver's connection under database/sql (sql.Conn.Raw), with its
// statements prepared once on that connection, BEGIN and COMMIT included:
// a database/sql transaction parsed BEGIN and COMMIT again for every
// group, bound each statement to it, watched its context with a goroutine
// per transaction and per query, and converted every argument, which cost
// half the allocations of an append. The connection is still database/sql's
// single writer connection, so the committer queues for it with every
// other writer, as before.
//
// The statements belong to the connection (writerConn) and are finalized
// when database/sql closes it; a new connection prepares its own.

// The committer's statements, by their index in writerConn.stmts.
const (
	stBegin = iota
	stCommit
	stRollback
	stInsertEntry
	stTouchSession
	stInsertAudit
	stSavepoint
	stRelease
	stRollbackTo
	nAppendStmts
)

// appendSQL is the text of each statement.
var appendSQL = [nAppendStmts]string{
	stBegin:        "BEGIN IMMEDIATE",
	stCommit:       "COMMIT",
	stRollback:     "ROLLBACK",
	stInsertEntry:  sqliteInsertEntry,
	stTouchSession: touchSessionSQL,
	stInsertAudit:  insertAuditSQL,
	stSavepoint:    "SAVEPOINT entry",
	stRelease:      "RELEASE entry",
	stRollbackTo:   "ROLLBACK TO entry",
}

// touchSessionSQL moves session ?2's UpdatedAt to ?1 unless it is later than
// ?3 and no other session of its principal is as recent (touchSessions).
const touchSessionSQL = `UPDATE sessions SET updated_at = ?1 WHERE id = ?2 AND (updated_at <= ?3
	OR EXISTS (SELECT 1 FROM sessions o WHERE o.principal = sessions.principal AND o.updated_at >= sessions.updated_at AND o.id <> sessions.id))`

// sqliteConn is what database/sql uses of the driver's connection.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// writerConnector makes the writer's connections: the driver's, each
// carrying the committer's statements.
type writerConnector struct {
	driver.Connector
}

func newWriterConnector(dsn string) (driver.Connector, error) {
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return writerConnector{c}, nil
}

func (c writerConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := dc.(sqliteConn)
	if !ok {
		dc.Close()
		return nil, fmt.Errorf("the sqlite driver's connection %T lacks a method the store uses", dc)
	}
	return &writerConn{sqliteConn: sc}, nil
}

// writerConn is a writer connection with the committer's statements,
// prepared on first use. Only the group's leader uses them, holding the
// connection (sql.Conn.Raw); database/sql closes a connection only when
// no one holds it.
type writerConn struct {
	sqliteConn
	stmts [nAppendStmts]driver.Stmt
	// args is the argument buffer of exec and query: the committer's
	// statements run one at a time, and the driver copies the values.
	args [24]driver.NamedValue
}

// Close finalizes the committer's statements, then closes the connection
// (SQLite would otherwise keep the closed connection's file open until
// they were).
func (c *writerConn) Close() error {
	var errs []error
	for i, st := range c.stmts {
		if st != nil {
			errs = append(errs, st.Close())
			c.stmts[i] = nil
		}
	}
	return errors.Join(append(errs, c.sqliteConn.Close())...)
}

// stmt returns statement i, preparing it on first use.
func (c *writerConn) stmt(ctx context.Context, i int) (driver.Stmt, error) {
	if c.stmts[i] == nil {
		st, err := c.PrepareContext(ctx, appendSQL[i])
		if err != nil {
			return nil, err
		}
		c.stmts[i] = st
	}
	return c.stmts[i], nil
}

// bind fills the argument buffer with values.
func (c *writerConn) bind(values ...any) []driver.NamedValue {
	args := c.args[:len(values)]
	for i, v := range values {
		args[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return args
}

// exec runs statement i with values (driver.Value types: int64, float64,
// bool, string, []byte or nil).
func (c *writerConn) exec(ctx context.Context, i int, values ...any) error {
	st, err := c.stmt(ctx, i)
	if err != nil {
		return err
	}
	_, err = st.(driver.StmtExecContext).ExecContext(ctx, c.bind(values...))
	clear(c.args[:len(values)])
	return err
}

// queryInt64 runs statement i with values and reads the single int64
// column of its first row; ok is false when there is none.
func (c *writerConn) queryInt64(ctx context.Context, i int, values ...any) (n int64, ok bool, err error) {
	st, err := c.stmt(ctx, i)
	if err != nil {
		return 0, false, err
	}
	rows, err := st.(driver.StmtQueryContext).QueryContext(ctx, c.bind(values...))
	clear(c.args[:len(values)])
	if err != nil {
		return 0, false, err
	}
	var dest [1]driver.Value
	nextErr := rows.Next(dest[:])
	closeErr := rows.Close()
	switch {
	case nextErr != nil && !errors.Is(nextErr, io.EOF):
		return 0, false, nextErr
	case closeErr != nil:
		return 0, false, closeErr
	case nextErr != nil:
		return 0, false, nil // no row
	}
	n, ok = dest[0].(int64)
	if !ok {
		return 0, false, fmt.Errorf("got %T, want an integer", dest[0])
	}
	return n, true, nil
}

// rollback ends the transaction, if any. It reports whether the
// connection can be used again: a ROLLBACK that failed otherwise than for
// want of a transaction (SQLite may have rolled it back itself) may have
// left one open.
func (c *writerConn) rollback(ctx context.Context) (usable bool) {
	err := c.exec(ctx, stRollback)
	var se *sqlite.Error
	return err == nil || errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_ERROR
}
