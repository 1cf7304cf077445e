package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/apps"
	"github.com/mcphost/mcphost/cluster"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/clustertest"
)

// singletonReplica is a replica with a cluster node and an HTTP server
// that serves its singleton relay, as mcphost serve mounts it.
type singletonReplica struct {
	replica
	id   string
	node *cluster.Node
	base string
	// stopNode stops the node's heartbeat.
	stopNode func()
}

const singletonSecret = "singleton test secret, the same on every replica"

// startSingletonReplica starts replica id of a cluster on dsn, with dir
// its directory of replicas.
func startSingletonReplica(t testing.TB, dsn, id string, dir cluster.Directory, servers ...config.Server) singletonReplica {
	t.Helper()
	return startNodeReplica(t, dsn, id, dir, &config.Config{Servers: servers})
}

// startNodeReplica starts replica id of a cluster on dsn with cfg: a host
// with a cluster node on dir (its heartbeat stops with stopNode) and an
// HTTP server for the other replicas' relay sessions.
func startNodeReplica(t testing.TB, dsn, id string, dir cluster.Directory, cfg *config.Config) singletonReplica {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	node, err := cluster.New(cluster.Options{ID: id, Addr: base, Directory: dir, Secret: []byte(singletonSecret)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go node.Run(ctx)
	t.Cleanup(cancel)
	var h *host.Host
	var ready sync.WaitGroup
	ready.Add(1)
	relay := node.HopOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ready.Wait()
		_, handler := h.RelayHandler()
		handler.ServeHTTP(w, r)
	}))
	srv := &http.Server{Handler: relay}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	// The directory knows the replica before its host starts, as the
	// daemon's first heartbeat comes before its servers are up.
	if err := dir.PutReplica(t.Context(), cluster.Replica{ID: id, Addr: base, Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	r := startReplica(t, dsn, id, cfg, host.Options{Replica: id, Cluster: node, Restart: true, BackoffMax: time.Second, Logger: testLogger(t)})
	h = r.h
	ready.Done()
	return singletonReplica{replica: r, id: id, node: node, base: base, stopNode: cancel}
}

// startSingletonPair starts replicas a and b of a cluster on a fresh
// database, each with the elicit fixture as the singleton server "ask"
// (negotiation as given) and the other servers, and waits until a runs
// "ask" and b relays to it.
func startSingletonPair(t testing.TB, negotiation string, others ...config.Server) (a, b singletonReplica) {
	t.Helper()
	_, dsn := clusterDB(t)
	dir := &clustertest.Directory{}
	srv := elicitServer(t, negotiation)
	srv.Placement = config.PlacementSingleton
	servers := append([]config.Server{srv}, others...)
	a = startSingletonReplica(t, dsn, "a", dir, servers...)
	b = startSingletonReplica(t, dsn, "b", dir, servers...)
	waitRunsOn(t, a, "ask", "a")
	waitRunsOn(t, b, "ask", "a")
	return a, b
}

// waitRunsOn waits until the server is ready on r, run by replica on.
func waitRunsOn(t testing.TB, r singletonReplica, server, on string) host.ServerStatus {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		st := mustStatus(t, r.h, server)
		if st.State == host.StateReady && st.RunsOn == on {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %s: server %s is %s on %q (%s), want ready on %q", r.id, server, st.State, st.RunsOn, st.LastError, on)
		}
		time.Sleep(20 * time.Millisecond) // polling a supervisor's state
	}
}

