package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mcphost/mcphost/internal/pgtest"
	"github.com/mcphost/mcphost/oauth"
)

func TestMigrationsAgree(t *testing.T) {
	if len(migrations) != len(pgMigrations) {
		t.Fatalf("SQLite has %d migrations, PostgreSQL %d: every version must exist on both", len(migrations), len(pgMigrations))
	}
}

// dbOf is the database name of a pgtest DSN.
func dbOf(t *testing.T, dsn string) string {
	t.Helper()
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Database
}

func TestOpenPostgresRefuses(t *testing.T) {
	srv := pgtest.Shared(t)
	tests := []struct {
		name    string
		prepare func(t *testing.T, dsn string)
		want    string
	}{
		{"another program's tables", func(t *testing.T, dsn string) {
			if err := srv.Exec(t.Context(), dbOf(t, dsn), `CREATE TABLE notes (body text)`); err != nil {
				t.Fatal(err)
			}
		}, "not an mcphost database"},
		{"a marker of another program", func(t *testing.T, dsn string) {
			if err := srv.Exec(t.Context(), dbOf(t, dsn), `CREATE TABLE mcphost_schema (application_id bigint NOT NULL, version integer NOT NULL); INSERT INTO mcphost_schema VALUES (1234, 1)`); err != nil {
				t.Fatal(err)
			}
		}, "not an mcphost database"},
		{"future schema version", func(t *testing.T, dsn string) {
			s := mustOpenPostgres(t, dsn, Options{})
			s.Close()
			if err := srv.Exec(t.Context(), dbOf(t, dsn), fmt.Sprintf(`UPDATE mcphost_schema SET version = %d`, len(pgMigrations)+1)); err != nil {
				t.Fatal(err)
			}
		}, "newer than this mcphost supports"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dsn := srv.NewDatabase(t)
			tt.prepare(t, dsn)
			s, err := OpenPostgres(t.Context(), dsn, nil, Options{})
			if err == nil {
				s.Close()
				t.Fatal("OpenPostgres succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), dbOf(t, dsn)) {
				t.Errorf("err = %q, want it to name the database and say %q", err, tt.want)
			}
		})
	}
	t.Run("foreign tables untouched", func(t *testing.T) {
		dsn := srv.NewDatabase(t)
		if err := srv.Exec(t.Context(), dbOf(t, dsn), `CREATE TABLE notes (body text)`); err != nil {
			t.Fatal(err)
		}
		if s, err := OpenPostgres(t.Context(), dsn, nil, Options{}); err == nil {
			s.Close()
			t.Fatal("OpenPostgres succeeded")
		}
		// Creating the marker now succeeds only if the refused open left none.
		if err := srv.Exec(t.Context(), dbOf(t, dsn), `CREATE TABLE mcphost_schema (x int); CREATE TABLE sessions (x int)`); err != nil {
			t.Errorf("a refused open created tables: %v", err)
		}
	})
}

// TestOpenPostgresConcurrently: replicas starting at once on an empty
// database both open it; the migrations ran once (under the lock).
func TestOpenPostgresConcurrently(t *testing.T) {
	dsn := pgtest.Shared(t).NewDatabase(t)
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	stores := make([]*Store, n)
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = OpenPostgres(t.Context(), dsn, nil, Options{}) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("open %d: %v", i, err)
			continue
		}
		defer stores[i].Close()
	}
	if t.Failed() {
		return
	}
	sess := mustCreate(t, stores[0], "alice", "")
	mustAppend(t, stores[1], sampleEntry(sess.ID, "alice", 1))
	if got := mustEntries(t, stores[3], "alice", sess.ID); len(got) != 1 {
		t.Errorf("another store sees %d entries, want 1", len(got))
	}
	var version int
	if err := stores[2].r.QueryRowContext(t.Context(), `SELECT version FROM mcphost_schema`).Scan(&version); err != nil || version != len(pgMigrations) {
		t.Errorf("schema version %d (%v), want %d", version, err, len(pgMigrations))
	}
}

