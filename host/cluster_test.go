package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/questions"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/pgtest"
)

// replica is one of two hosts sharing a PostgreSQL store in one test
// process, as two replicas would.
type replica struct {
	h  *host.Host
	st *store.Store
}

// clusterDB returns a fresh database on the shared PostgreSQL server.
func clusterDB(t testing.TB) (*pgtest.Server, string) {
	srv := pgtest.Shared(t)
	return srv, srv.NewDatabase(t)
}

// clusterSecret is the secret the tests' replicas share.
var clusterSecret = []byte("cluster secret of the host tests, the same on every replica")

// startReplica starts a host with replica id on the store dsn.
func startReplica(t testing.TB, dsn, id string, cfg *config.Config, opts host.Options) replica {
	t.Helper()
	st, err := store.OpenPostgres(t.Context(), dsn, nil, store.Options{Replica: id, Secret: clusterSecret})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	opts.Store = st
	h := startHostConfig(t, cfg, opts)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := h.WaitListening(ctx); err != nil {
		t.Fatalf("replica %s does not listen: %v", id, err)
	}
	return replica{h, st}
}

func policyConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg, diags := config.Parse([]byte(policySet), "policies.hcl", config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	cfg.Servers = []config.Server{remoteServer("files", config.TransportStreamableHTTP, policyServer(t))}
	return cfg
}