// TestSingletonPlacement: a server with placement = "singleton" runs on
// one of two replicas; the other relays to it, so both share one process
// and its state. Calls made on either replica are recorded there; the
// server's progress and questions reach the replica that made the call,
// in both eras; when the replica that runs it stops, the other takes its
// lock and starts it.
func TestSingletonPlacement(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			// a started first and took the lock; b relays to it.
			a, b := startSingletonPair(t, era.negotiation)
			stA, stB := mustStatus(t, a.h, "ask"), mustStatus(t, b.h, "ask")
			if stA.PID == 0 || stB.PID != 0 || stA.Placement != "singleton" || stB.Placement != "singleton" {
				t.Fatalf("a: pid %d placement %q; b: pid %d placement %q; want one process, on a", stA.PID, stA.Placement, stB.PID, stB.Placement)
			}
			if stB.Era != era.era || stA.Era != era.era {
				t.Errorf("era on a %q, on b %q, want %q on both", stA.Era, stB.Era, era.era)
			}
			if stB.Tools != stA.Tools || stB.Tools == 0 {
				t.Errorf("b lists %d tools, a %d", stB.Tools, stA.Tools)
			}

			// One process, one state: the count goes on across replicas,
			// and each call's entry is on the replica that took it.
			for i, r := range []singletonReplica{a, b, b, a, b} {
				sess, err := r.h.CreateSession(t.Context(), alice, "")
				if err != nil {
					t.Fatal(err)
				}
				e, err := r.h.Call(t.Context(), host.SessionCall{Principal: alice, SessionID: sess.ID, Server: "ask", Tool: "count", Arguments: json.RawMessage(`{}`), Origin: host.OriginUser})
				if err != nil {
					t.Fatalf("call %d on %s: %v", i+1, r.id, err)
				}
				var res struct {
					Content []struct{ Text string } `json:"content"`
				}
				_ = json.Unmarshal(e.Result, &res)
				if want := []string{"1", "2", "3", "4", "5"}[i]; len(res.Content) != 1 || res.Content[0].Text != want {
					t.Fatalf("call %d on %s: %s, want count %s (one process for both replicas)", i+1, r.id, e.Result, want)
				}
				if _, err := r.st.Entry(t.Context(), "alice", e.ID); err != nil {
					t.Errorf("call %d's entry on %s: %v", i+1, r.id, err)
				}
			}

			// The server's progress during a call made on b reaches b's
			// caller, through the relay.
			var progressMu sync.Mutex
			var progressed []host.Progress
			res, err := b.h.CallTool(t.Context(), host.CallToolRequest{Server: "ask", Tool: "progress",
				OnProgress: func(p host.Progress) { progressMu.Lock(); progressed = append(progressed, p); progressMu.Unlock() }})
			if err != nil || textOf(res) != "progressed" {
				t.Fatalf("progress on b: %q %v", textOf(res), err)
			}
			progressMu.Lock()
			if len(progressed) != 3 || progressed[2].Progress != 3 || progressed[2].Message != "step 3" {
				t.Errorf("b's caller heard progress %+v, want steps 1 to 3", progressed)
			}
			progressMu.Unlock()

			// A question, asked by the server during a call made on b,
			// reaches b's caller.
			var asked []host.Elicitation
			res, err = b.h.CallTool(t.Context(), host.CallToolRequest{Server: "ask", Tool: "ask_name",
				Elicit: answering("accept", map[string]any{"name": "Grace", "age": 36}, &asked)})
			if err != nil || textOf(res) != "hello Grace, 36" {
				t.Fatalf("ask_name on b: %q %v", textOf(res), err)
			}
			if len(asked) != 1 || asked[0].Message != "Who are you?" || asked[0].Tool != "ask_name" {
				t.Errorf("b's door was asked %+v", asked)
			}
			// What the calling replica refuses, it refuses as for a server
			// of its own: a javascript: URL is declined there.
			res, err = b.h.CallTool(t.Context(), host.CallToolRequest{Server: "ask", Tool: "bad_url",
				Elicit: answering("accept", nil, &asked)})
			if err != nil || !strings.Contains(textOf(res), "decline") || len(asked) != 1 {
				t.Errorf("bad_url on b: %q %v, asked %d times", textOf(res), err, len(asked))
			}

			// a stops: b takes the lock and starts the server itself, a
			// fresh process.
			if err := a.h.Close(); err != nil {
				t.Fatal(err)
			}
			stB = waitRunsOn(t, b, "ask", "b")
			if stB.PID == 0 {
				t.Fatalf("b runs the server with no process: %+v", stB)
			}
			res, err = b.h.CallTool(t.Context(), host.CallToolRequest{Server: "ask", Tool: "count"})
			if err != nil || textOf(res) != "1" {
				t.Fatalf("count on b after the handover: %q %v, want 1 (a new process)", textOf(res), err)
			}
		})
	}
}