func TestRedactDSN(t *testing.T) {
	tests := []struct{ in, want string }{
		{"postgres://alice:s3cret@db.example:5432/mcphost?sslmode=require", "postgres://alice:xxxxx@db.example:5432/mcphost?sslmode=require"},
		{"postgresql://alice@db/mcphost", "postgresql://alice@db/mcphost"},
		{"postgres://db/mcphost?password=s3cret&sslmode=disable", "postgres://db/mcphost?password=xxxxx&sslmode=disable"},
		{"host=db user=alice password=s3cret dbname=mcphost", "host=db user=alice password=xxxxx dbname=mcphost"},
		{"host=db password='s3 cret' dbname=mcphost", "host=db password=xxxxx dbname=mcphost"},
		{"postgres://alice:s3cret@db:notaport/x", "postgres://alice:xxxxx@db:notaport/x"},
		{"postgres://alice:s3%ZZcret@db/x", "postgres://alice:xxxxx@db/x"},
	}
	for _, tt := range tests {
		if got := RedactDSN(tt.in); got != tt.want {
			t.Errorf("RedactDSN(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestOpenPostgresErrors: a DSN that does not parse and a server that is
// not there fail with errors that say so, name the server and never hold
// the password; a server that accepts and never answers is bounded by ctx.
func TestOpenPostgresErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // nothing listens there now

	silent, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()

	tests := []struct {
		name, dsn string
		timeout   time.Duration
		want      []string
	}{
		{"does not parse", "postgres://alice:hunter2@db.example:notaport/x", time.Minute, []string{"cannot parse"}},
		{"bad key", "host=db password=hunter2 nonsense", time.Minute, []string{"cannot parse"}},
		{"server down", fmt.Sprintf("postgres://alice:hunter2@127.0.0.1:%d/x?sslmode=disable", port), time.Minute,
			[]string{fmt.Sprintf("127.0.0.1:%d", port), "refused"}},
		{"server silent", fmt.Sprintf("postgres://alice:hunter2@%s/x?sslmode=disable", silent.Addr()), 500 * time.Millisecond,
			[]string{silent.Addr().String()}},
		{"empty", "", time.Minute, []string{"empty DSN"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), tt.timeout)
			defer cancel()
			s, err := OpenPostgres(ctx, tt.dsn, nil, Options{})
			if err == nil {
				s.Close()
				t.Fatal("OpenPostgres succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %q, want it to say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("err = %q holds the password", err)
			}
		})
	}
	if _, err := ParsePostgresDSN("postgres://alice:hunter2@db:x/y"); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("ParsePostgresDSN: %v", err)
	}
}

func TestPostgresSynchronousCommit(t *testing.T) {
	srv := pgtest.Shared(t)
	for mode, want := range map[Sync]string{SyncFull: "on", SyncNormal: "off"} {
		t.Run(mode.String(), func(t *testing.T) {
			s := mustOpenPostgres(t, srv.NewDatabase(t), Options{Sync: mode})
			var got string
			if err := s.r.QueryRowContext(t.Context(), "SHOW synchronous_commit").Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("synchronous_commit = %s, want %s", got, want)
			}
			var writer string
			if err := s.pg.conn.QueryRow(t.Context(), "SHOW synchronous_commit").Scan(&writer); err != nil || writer != want {
				t.Errorf("the committer's synchronous_commit = %s (%v), want %s", writer, err, want)
			}
		})
	}
	if _, err := OpenPostgres(t.Context(), srv.DSN("postgres"), nil, Options{Sync: Sync(7)}); err == nil || !strings.Contains(err.Error(), "unknown sync mode") {
		t.Errorf("Sync(7): %v", err)
	}
}

// TestPostgresRoundTrips: on PostgreSQL a group of appends is one round
// trip, however many entries it holds; on a clustered store too, where the
// group also pokes the other replicas about each entry (in the same
// pipeline, delivered at commit).
func TestPostgresRoundTrips(t *testing.T) {
	t.Run("single", func(t *testing.T) { testPostgresRoundTrips(t, "") })
	t.Run("clustered", func(t *testing.T) { testPostgresRoundTrips(t, "A") })
}

