package pgtest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func query(t *testing.T, dsn, sql string) string {
	t.Helper()
	c, err := pgconn.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.WithoutCancel(t.Context()))
	res, err := c.Exec(t.Context(), sql).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return string(res[0].Rows[0][0])
}

func TestShared(t *testing.T) {
	s := Shared(t)
	if Shared(t) != s {
		t.Fatal("Shared started a second server")
	}
	a, b := s.NewDatabase(t), s.NewDatabase(t)
	if a == b {
		t.Fatalf("NewDatabase returned %s twice", a)
	}
	if err := s.Exec(t.Context(), dbName(t, a), `CREATE TABLE only_in_a (x int)`); err != nil {
		t.Fatal(err)
	}
	if got := query(t, b, `SELECT count(*) FROM pg_class WHERE relname = 'only_in_a'`); got != "0" {
		t.Errorf("a table of one database is seen in another")
	}
	for setting, want := range map[string]string{"fsync": "off", "full_page_writes": "off", "listen_addresses": "127.0.0.1"} {
		if got := query(t, a, "SHOW "+setting); got != want {
			t.Errorf("%s = %s, want %s", setting, got, want)
		}
	}
}

func dbName(t *testing.T, dsn string) string {
	t.Helper()
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Database
}

func TestRestart(t *testing.T) {
	s := Start(t)
	dsn := s.NewDatabase(t)
	if err := s.Exec(t.Context(), dbName(t, dsn), `CREATE TABLE kept (x int); INSERT INTO kept VALUES (7)`); err != nil {
		t.Fatal(err)
	}
	port := s.Port()
	s.Down(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if c, err := pgconn.Connect(ctx, dsn); err == nil {
		c.Close(ctx)
		t.Fatal("connected to a server that is down")
	}
	s.Up(t)
	if s.Port() != port {
		t.Errorf("port %d after restart, want %d", s.Port(), port)
	}
	if got := query(t, dsn, `SELECT x FROM kept`); got != "7" {
		t.Errorf("after a restart the table holds %s, want 7", got)
	}
	s.Restart(t)
	if got := query(t, dsn, `SELECT x FROM kept`); got != "7" {
		t.Errorf("after Restart the table holds %s, want 7", got)
	}
	s.Stop()
	s.Stop()
}