// TestSingletonRelayRefuses: the relay serves only replicas, only the
// singleton servers it runs.
func TestSingletonRelayRefuses(t *testing.T) {
	plain := elicitServer(t, config.NegotiationLegacy)
	plain.Name = "plain"
	a, b := startSingletonPair(t, config.NegotiationLegacy, plain)
	if st := mustStatus(t, b.h, "plain"); st.PID == 0 || st.Placement != "" {
		t.Errorf("a server without placement on b: pid %d placement %q, want its own process", st.PID, st.Placement)
	}

	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	post := func(base, path string, sign func(*http.Request)) int {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+path, strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sign != nil {
			sign(req)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	forged := func(r *http.Request) {
		r.Header.Set(cluster.HeaderHop, "b")
		r.Header.Set(cluster.HeaderHopAuth, strings.Repeat("0", 64))
	}
	signed := func(n *cluster.Node, to string) func(*http.Request) {
		return func(r *http.Request) {
			if err := n.SignHop(r, to, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name string
		base string
		path string
		sign func(*http.Request)
		want int
	}{
		{"a client, no hop headers", a.base, host.RelayPath + "ask", nil, http.StatusForbidden},
		{"a forged hop", a.base, host.RelayPath + "ask", forged, http.StatusForbidden},
		{"a hop for another replica", a.base, host.RelayPath + "ask", signed(b.node, "b"), http.StatusNotFound},
		{"a server that is no singleton", a.base, host.RelayPath + "plain", signed(b.node, "a"), http.StatusNotFound},
		{"an unknown server", a.base, host.RelayPath + "nope", signed(b.node, "a"), http.StatusNotFound},
		{"the replica that does not run it", b.base, host.RelayPath + "ask", signed(a.node, "b"), http.StatusServiceUnavailable},
		{"the replica that runs it", a.base, host.RelayPath + "ask", signed(b.node, "a"), http.StatusOK},
	} {
		if got := post(tc.base, tc.path, tc.sign); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// testLogger logs to the test's output (seen with -v or on failure).
func testLogger(t testing.TB) *slog.Logger {
	if _, bench := t.(*testing.B); bench {
		return slog.New(slog.DiscardHandler) // a benchmark's log is printed with its results
	}
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(b), "\n"))
	return len(b), nil
}

// TestClusterQuestionOfADeadReplica: an approval raised by a call on
// replica a, whose replica then dies (its heartbeat stops and it leaves
// the directory, or a new process under its id registers), is no longer
// listed or answerable on b at once, and the sweep deletes it and tells
// b's WebShells that it ended.
func TestClusterQuestionOfADeadReplica(t *testing.T) {
	host.SetQuestionSweepEvery(t, 100*time.Millisecond)
	for _, tc := range []struct {
		name string
		die  func(t *testing.T, dir *clustertest.Directory, a singletonReplica)
	}{
		{"gone from the directory", func(t *testing.T, dir *clustertest.Directory, a singletonReplica) {
			if err := dir.DeleteReplica(t.Context(), "a"); err != nil {
				t.Fatal(err)
			}
		}},
		{"started again", func(t *testing.T, dir *clustertest.Directory, a singletonReplica) {
			dir.Set(cluster.Replica{ID: "a", Addr: a.base, Started: time.Now(), Seen: time.Now()})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { questionOfADeadReplica(t, tc.die) })
	}
}

func questionOfADeadReplica(t *testing.T, die func(t *testing.T, dir *clustertest.Directory, a singletonReplica)) {
	_, dsn := clusterDB(t)
	dir := &clustertest.Directory{}
	a := startNodeReplica(t, dsn, "a", dir, policyConfig(t))
	b := startNodeReplica(t, dsn, "b", dir, &config.Config{})
	evs, stop, err := b.h.Subscribe(host.Caller{Principal: alice})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	// The call waits on a until the end of the test, which ends it and
	// waits for it before the hosts close.
	ctx, cancel := context.WithCancel(t.Context())
	called := make(chan struct{})
	defer func() { cancel(); <-called }()
	go func() {
		defer close(called)
		sess, err := a.h.CreateSession(ctx, alice, "")
		if err == nil {
			_, _ = a.h.Call(ctx, host.SessionCall{Principal: alice, SessionID: sess.ID, Server: "files", Tool: "write",
				Arguments: json.RawMessage(`{"path":"/srv/a"}`), Origin: host.OriginUser})
		}
	}()
	ap := waitEvent(t, evs, host.EventApproval).Data.(host.Approval)
	if got := b.h.PendingApprovals(alice); len(got) != 1 || got[0].ID != ap.ID {
		t.Fatalf("b lists %+v while a lives", got)
	}

	// a dies: its heartbeat stops.
	a.stopNode()
	die(t, dir, a)
	deadline := time.Now().Add(time.Minute)
	for len(b.h.PendingApprovals(alice)) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("b still lists %+v after a died", b.h.PendingApprovals(alice))
		}
		time.Sleep(20 * time.Millisecond) // the directory cache (under a second)
	}
	if err := b.h.Answer(alice, ap.ID, true); !errors.Is(err, host.ErrNotFound) {
		t.Errorf("answering a dead replica's question on b: %v, want ErrNotFound", err)
	}
	if d := waitEvent(t, evs, host.EventApprovalDone).Data.(host.ApprovalDone); d.ID != ap.ID || d.Outcome != host.ApprovalCancelled {
		t.Errorf("b's WebShells were told %+v, want %s cancelled", d, ap.ID)
	}
	for {
		if _, err := b.st.Question(t.Context(), ap.ID); errors.Is(err, store.ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the dead replica's question is still stored")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSingletonLargeApp: a singleton's App reaches the replica that relays
// to it, as a call's display and as a read, up to what
// app_resource_max_bytes allows (16 MiB; here 12 MB). Before, the relay
// hid the server's extensions and the App's read named no principal: no
// singleton's App rendered on another replica.
func TestSingletonLargeApp(t *testing.T) {
	html := "<!doctype html><p>" + strings.Repeat("x", 12_000_000) + "</p>"
	s := remoteServer("app", config.TransportStreamableHTTP, appServerMeta(t, true, apps.MIMEType, html, nil))
	s.Apps, s.AppResourceMaxBytes, s.AppResourceTimeout = config.AppsAuto, config.MaxAppResourceMaxBytes, 60e9
	s.Placement = config.PlacementSingleton
	_, dsn := clusterDB(t)
	dir := &clustertest.Directory{}
	a := startSingletonReplica(t, dsn, "a", dir, s)
	b := startSingletonReplica(t, dsn, "b", dir, s)
	waitRunsOn(t, a, "app", "a")
	waitRunsOn(t, b, "app", "a")

	e := callInSession(t, b.h, "app", "show", `{}`)
	var d apps.Display
	if err := json.Unmarshal(e.Display, &d); err != nil || d.HTML != html {
		t.Fatalf("the display on b: %d bytes of html, warning %q (%v)", len(d.HTML), d.Warning, err)
	}
	res, err := b.h.ReadResource(t.Context(), host.Caller{Principal: host.Principal{Name: "owner"}}, "", "app", "ui://app", nil)
	if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != html {
		t.Fatalf("a read on b: %v", err)
	}
}