func testPostgresRoundTrips(t *testing.T, replica string) {
	dsn := pgtest.Shared(t).NewDatabase(t)
	s := mustOpenPostgres(t, dsn, Options{Replica: replica})
	var peer *listener
	if replica != "" {
		peer = listen(t, mustOpenPostgres(t, dsn, Options{Replica: "B"}))
	}
	sess := mustCreate(t, s, "alice", "")
	before := s.RoundTrips()
	e := sampleEntry(sess.ID, "alice", 0)
	e.Audit = []Audit{{Origin: "user", Phase: "call", Effect: "allow"}}
	mustAppend(t, s, e)
	if got := s.RoundTrips() - before; got != 1 {
		t.Errorf("one append took %d round trips, want 1", got)
	}

	release := holdCommitter(t, s)
	first := appendAsync(t.Context(), s, sampleEntry(sess.ID, "alice", 1))
	waitTaken(t, s, 2)
	var errs []<-chan error
	for i := 2; i <= 21; i++ {
		errs = append(errs, appendAsync(t.Context(), s, sampleEntry(sess.ID, "alice", i)))
		waitQueued(t, s, i-1)
	}
	before, groups := s.RoundTrips(), s.commit.groups.Load()
	release()
	for _, ch := range append(errs, first) {
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
	if g := s.commit.groups.Load() - groups; g != 2 {
		t.Fatalf("%d groups, want 2", g)
	}
	if got := s.RoundTrips() - before; got != 2 {
		t.Errorf("two groups (1 and 20 entries) took %d round trips, want 2", got)
	}
	if peer != nil {
		for range 22 {
			peer.want(t, PokeEntry)
		}
		peer.none(t)
	}
}

// TestPostgresBadEntryInGroup: PostgreSQL aborts the whole transaction when
// one entry's statement fails (here: text that is not UTF-8); only that
// append fails, the others of its group are written again and stored.
func TestPostgresBadEntryInGroup(t *testing.T) {
	s := mustOpenPostgres(t, pgtest.Shared(t).NewDatabase(t), Options{})
	sess := mustCreate(t, s, "alice", "")
	release := holdCommitter(t, s)
	first := appendAsync(t.Context(), s, sampleEntry(sess.ID, "alice", 0))
	waitTaken(t, s, 1)
	var errs []<-chan error
	for i := 1; i <= 6; i++ {
		e := sampleEntry(sess.ID, "alice", i)
		if i == 3 {
			e.Tool = "bad\xff"
		}
		if i == 5 {
			e.SessionID = "s_missing"
		}
		errs = append(errs, appendAsync(t.Context(), s, e))
		waitQueued(t, s, i)
	}
	release()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for i, ch := range errs {
		err := <-ch
		switch i + 1 {
		case 3:
			if err == nil || errors.Is(err, ErrNotFound) {
				t.Errorf("the bad entry: %v, want an encoding error", err)
			}
		case 5:
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("the entry of a missing session: %v, want ErrNotFound", err)
			}
		default:
			if err != nil {
				t.Errorf("entry %d: %v", i+1, err)
			}
		}
	}
	var calls []string
	for i, e := range mustEntries(t, s, "alice", sess.ID) {
		if e.Seq != int64(i+1) {
			t.Errorf("entry %d has seq %d", i, e.Seq)
		}
		calls = append(calls, e.CallID)
	}
	if diff := cmp.Diff([]string{"c_0000", "c_0001", "c_0002", "c_0004", "c_0006"}, calls); diff != "" {
		t.Errorf("stored calls (-want +got):\n%s", diff)
	}
}

