package store

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcphost/mcphost/internal/pgtest"
)

// listener collects the pokes a store's Listen delivers.
type listener struct {
	mu    sync.Mutex
	pokes []Poke
	ch    chan Poke
}

func listen(t *testing.T, s *Store) *listener {
	t.Helper()
	l := &listener{ch: make(chan Poke, 1024)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Listen(ctx, func(p Poke) { l.ch <- p }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Listen: %v", err)
		}
	})
	l.want(t, PokeListening)
	return l
}

// want waits for the next poke of kind, skipping others.
func (l *listener) want(t *testing.T, kind string) Poke {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case p := <-l.ch:
			if p.Kind == kind {
				return p
			}
		case <-timeout:
			t.Fatalf("no %q poke within 10s", kind)
		}
	}
}

// none checks that no poke arrives for a moment.
func (l *listener) none(t *testing.T) {
	t.Helper()
	select {
	case p := <-l.ch:
		t.Fatalf("unexpected poke %+v", p)
	case <-time.After(200 * time.Millisecond):
	}
}

func TestPokesBetweenReplicas(t *testing.T) {
	srv := pgtest.Shared(t)
	dsn := srv.NewDatabase(t)
	a := mustOpenPostgres(t, dsn, Options{Replica: "A"})
	b := mustOpenPostgres(t, dsn, Options{Replica: "B"})
	if !a.Clustered() || !b.Clustered() {
		t.Fatal("two PostgreSQL stores with replica ids are not clustered")
	}
	la, lb := listen(t, a), listen(t, b)

	if err := a.Poke(t.Context(), Poke{Kind: "progress", ID: "c_1", Principal: "alice", Data: json.RawMessage(`{"n":1}`)}); err != nil {
		t.Fatal(err)
	}
	got := lb.want(t, "progress")
	if got.ID != "c_1" || got.Principal != "alice" || got.Origin != "A" || string(got.Data) != `{"n":1}` {
		t.Errorf("B got %+v", got)
	}
	la.none(t) // its own poke is skipped

	// An entry appended on A pokes B at commit, with its id and principal.
	sess := mustCreate(t, a, "alice", "")
	e := mustAppend(t, a, sampleEntry(sess.ID, "alice", 1))
	got = lb.want(t, PokeEntry)
	if got.ID != e.ID || got.Principal != "alice" || got.Origin != "A" {
		t.Errorf("entry poke %+v, want id %s", got, e.ID)
	}
	if _, err := b.Entry(t.Context(), got.Principal, got.ID); err != nil {
		t.Errorf("B reads the poked entry: %v", err)
	}
	// A failed append pokes no one.
	if err := a.AppendEntry(t.Context(), sampleEntry("s_missing", "alice", 2)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("append to a missing session: %v", err)
	}
	lb.none(t)

	// An App context set on A bumps B's version.
	v := b.AppContextVersion()
	if err := a.SetAppContext(t.Context(), "alice", e.ID, json.RawMessage(`{"x":1}`), time.Now()); err != nil {
		t.Fatal(err)
	}
	lb.want(t, PokeAppContext)
	if b.AppContextVersion() == v {
		t.Error("B's AppContextVersion did not change")
	}
}