// TestClusterEntries: an entry recorded by a call on replica A reaches an
// event stream of its principal on replica B (and no one else's), with the
// call's start; a notify→event latency figure over 200 entries is logged.
func TestClusterEntries(t *testing.T) {
	_, dsn := clusterDB(t)
	a := startReplica(t, dsn, "A", policyConfig(t), host.Options{})
	b := startReplica(t, dsn, "B", &config.Config{}, host.Options{})
	if !a.h.FanIn().Clustered || !b.h.FanIn().Listening {
		t.Fatalf("fan-in A %+v B %+v", a.h.FanIn(), b.h.FanIn())
	}
	evs, stop, err := b.h.Subscribe(host.Caller{Principal: alice})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	bobs, stopBob, err := b.h.Subscribe(host.Caller{Principal: bob})
	if err != nil {
		t.Fatal(err)
	}
	defer stopBob()

	e, err := sessionCall(t, a.h, alice, "read", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	// The start travels on another connection than the entry (which goes
	// with its commit), so it may come first or not at all, never after.
	var got *store.Entry
	for got == nil {
		ev := waitEvent(t, evs, "")
		switch d := ev.Data.(type) {
		case host.CallStarted:
			if d.CallID != e.CallID || d.Tool != "read" {
				t.Errorf("call_started on B: %+v, want call %s", d, e.CallID)
			}
		case *store.Entry:
			got = d
		}
	}
	if got.ID != e.ID || got.Principal != "alice" || !strings.Contains(string(got.Result), "read ok") {
		t.Errorf("entry on B: %+v, want %s", got, e.ID)
	}
	select {
	case ev := <-evs:
		if ev.Type == host.EventCallStarted {
			t.Errorf("call_started on B after the call's entry: a finished call would show as running")
		}
	case <-time.After(200 * time.Millisecond):
	}
	select {
	case ev := <-bobs:
		t.Errorf("bob's stream on B got %s", ev.Type)
	case <-time.After(100 * time.Millisecond):
	}

	// Latency: from the append on A to the event on B.
	sess, err := a.h.CreateSession(t.Context(), alice, "")
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	lat, acks := make([]time.Duration, 0, n), make([]time.Duration, 0, n)
	for i := range n {
		t0 := time.Now()
		ent := &store.Entry{SessionID: sess.ID, CallID: fmt.Sprintf("c_%d", i), Principal: "alice", Server: "files", Tool: "read",
			Status: store.StatusOK, Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{}`), StartedAt: t0}
		if err := a.st.AppendEntry(t.Context(), ent); err != nil {
			t.Fatal(err)
		}
		acks = append(acks, time.Since(t0))
		for {
			ev := waitEvent(t, evs, host.EventEntry)
			if ev.Data.(*store.Entry).ID == ent.ID {
				break
			}
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	slices.Sort(acks)
	t.Logf("over %d entries: append acknowledged on A p50 %v p99 %v; append on A → EventEntry on B p50 %v, p99 %v, max %v",
		n, acks[n/2], acks[n*99/100], lat[n/2], lat[n*99/100], lat[n-1])
}

// TestClusterResync: when B's listening connection is killed, B ends its
// event streams (their clients reconnect and read anew), counts the
// resync, and entries made on A reach B's new streams.
func TestClusterResync(t *testing.T) {
	srv, dsn := clusterDB(t)
	a := startReplica(t, dsn, "A", policyConfig(t), host.Options{})
	b := startReplica(t, dsn, "B", &config.Config{}, host.Options{})
	evs, stop, err := b.h.Subscribe(host.Caller{Principal: alice})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Exec(t.Context(), cfg.Database, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'mcphost listen B'`); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(30 * time.Second)
	for open := true; open; {
		select {
		case _, open = <-evs:
		case <-timeout:
			t.Fatal("B's event stream was not ended after its listener lost its connection")
		}
	}
	if st := b.h.FanIn(); st.Resyncs != 1 {
		t.Errorf("B's fan-in %+v, want 1 resync", st)
	}
	evs, stop2, err := b.h.Subscribe(host.Caller{Principal: alice})
	if err != nil {
		t.Fatal(err)
	}
	defer stop2()
	e, err := sessionCall(t, a.h, alice, "read", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := waitEvent(t, evs, host.EventEntry).Data.(*store.Entry); got.ID != e.ID {
		t.Errorf("entry after the resync %s, want %s", got.ID, e.ID)
	}
}

// TestClusterApproval: an approval raised by a call on A is listed and
// published on B and answered there, and the call on A goes on; a second
// answer, from either replica, is refused; bob can neither see nor answer
// it.
func TestClusterApproval(t *testing.T) {
	_, dsn := clusterDB(t)
	a := startReplica(t, dsn, "A", policyConfig(t), host.Options{})
	b := startReplica(t, dsn, "B", &config.Config{}, host.Options{})
	evs, stop, err := b.h.Subscribe(host.Caller{Principal: alice})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	type result struct {
		e   *store.Entry
		err error
	}
	done := make(chan result, 1)
	go func() {
		e, err := sessionCall(t, a.h, alice, "write", `{"path":"/srv/a"}`)
		done <- result{e, err}
	}()
	ap := waitEvent(t, evs, host.EventApproval).Data.(host.Approval)
	if ap.Tool != "write" || ap.Rule != "approve-writes" || !strings.Contains(string(ap.Arguments), "/srv/a") {
		t.Errorf("approval on B: %+v", ap)
	}
	if got := b.h.PendingApprovals(alice); len(got) != 1 || got[0].ID != ap.ID {
		t.Fatalf("B lists %+v", got)
	}
	if got := a.h.PendingApprovals(alice); len(got) != 1 || got[0].ID != ap.ID {
		t.Fatalf("A lists %+v (want it once)", got)
	}
	if got := b.h.PendingApprovals(bob); len(got) != 0 {
		t.Fatalf("bob sees %+v", got)
	}
	if err := b.h.Answer(bob, ap.ID, true); !errors.Is(err, host.ErrNotFound) {
		t.Fatalf("bob's answer on B: %v", err)
	}
	if err := b.h.Answer(alice, ap.ID, true); err != nil {
		t.Fatalf("answer on B: %v", err)
	}
	if err := b.h.Answer(alice, ap.ID, false); !errors.Is(err, host.ErrNotFound) {
		t.Errorf("second answer on B: %v, want ErrNotFound", err)
	}
	if err := a.h.Answer(alice, ap.ID, false); !errors.Is(err, host.ErrNotFound) {
		t.Errorf("second answer on A: %v, want ErrNotFound", err)
	}
	r := <-done
	if r.err != nil || r.e.Status != store.StatusOK || trailOf(t, r.e).Approval != host.ApprovalApproved {
		t.Fatalf("the call on A: %v %+v", r.err, r.e)
	}
	if d := waitEvent(t, evs, host.EventApprovalDone).Data.(host.ApprovalDone); d.ID != ap.ID || d.Outcome != host.ApprovalApproved {
		t.Errorf("done on B: %+v", d)
	}
	if got := b.h.PendingApprovals(alice); len(got) != 0 {
		t.Errorf("B still lists %+v", got)
	}

	// Answered on A (its own), the row still decides: B cannot answer too.
	go func() {
		e, err := sessionCall(t, a.h, alice, "write", `{"path":"/srv/b"}`)
		done <- result{e, err}
	}()
	ap = waitEvent(t, evs, host.EventApproval).Data.(host.Approval)
	if err := a.h.Answer(alice, ap.ID, false); err != nil {
		t.Fatal(err)
	}
	if err := b.h.Answer(alice, ap.ID, true); !errors.Is(err, host.ErrNotFound) {
		t.Errorf("B answers after A: %v, want ErrNotFound", err)
	}
	if r := <-done; r.e == nil || r.e.Status != store.StatusDenied {
		t.Fatalf("denied call on A: %v %+v", r.err, r.e)
	}
}

// TestClusterElicitation: a question with a schema asked by a call on A is
// answered on B: an answer that does not fit the schema is refused on B
// with the schema's error and the question stays open; a good one
// completes the call on A; a second is refused.
func TestClusterElicitation(t *testing.T) {
	_, dsn := clusterDB(t)
	a := startReplica(t, dsn, "A", &config.Config{Servers: []config.Server{elicitServer(t, config.NegotiationLegacy)}}, host.Options{})
	b := startReplica(t, dsn, "B", &config.Config{}, host.Options{})
	sess, err := a.h.CreateSession(t.Context(), alice, "")
	if err != nil {
		t.Fatal(err)
	}
	evs, stop, err := b.h.Subscribe(host.Caller{Principal: alice})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	type result struct {
		e   *store.Entry
		err error
	}
	done := make(chan result, 1)
	go func() {
		e, err := a.h.Call(t.Context(), host.SessionCall{Principal: alice, SessionID: sess.ID, Server: "ask", Tool: "ask_password", Arguments: json.RawMessage(`{}`)})
		done <- result{e, err}
	}()
	q := waitEvent(t, evs, host.EventElicitation).Data.(host.Elicitation)
	if q.Tool != "ask_password" || !strings.Contains(string(q.RequestedSchema), `"password"`) {
		t.Fatalf("question on B: %+v", q)
	}
	if got := b.h.PendingElicitations(alice); len(got) != 1 || got[0].ID != q.ID {
		t.Fatalf("B lists %+v", got)
	}
	if err := b.h.AnswerElicitation(bob, q.ID, host.ElicitationAnswer{Action: host.ElicitDecline}); !errors.Is(err, host.ErrNotFound) {
		t.Fatalf("bob's answer: %v", err)
	}
	var ae *host.ElicitationAnswerError
	err = b.h.AnswerElicitation(alice, q.ID, host.ElicitationAnswer{Action: host.ElicitAccept, Content: map[string]any{"user": "ada"}})
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "password") {
		t.Fatalf("an answer without the required password on B: %v, want the schema's ElicitationAnswerError", err)
	}
	if got := b.h.PendingElicitations(alice); len(got) != 1 {
		t.Fatalf("after a refused answer B lists %+v", got)
	}
	if err := b.h.AnswerElicitation(alice, q.ID, host.ElicitationAnswer{Action: host.ElicitAccept, Content: map[string]any{"user": "ada", "password": "hunter2"}}); err != nil {
		t.Fatal(err)
	}
	if err := b.h.AnswerElicitation(alice, q.ID, host.ElicitationAnswer{Action: host.ElicitDecline}); !errors.Is(err, host.ErrNotFound) {
		t.Errorf("second answer: %v, want ErrNotFound", err)
	}
	r := <-done
	if r.err != nil || !strings.Contains(string(r.e.Result), "user ada, password of 7 bytes") {
		t.Fatalf("the call on A: %v %+v", r.err, r.e)
	}
	if d := waitEvent(t, evs, host.EventElicitationDone).Data.(questions.ElicitationDone); d.ID != q.ID || d.Outcome != host.ElicitAccept {
		t.Errorf("done on B: %+v", d)
	}
	if got := b.h.PendingElicitations(alice); len(got) != 0 {
		t.Errorf("B still lists %+v", got)
	}
}

// TestClusterReload: a reload announced on A calls B's OnPeerReload; one
// not announced (SIGHUP, or a reload heard from a peer) does not.
func TestClusterReload(t *testing.T) {
	_, dsn := clusterDB(t)
	a := startReplica(t, dsn, "A", &config.Config{}, host.Options{})
	heard := make(chan struct{}, 4)
	startReplica(t, dsn, "B", &config.Config{}, host.Options{OnPeerReload: func(context.Context) { heard <- struct{}{} }})
	if _, err := a.h.ReloadWith(t.Context(), &config.Config{}, host.ReloadOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.h.ReloadWith(t.Context(), &config.Config{}, host.ReloadOptions{Announce: true}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-heard:
	case <-time.After(10 * time.Second):
		t.Fatal("B did not hear of A's reload")
	}
	select {
	case <-heard:
		t.Error("B heard of a reload that was not announced")
	case <-time.After(200 * time.Millisecond):
	}
}

// intruderConn connects to dsn's database as a new role with no
// privilege but the CONNECT every role has by default (PUBLIC's), and
// listens on the pokes' channel, as anyone who may connect can.
func intruderConn(t *testing.T, srv *pgtest.Server, dsn string) *pgx.Conn {
	t.Helper()
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	role := cfg.Database + "_intruder"
	if err := srv.Exec(t.Context(), cfg.Database, `CREATE ROLE "`+role+`" LOGIN`); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(srv.DSN(cfg.Database))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	conn, err := pgx.Connect(t.Context(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	if _, err := conn.Exec(t.Context(), "LISTEN "+store.PokeChannel); err != nil {
		t.Fatal(err)
	}
	return conn
}

// TestClusterForgedPokes: another role of the database that sends plain
// pg_notify on the pokes' channel (red team F13) puts nothing into a
// principal's event stream and makes no replica reload, nor does a
// replica's reload poke it captured and sends again; the replicas' own
// pokes still arrive, and each refusal is counted.
func TestClusterForgedPokes(t *testing.T) {
	srv, dsn := clusterDB(t)
	a := startReplica(t, dsn, "A", policyConfig(t), host.Options{})
	heard := make(chan struct{}, 8)
	b := startReplica(t, dsn, "B", &config.Config{}, host.Options{OnPeerReload: func(context.Context) { heard <- struct{}{} }})
	evs, stop, err := b.h.Subscribe(host.Caller{Principal: alice})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	spy := intruderConn(t, srv, dsn)

	// A legitimate reload, announced by A: B reloads once, and the spy
	// captures the poke.
	if _, err := a.h.ReloadWith(t.Context(), policyConfig(t), host.ReloadOptions{Announce: true}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-heard:
	case <-time.After(30 * time.Second):
		t.Fatal("B did not hear of A's reload")
	}
	var captured string
	for captured == "" {
		n, err := spy.WaitForNotification(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(n.Payload, `"kind":"reload"`) {
			captured = n.Payload
		}
	}

	forged := []string{
		`{"kind":"call_started","id":"c_fake","principal":"alice","origin":"zz","data":{"callId":"c_fake","sessionId":"s_x","server":"files","tool":"INJECTED-BY-ANOTHER-DB-ROLE"}}`,
		`{"kind":"reload","origin":"zz"}`,
		captured,
	}
	for _, payload := range forged {
		if _, err := spy.Exec(t.Context(), `SELECT pg_notify($1, $2)`, store.PokeChannel, payload); err != nil {
			t.Fatalf("pg_notify as a role with no privilege: %v", err)
		}
	}
	// A call on A afterwards: notifications arrive in commit order, so
	// once its entry is on B's stream, every forged one has been handled.
	e, err := sessionCall(t, a.h, alice, "read", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	for {
		ev := waitEvent(t, evs, "")
		if d, ok := ev.Data.(host.CallStarted); ok && d.CallID != e.CallID {
			t.Errorf("B published a call_started nobody made: %+v", d)
		}
		if d, ok := ev.Data.(*store.Entry); ok && d.ID == e.ID {
			break
		}
	}
	if st := b.h.FanIn(); st.Refused != int64(len(forged)) {
		t.Errorf("B's fan-in %+v, want %d refused", st, len(forged))
	}
	select {
	case <-heard:
		t.Error("B reloaded for a notification another role sent")
	default:
	}
}

// TestClusterApprovalLimit: the cap on a principal's pending approvals
// (32) holds across the cluster: with 16 calls waiting on A and 16 on B,
// the next call on either is refused at once.
func TestClusterApprovalLimit(t *testing.T) {
	_, dsn := clusterDB(t)
	a := startReplica(t, dsn, "A", policyConfig(t), host.Options{ApprovalTimeout: time.Minute})
	b := startReplica(t, dsn, "B", policyConfig(t), host.Options{ApprovalTimeout: time.Minute})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	write := func(ctx context.Context, h *host.Host) error {
		sess, err := h.CreateSession(t.Context(), alice, "")
		if err != nil {
			return err
		}
		_, err = h.Call(ctx, host.SessionCall{Principal: alice, SessionID: sess.ID, Server: "files", Tool: "write",
			Arguments: json.RawMessage(`{"path":"/srv/a"}`), Origin: host.OriginUser})
		return err
	}
	done := make(chan error, 32)
	for i := range 32 {
		h := a.h
		if i%2 == 1 {
			h = b.h
		}
		go func() { done <- write(ctx, h) }()
	}
	deadline := time.Now().Add(time.Minute)
	for len(a.h.PendingApprovals(alice)) < 32 || len(b.h.PendingApprovals(alice)) < 32 {
		if time.Now().After(deadline) {
			t.Fatalf("pending: %d listed on A, %d on B, want 32 on both", len(a.h.PendingApprovals(alice)), len(b.h.PendingApprovals(alice)))
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, r := range []replica{a, b} {
		if err := write(t.Context(), r.h); !errors.Is(err, host.ErrTooManyApprovals) {
			t.Errorf("call 33 on %s: %v, want ErrTooManyApprovals", r.st.Replica(), err)
		}
	}
	cancel()
	for range 32 {
		if err := <-done; err == nil {
			t.Error("a call cancelled while waiting for approval succeeded")
		}
	}
}