// TestPostgresRestart restarts PostgreSQL while 4 writers append: appends
// fail clearly while it is down, every acknowledged entry is stored, and
// the same Store appends again once it is back, without being reopened.
func TestPostgresRestart(t *testing.T) {
	srv := pgtest.Start(t)
	s := mustOpenPostgres(t, srv.NewDatabase(t), Options{})
	sess := mustCreate(t, s, "alice", "")

	var (
		mu       sync.Mutex
		acked    = map[string]bool{}
		failures []error
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				e := sampleEntry(sess.ID, "alice", w*100000+i)
				err := s.AppendEntry(t.Context(), e)
				mu.Lock()
				if err == nil {
					acked[e.CallID] = true
				} else {
					failures = append(failures, err)
				}
				mu.Unlock()
				if err != nil {
					time.Sleep(5 * time.Millisecond) // a retrying caller's back-off
				}
			}
		})
	}
	waitAcked := func(n int) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			mu.Lock()
			got := len(acked)
			mu.Unlock()
			if got >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d appends acknowledged, want %d", got, n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitAcked(50)
	srv.Down(t)
	// While it is down, appends fail, saying which server.
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := len(failures)
		mu.Unlock()
		if n >= 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no append failed while PostgreSQL was down")
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	ackedWhileDown := len(acked)
	mu.Unlock()
	srv.Up(t)
	waitAcked(ackedWhileDown + 50)
	close(stop)
	wg.Wait()

	addr := fmt.Sprintf("127.0.0.1:%d", srv.Port())
	for _, err := range failures {
		if !strings.Contains(err.Error(), addr) && !strings.Contains(err.Error(), "postgres") {
			t.Errorf("an append failed with %q, which names neither the server nor PostgreSQL", err)
		}
	}
	stored := map[string]bool{}
	for i, e := range mustEntries(t, s, "alice", sess.ID) {
		if e.Seq != int64(i+1) {
			t.Fatalf("entry %d has seq %d: not gapless", i, e.Seq)
		}
		stored[e.CallID] = true
	}
	for id := range acked {
		if !stored[id] {
			t.Errorf("%s was acknowledged but is not stored", id)
		}
	}
	t.Logf("%d acknowledged, %d failed while PostgreSQL was down", len(acked), len(failures))
}