// intruder connects to dsn's database as a new role with no privilege
// but the CONNECT every role has by default (PUBLIC's), and listens on
// the pokes' channel, as anyone who may connect can.
func intruder(t *testing.T, srv *pgtest.Server, dsn string) *pgx.Conn {
	t.Helper()
	db := dbOf(t, dsn)
	role := db + "_intruder"
	if err := srv.Exec(t.Context(), db, `CREATE ROLE "`+role+`" LOGIN`); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(srv.DSN(db))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	conn, err := pgx.Connect(t.Context(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	if _, err := conn.Exec(t.Context(), "LISTEN "+PokeChannel); err != nil {
		t.Fatal(err)
	}
	return conn
}

// next is the next poke l delivers, whatever its kind.
func (l *listener) next(t *testing.T) Poke {
	t.Helper()
	select {
	case p := <-l.ch:
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("no poke within 10s")
	}
	return Poke{}
}

// TestListenRefusesForeignNotifications: a notification on the pokes'
// channel from another role of the database (plain pg_notify: red team
// F13), a replica's poke it captured and sent again, the same poke with
// its JSON altered, and a poke of a replica with another secret never
// reach Listen's receiver; each is counted. The replicas' own pokes still
// arrive, in order.
func TestListenRefusesForeignNotifications(t *testing.T) {
	srv := pgtest.Shared(t)
	dsn := srv.NewDatabase(t)
	a := mustOpenPostgres(t, dsn, Options{Replica: "A"})
	b := mustOpenPostgres(t, dsn, Options{Replica: "B"})
	stranger := mustOpenPostgres(t, dsn, Options{Replica: "C", Secret: []byte("another-cluster-secret-0123456789abcdef")})
	lb := listen(t, b)
	spy := intruder(t, srv, dsn)

	if err := a.Poke(t.Context(), Poke{Kind: "progress", ID: "c_1", Principal: "alice", Data: json.RawMessage(`{"n":1}`)}); err != nil {
		t.Fatal(err)
	}
	if got := lb.next(t); got.Kind != "progress" || got.ID != "c_1" || got.Origin != "A" {
		t.Fatalf("B got %+v, want A's progress poke", got)
	}
	captured, err := spy.WaitForNotification(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	altered := strings.Replace(captured.Payload, `"alice"`, `"bob"`, 1)
	if altered == captured.Payload {
		t.Fatalf("the captured poke %q does not name alice", captured.Payload)
	}
	forged := []string{
		`{"kind":"call_started","id":"c_fake","principal":"alice","origin":"zz","data":{"callId":"c_fake","sessionId":"s_x","server":"notes","tool":"INJECTED-BY-ANOTHER-DB-ROLE"}}`,
		`{"kind":"reload","origin":"zz"}`,
		captured.Payload, // a replay
		altered,
	}
	for _, payload := range forged {
		if _, err := spy.Exec(t.Context(), `SELECT pg_notify($1, $2)`, PokeChannel, payload); err != nil {
			t.Fatalf("pg_notify as a role with no privilege: %v", err)
		}
	}
	if err := stranger.Poke(t.Context(), Poke{Kind: "reload"}); err != nil {
		t.Fatal(err)
	}
	// Notifications arrive in commit order: once A's next poke is here,
	// every one sent before it has been refused or delivered.
	if err := a.Poke(t.Context(), Poke{Kind: "marker"}); err != nil {
		t.Fatal(err)
	}
	if got := lb.next(t); got.Kind != "marker" || got.Origin != "A" {
		t.Fatalf("B got %+v, want A's marker: a foreign notification was delivered", got)
	}
	if n, want := b.PokesRefused(), int64(len(forged)+1); n != want {
		t.Errorf("B refused %d notifications, want %d", n, want)
	}
}

// TestOpenPostgresReplicaNeedsSecret: a replica without the cluster
// secret could neither seal its pokes nor check the others'.
func TestOpenPostgresReplicaNeedsSecret(t *testing.T) {
	dsn := pgtest.Shared(t).NewDatabase(t)
	s, err := OpenPostgres(t.Context(), dsn, nil, Options{Replica: "A"})
	if err == nil {
		s.Close()
		t.Fatal("a replica opened PostgreSQL without a cluster secret")
	}
	if !strings.Contains(err.Error(), "cluster secret") {
		t.Errorf("err = %v, want it to name the cluster secret", err)
	}
}

func TestPokeTooBig(t *testing.T) {
	s := mustOpenPostgres(t, pgtest.Shared(t).NewDatabase(t), Options{Replica: "A"})
	err := s.Poke(t.Context(), Poke{Kind: "progress", Data: json.RawMessage(`"` + strings.Repeat("x", MaxPokeBytes) + `"`)})
	var big *PokeTooBigError
	if !errors.As(err, &big) || big.Bytes < MaxPokeBytes || !strings.Contains(err.Error(), "fewer than 8000") {
		t.Fatalf("err = %v, want a *PokeTooBigError", err)
	}
	// Just under the bound is sent (PostgreSQL takes it).
	p := Poke{Kind: "progress"}
	b, _ := s.encodePoke(p)
	pad := MaxPokeBytes - 1 - len(b) - len(`,"data":""`)
	p.Data = json.RawMessage(`"` + strings.Repeat("x", pad) + `"`)
	if b, _ := s.encodePoke(p); len(b) != MaxPokeBytes-1 {
		t.Fatalf("test payload has %d bytes, want %d", len(b), MaxPokeBytes-1)
	}
	if err := s.Poke(t.Context(), p); err != nil {
		t.Errorf("a poke of %d bytes: %v", MaxPokeBytes-1, err)
	}
}

func TestPokesNotClustered(t *testing.T) {
	lite, err := OpenWith(t.Context(), filepath.Join(t.TempDir(), "mcphost.db"), nil, Options{Replica: "A"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lite.Close() })
	// SQLite is one process whatever the id; PostgreSQL without an id too.
	for _, b := range []struct {
		name string
		s    *Store
	}{{"sqlite", lite}, {"postgres", mustOpenPostgres(t, pgtest.Shared(t).NewDatabase(t), Options{})}} {
		s := b.s
		if s.Clustered() {
			t.Errorf("%s is clustered", b.name)
		}
		if err := s.Poke(t.Context(), Poke{Kind: "x", Data: json.RawMessage(`"` + strings.Repeat("x", 9000) + `"`)}); err != nil {
			t.Errorf("%s: Poke: %v", b.name, err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		if err := s.Listen(ctx, func(Poke) { t.Error("a poke") }); err != nil || ctx.Err() != nil {
			t.Errorf("%s: Listen = %v, %v; want it to return nil at once", b.name, err, ctx.Err())
		}
		cancel()
	}
}

// TestListenResyncs: when the listener's connection is killed, Listen
// connects again, says so with a resync poke, and pokes arrive again.
func TestListenResyncs(t *testing.T) {
	srv := pgtest.Shared(t)
	dsn := srv.NewDatabase(t)
	a := mustOpenPostgres(t, dsn, Options{Replica: "A"})
	b := mustOpenPostgres(t, dsn, Options{Replica: "B"})
	lb := listen(t, b)
	if err := srv.Exec(t.Context(), dbOf(t, dsn), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'mcphost listen B'`); err != nil {
		t.Fatal(err)
	}
	lb.want(t, PokeResync)
	if err := a.Poke(t.Context(), Poke{Kind: "reload"}); err != nil {
		t.Fatal(err)
	}
	lb.want(t, "reload")
}

func TestQuestions(t *testing.T) {
	onBackends(t, func(t *testing.T, b backend) {
		s, _ := b.open(t)
		now := s.now().UTC()
		q := Question{ID: "a_1", Kind: "approval", Principal: "alice", Replica: "A",
			Body: json.RawMessage(`{"id":"a_1"}`), Created: now, Expires: now.Add(time.Minute)}
		if err := s.PutQuestion(t.Context(), q); err != nil {
			t.Fatal(err)
		}
		old := q
		old.ID, old.Created, old.Expires = "a_old", now.Add(-time.Hour), now.Add(-time.Minute)
		if err := s.PutQuestion(t.Context(), old); err != nil {
			t.Fatal(err)
		}
		bobs := q
		bobs.ID, bobs.Principal, bobs.Created = "b_1", "bob", now.Add(time.Second)
		if err := s.PutQuestion(t.Context(), bobs); err != nil {
			t.Fatal(err)
		}
		all, err := s.OpenQuestions(t.Context())
		if err != nil || len(all) != 2 || all[0].ID != "a_1" || all[1].ID != "b_1" {
			t.Fatalf("OpenQuestions = %+v, %v; want a_1 and b_1 (every principal's, not the expired one)", all, err)
		}
		if err := s.DeleteQuestion(t.Context(), "b_1"); err != nil {
			t.Fatal(err)
		}
		list, err := s.Questions(t.Context(), "alice")
		if err != nil || len(list) != 1 || list[0].ID != "a_1" || string(list[0].Body) != `{"id":"a_1"}` || list[0].Replica != "A" {
			t.Fatalf("Questions = %+v, %v; want a_1 only", list, err)
		}
		if _, err := s.Question(t.Context(), "a_old"); !errors.Is(err, ErrNotFound) {
			t.Errorf("an expired question is still stored after Questions: %v", err)
		}
		if list, _ := s.Questions(t.Context(), "bob"); len(list) != 0 {
			t.Errorf("bob sees %+v", list)
		}
		if err := s.AnswerQuestion(t.Context(), "bob", "a_1", json.RawMessage(`true`)); !errors.Is(err, ErrNotFound) {
			t.Errorf("bob answers alice's question: %v", err)
		}
		if err := s.AnswerQuestion(t.Context(), "alice", "a_1", json.RawMessage(`{"approve":true}`)); err != nil {
			t.Fatal(err)
		}
		if err := s.AnswerQuestion(t.Context(), "alice", "a_1", json.RawMessage(`{"approve":false}`)); !errors.Is(err, ErrNotFound) {
			t.Errorf("a second answer: %v, want ErrNotFound", err)
		}
		got, err := s.Question(t.Context(), "a_1")
		if err != nil || string(got.Answer) != `{"approve":true}` {
			t.Errorf("Question = %+v, %v; want the first answer", got, err)
		}
		if list, _ := s.Questions(t.Context(), "alice"); len(list) != 0 {
			t.Errorf("an answered question is listed: %+v", list)
		}
		if all, _ := s.OpenQuestions(t.Context()); len(all) != 0 {
			t.Errorf("an answered question is open: %+v", all)
		}
		if err := s.DeleteQuestion(t.Context(), "a_1"); err != nil {
			t.Fatal(err)
		}
		if err := s.AnswerQuestion(t.Context(), "alice", "missing", json.RawMessage(`1`)); !errors.Is(err, ErrNotFound) {
			t.Errorf("answering a missing question: %v", err)
		}
	})
}

// TestQuestionsFirstAnswerWins: replicas answering at once, one wins.
func TestQuestionsFirstAnswerWins(t *testing.T) {
	dsn := pgtest.Shared(t).NewDatabase(t)
	a := mustOpenPostgres(t, dsn, Options{Replica: "A"})
	b := mustOpenPostgres(t, dsn, Options{Replica: "B"})
	now := time.Now()
	if err := a.PutQuestion(t.Context(), Question{ID: "e_1", Kind: "elicitation", Principal: "alice", Replica: "A",
		Body: json.RawMessage(`{}`), Created: now, Expires: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() { errs[i] = s.AnswerQuestion(t.Context(), "alice", "e_1", json.RawMessage(`1`)) })
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, ErrNotFound):
			t.Error(err)
		}
	}
	if won != 1 {
		t.Errorf("%d answers won, want 1", won)
	}
}