func TestReplicas(t *testing.T) {
	onBackends(t, func(t *testing.T, bk backend) {
		s, _ := bk.open(t)
		ctx := t.Context()
		if got, err := s.Replicas(ctx); err != nil || len(got) != 0 || got == nil {
			t.Fatalf("no replicas: %#v, %v", got, err)
		}
		started := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
		for _, r := range []Replica{{ID: "b", Addr: "10.0.0.2:7777", Started: started}, {ID: "a", Addr: "10.0.0.1:7777", Started: started}} {
			if err := s.PutReplica(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		// A heartbeat that also starts draining.
		if err := s.PutReplica(ctx, Replica{ID: "b", Addr: "10.0.0.2:7777", Started: started, Draining: true, Seen: time.Unix(1, 0)}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Replicas(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []Replica{
			{ID: "a", Addr: "10.0.0.1:7777", Started: started, Seen: epoch.Add(time.Second)},
			{ID: "b", Addr: "10.0.0.2:7777", Started: started, Seen: epoch.Add(2 * time.Second), Draining: true},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Replicas (-want +got):\n%s", diff)
		}
		if err := s.DeleteReplica(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteReplica(ctx, "missing"); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Replicas(ctx); len(got) != 1 || got[0].ID != "b" {
			t.Errorf("after delete: %+v", got)
		}
		if err := s.PutReplica(ctx, Replica{}); err == nil {
			t.Error("a replica without an id was stored")
		}
	})
}

// TestSweepReplicas: the rows of replicas last seen before a time are
// deleted (a crashed replica never deletes its own), the others kept; a
// swept replica registers again with its next heartbeat.
func TestSweepReplicas(t *testing.T) {
	onBackends(t, func(t *testing.T, bk backend) {
		s, _ := bk.open(t)
		ctx := t.Context()
		for _, id := range []string{"crashed", "late", "live"} {
			if err := s.PutReplica(ctx, Replica{ID: id, Addr: "http://" + id + ":7777"}); err != nil {
				t.Fatal(err)
			}
		}
		rs, err := s.Replicas(ctx)
		if err != nil || len(rs) != 3 {
			t.Fatalf("replicas %+v, %v", rs, err)
		}
		seen := map[string]time.Time{}
		for _, r := range rs {
			seen[r.ID] = r.Seen
		}
		if n, err := s.SweepReplicas(ctx, seen["late"]); err != nil || n != 1 {
			t.Fatalf("sweep before late's heartbeat: %d, %v; want 1", n, err)
		}
		if n, err := s.SweepReplicas(ctx, seen["late"]); err != nil || n != 0 {
			t.Fatalf("the same sweep again: %d, %v; want 0", n, err)
		}
		got, _ := s.Replicas(ctx)
		if len(got) != 2 || got[0].ID != "late" || got[1].ID != "live" {
			t.Errorf("after the sweep: %+v, want late and live", got)
		}
		if err := s.PutReplica(ctx, Replica{ID: "crashed", Addr: "http://crashed:7777"}); err != nil {
			t.Fatal(err)
		}
		if n, err := s.SweepReplicas(ctx, seen["live"].Add(time.Nanosecond)); err != nil || n != 2 {
			t.Errorf("sweep after live's heartbeat: %d, %v; want late and live", n, err)
		}
		if got, _ := s.Replicas(ctx); len(got) != 1 || got[0].ID != "crashed" {
			t.Errorf("after a heartbeat and a second sweep: %+v, want the one that beat again", got)
		}
	})
}

// TestCredentials: sealed OAuth credentials round-trip byte for byte, and
// a save must carry the next generation (compare-and-swap), also for the
// first save of two racing ones.
func TestCredentials(t *testing.T) {
	onBackends(t, func(t *testing.T, bk backend) {
		s, reopen := bk.open(t)
		ctx := t.Context()
		rec := &oauth.Record{Server: "remote", Principal: "alice", Issuer: "https://as.example", Resource: "https://mcp.example",
			Scopes: []string{"read"}, AccessToken: []byte{0, 1, 2, 0xff}, RefreshToken: []byte("sealed-refresh"), TokenType: "Bearer",
			Expiry: epoch.Add(time.Hour), Generation: 1, UpdatedAt: epoch,
			ClientID: "client", ClientSecret: []byte{9, 9}, AuthStyle: 1, Registration: "dynamic", TokenURL: "https://as.example/token"}
		if got, err := s.LoadCredential(ctx, "remote", "alice"); err != nil || got != nil {
			t.Fatalf("before any save: %+v, %v", got, err)
		}
		if err := s.SaveCredential(ctx, rec); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveCredential(ctx, rec); !errors.Is(err, oauth.ErrConflict) {
			t.Errorf("a second save of generation 1: %v, want ErrConflict", err)
		}
		next := *rec
		next.Generation, next.AccessToken = 2, []byte("new")
		if err := s.SaveCredential(ctx, &next); err != nil {
			t.Fatal(err)
		}
		s.Close()
		s = reopen(t)
		got, err := s.LoadCredential(ctx, "remote", "alice")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&next, got); diff != "" {
			t.Errorf("LoadCredential (-want +got):\n%s", diff)
		}
		if all, err := s.ListCredentials(ctx, ""); err != nil || len(all) != 1 {
			t.Errorf("ListCredentials: %+v, %v", all, err)
		}

		// Two first saves at once: exactly one wins.
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() {
				r := *rec
				r.Principal = "bob"
				errs[i] = s.SaveCredential(ctx, &r)
			})
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, oauth.ErrConflict):
				t.Errorf("a racing save: %v", err)
			}
		}
		if won != 1 {
			t.Errorf("%d of the racing first saves won, want 1", won)
		}
		if err := s.DeleteCredential(ctx, "remote", "alice"); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.LoadCredential(ctx, "remote", "alice"); got != nil {
			t.Errorf("deleted credential still loads: %+v", got)
		}
	})
}

func TestPostgresDiskFull(t *testing.T) {
	err := diskFull(fmt.Errorf("append: %w", &pgconn.PgError{Code: "53100", Message: "could not extend file"}))
	if !errors.Is(err, ErrDiskFull) {
		t.Errorf("SQLSTATE 53100 is not ErrDiskFull: %v", err)
	}
	if errors.Is(diskFull(&pgconn.PgError{Code: "23505"}), ErrDiskFull) {
		t.Error("a unique violation counts as a full disk")
	}
}
