package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/cluster"
	"github.com/mcphost/mcphost/internal/clustertest"
)

var secret = []byte("0123456789abcdef0123456789abcdef")

func TestResolveID(t *testing.T) {
	for _, tc := range []struct {
		name, flag, env, host string
		want, wantErr         string
	}{
		{name: "flag wins", flag: "a-1", env: "b-2", want: "a-1"},
		{name: "env", env: "pod-7", want: "pod-7"},
		{name: "bad flag", flag: "Pod_1", wantErr: "-replica-id"},
		{name: "bad env", env: strings.Repeat("x", 64), wantErr: cluster.EnvReplicaID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := cluster.ResolveID(tc.flag, tc.env, tc.host)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ResolveID = %q, %v; want an error naming %s", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ResolveID = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	for _, host := range []string{"", "Web-01.Example.COM", strings.Repeat("ä", 80), "---"} {
		id, err := cluster.ResolveID("", "", host)
		if err != nil || !cluster.ValidID(id) {
			t.Errorf("generated id for host %q = %q, %v: not a valid id", host, id, err)
		}
	}
	if id, _ := cluster.ResolveID("", "", "Web-01.Example.COM"); !strings.HasPrefix(id, "web-01-example-com-") {
		t.Errorf("generated id %q does not start with the host name", id)
	}
}

func TestOwnerOf(t *testing.T) {
	n := newNode(t, "r-1", "http://127.0.0.1:1", &clustertest.Directory{})
	sid := n.SessionID()
	if owner, ok := cluster.OwnerOf(sid); !ok || owner != "r-1" {
		t.Fatalf("OwnerOf(%q) = %q, %v", sid, owner, ok)
	}
	for _, bad := range []string{"", "r-1", "r-1.", ".abc", "R-1.abc", "r_1.abc", "r-1.a.b", "r-1.a b", strings.Repeat("a", 64) + ".x"} {
		if owner, ok := cluster.OwnerOf(bad); ok {
			t.Errorf("OwnerOf(%q) = %q, true; want malformed", bad, owner)
		}
	}
}

func TestSharedSecret(t *testing.T) {
	if _, err := cluster.SharedSecret("", ""); !errors.Is(err, cluster.ErrNoSecret) {
		t.Errorf("no secret: %v", err)
	}
	if _, err := cluster.SharedSecret("short", ""); err == nil {
		t.Error("a short secret was accepted")
	}
	a, _ := cluster.SharedSecret("", "key-one")
	b, _ := cluster.SharedSecret("", "key-one")
	c, _ := cluster.SharedSecret("", "key-two")
	if string(a) != string(b) || string(a) == string(c) || string(a) == "key-one" {
		t.Error("the secret derived from MCPHOST_SECRET_KEY is not a stable one-way function of it")
	}
	if _, err := cluster.New(cluster.Options{ID: "r", Addr: "http://x:1", Directory: &clustertest.Directory{}}); !errors.Is(err, cluster.ErrNoSecretForDirectory) {
		t.Errorf("a directory without a secret: %v", err)
	}
}

// TestLookupGone: a replica whose last heartbeat is older than three
// beats is gone; a deleted one too.
func TestLookupGone(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	dir := &clustertest.Directory{Now: clock}
	a, err := cluster.New(cluster.Options{ID: "a", Addr: "http://a:1", Directory: dir, Secret: secret, Heartbeat: time.Second, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	b, err := cluster.New(cluster.Options{ID: "b", Addr: "http://b:1", Directory: dir, Secret: secret, Heartbeat: time.Second, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { b.Run(ctx); close(done) }()
	for {
		if _, ok := dir.Get("b"); ok {
			break
		}
		time.Sleep(time.Millisecond) // the first beat is at once
	}
	cancel()
	<-done
	if r, ok, err := a.Lookup(t.Context(), "b"); err != nil || !ok || r.Addr != "http://b:1" {
		t.Fatalf("Lookup(b) = %+v, %v, %v", r, ok, err)
	}
	now.Add(int64(3500 * time.Millisecond))
	if _, ok, _ := a.Lookup(t.Context(), "b"); ok {
		t.Error("b is found 3.5 heartbeats after its last one")
	}
	if _, ok, _ := a.Lookup(t.Context(), "nobody"); ok {
		t.Error("an unknown replica is found")
	}
	b.Drain(t.Context())
	if r, _ := dir.Get("b"); !r.Draining {
		t.Error("Drain did not mark the row")
	}
	if err := b.Leave(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, ok := dir.Get("b"); ok {
		t.Error("Leave kept the row")
	}
	dir.SetFail(errors.New("down"))
	now.Add(int64(time.Minute))
	if _, _, err := a.Lookup(t.Context(), "b"); err == nil {
		t.Error("a failing directory is no error")
	}
}

func newNode(t *testing.T, id, addr string, dir cluster.Directory) *cluster.Node {
	t.Helper()
	n, err := cluster.New(cluster.Options{ID: id, Addr: addr, Directory: dir, Secret: secret, DialTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// replica is one replica's front in front of a handler that says who
// answered and what hop headers it saw.
type replica struct {
	node *cluster.Node
	srv  *httptest.Server
}

func startReplica(t *testing.T, id string, dir *clustertest.Directory) *replica {
	t.Helper()
	r := &replica{}
	next := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("X-Served-By", id)
		w.Header().Set("X-Saw-Hop", req.Header.Get(cluster.HeaderHop)+req.Header.Get(cluster.HeaderHopAuth))
		w.Header().Set("X-Saw-Auth", req.Header.Get("Authorization"))
		io.WriteString(w, req.Method+" "+req.URL.RequestURI())
	})
	r.srv = httptest.NewUnstartedServer(nil)
	r.srv.Start()
	r.node = newNode(t, id, r.srv.URL, dir)
	r.srv.Config.Handler = r.node.Handler(next, func(req *http.Request) bool { return req.Header.Get("Mcp-Protocol-Version") >= "2026-07-28" })
	t.Cleanup(r.srv.Close)
	if err := dir.PutReplica(t.Context(), cluster.Replica{ID: id, Addr: r.srv.URL}); err != nil {
		t.Fatal(err)
	}
	return r
}

func do(t *testing.T, url, sid string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "POST", url+"/mcp?x=1", strings.NewReader("{}"))
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	req.Header.Set("Authorization", "Bearer client-token")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func TestHandler(t *testing.T) {
	dir := &clustertest.Directory{}
	a := startReplica(t, "a", dir)
	b := startReplica(t, "b", dir)
	sidB := b.node.SessionID()

	t.Run("own session served here", func(t *testing.T) {
		res, _ := do(t, b.srv.URL, sidB, nil)
		if res.StatusCode != 200 || res.Header.Get("X-Served-By") != "b" {
			t.Fatalf("status %d by %q", res.StatusCode, res.Header.Get("X-Served-By"))
		}
	})
	t.Run("other's session forwarded", func(t *testing.T) {
		res, body := do(t, a.srv.URL, sidB, nil)
		if res.StatusCode != 200 || res.Header.Get("X-Served-By") != "b" || body != "POST /mcp?x=1" {
			t.Fatalf("status %d by %q: %s", res.StatusCode, res.Header.Get("X-Served-By"), body)
		}
		if res.Header.Get("X-Saw-Auth") != "Bearer client-token" {
			t.Errorf("the owner saw Authorization %q, want the client's", res.Header.Get("X-Saw-Auth"))
		}
		if res.Header.Get("X-Saw-Hop") != "" {
			t.Errorf("the owner's handler saw the hop headers %q (the front removes them)", res.Header.Get("X-Saw-Hop"))
		}
	})
	t.Run("no session id served here", func(t *testing.T) {
		res, _ := do(t, a.srv.URL, "", nil)
		if res.Header.Get("X-Served-By") != "a" {
			t.Fatalf("initialize served by %q", res.Header.Get("X-Served-By"))
		}
	})
	t.Run("stateless never forwarded", func(t *testing.T) {
		res, _ := do(t, a.srv.URL, sidB, map[string]string{"Mcp-Protocol-Version": "2026-07-28"})
		if res.Header.Get("X-Served-By") != "a" {
			t.Fatalf("a 2026-07-28 request served by %q", res.Header.Get("X-Served-By"))
		}
	})
	t.Run("malformed", func(t *testing.T) {
		for _, sid := range []string{"plain-go-sdk-id", "B.x", "a.b.c"} {
			if res, _ := do(t, a.srv.URL, sid, nil); res.StatusCode != 404 {
				t.Errorf("session %q: status %d, want 404", sid, res.StatusCode)
			}
		}
	})
	t.Run("unknown owner", func(t *testing.T) {
		if res, body := do(t, a.srv.URL, "zz.ABC", nil); res.StatusCode != 404 {
			t.Errorf("status %d (%s), want 404", res.StatusCode, body)
		}
	})
	t.Run("forged hop", func(t *testing.T) {
		for _, h := range []map[string]string{
			{cluster.HeaderHop: "a"},
			{cluster.HeaderHop: "a", cluster.HeaderHopAuth: strings.Repeat("0", 64)},
			{cluster.HeaderHopAuth: "x"},
		} {
			res, body := do(t, b.srv.URL, sidB, h)
			if res.StatusCode != 403 || res.Header.Get("X-Served-By") != "" {
				t.Errorf("hop headers %v: status %d (%s), want 403", h, res.StatusCode, body)
			}
		}
	})
	t.Run("loop impossible", func(t *testing.T) {
		// c's directory points a's session at b, b's at a: a forwarded
		// request arriving at a replica that is not the owner ends there.
		dir2 := &clustertest.Directory{}
		c := startReplica(t, "c", dir2)
		dir2.Set(cluster.Replica{ID: "a", Addr: b.srv.URL, Seen: time.Now()})
		res, body := do(t, c.srv.URL, a.node.SessionID(), nil)
		if res.StatusCode != 404 || res.Header.Get("X-Served-By") != "" {
			t.Fatalf("status %d by %q (%s), want 404 from b", res.StatusCode, res.Header.Get("X-Served-By"), body)
		}
	})
	t.Run("owner refuses connections", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		dir.Set(cluster.Replica{ID: "dead", Addr: "http://" + addr, Seen: time.Now()})
		start := time.Now()
		if res, body := do(t, a.srv.URL, "dead.XYZ", nil); res.StatusCode != 404 {
			t.Errorf("status %d (%s), want 404", res.StatusCode, body)
		}
		t.Logf("answered in %s", time.Since(start))
	})
	t.Run("owner started again elsewhere", func(t *testing.T) {
		// a forwards to m, and so has m's address in its cache; m is
		// started again at another address with the same id. The next
		// request, within a's cache time, finds the old address refusing
		// and reaches m at the new one.
		m := startReplica(t, "m", dir)
		sidM := m.node.SessionID()
		for deadline := time.Now().Add(5 * time.Second); ; {
			// a reads again after a miss only once its read is
			// missRefetch old.
			res, _ := do(t, a.srv.URL, sidM, nil)
			if res.Header.Get("X-Served-By") == "m" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("before the restart: status %d by %q", res.StatusCode, res.Header.Get("X-Served-By"))
			}
			time.Sleep(20 * time.Millisecond)
		}
		m.srv.Close()
		startReplica(t, "m", dir)
		res, body := do(t, a.srv.URL, sidM, nil)
		if res.StatusCode != 200 || res.Header.Get("X-Served-By") != "m" {
			t.Fatalf("after the restart: status %d by %q (%s), want m at its new address", res.StatusCode, res.Header.Get("X-Served-By"), body)
		}
	})
	t.Run("owner heartbeat late", func(t *testing.T) {
		// The owner's last heartbeat is 20 s old (it could not write it:
		// the database was down) but it serves: its session is forwarded
		// to it, not answered 404.
		late := startReplica(t, "late", dir)
		dir.Set(cluster.Replica{ID: "late", Addr: late.srv.URL, Seen: time.Now().Add(-10 * cluster.DefaultHeartbeat)})
		for deadline := time.Now().Add(5 * time.Second); ; {
			res, body := do(t, a.srv.URL, late.node.SessionID(), nil)
			if res.StatusCode == 200 && res.Header.Get("X-Served-By") == "late" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("status %d by %q (%s), want the late owner to serve", res.StatusCode, res.Header.Get("X-Served-By"), body)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	t.Run("owner row stale", func(t *testing.T) {
		// The owner's last heartbeat is an hour old: it crashed, and
		// something else listens at its old address. Its sessions are
		// 404, and nothing (neither the client's token nor a proof)
		// reaches that address.
		sq := newSquatter(t)
		dir.Set(cluster.Replica{ID: "crashed", Addr: sq.srv.URL, Seen: time.Now().Add(-time.Hour)})
		f := startReplica(t, "f", dir) // its first lookup reads the directory
		if res, body := do(t, f.srv.URL, "crashed.ABCDEFGHIJKLMNOPQRSTUVWXYZ", nil); res.StatusCode != http.StatusNotFound {
			t.Errorf("status %d (%s), want 404", res.StatusCode, body)
		}
		if n := len(sq.requests()); n != 0 {
			t.Errorf("%d requests reached the stale row's address", n)
		}
	})
	t.Run("owner unreachable", func(t *testing.T) {
		// TEST-NET-1: nothing answers; the dial timeout bounds the wait.
		dir.Set(cluster.Replica{ID: "blackhole", Addr: "http://192.0.2.1:9", Seen: time.Now()})
		start := time.Now()
		res, body := do(t, a.srv.URL, "blackhole.XYZ", nil)
		if res.StatusCode != 502 && res.StatusCode != 404 {
			t.Errorf("status %d (%s), want 502 or 404", res.StatusCode, body)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("answered after %s, want within the dial timeout", d)
		}
	})
	t.Run("directory down", func(t *testing.T) {
		dir3 := &clustertest.Directory{}
		d := startReplica(t, "d", dir3)
		dir3.SetFail(errors.New("down"))
		if res, _ := do(t, d.srv.URL, "b.XYZ", nil); res.StatusCode != 503 {
			t.Errorf("status %d, want 503", res.StatusCode)
		}
	})
}

func TestSingleNodeUnchanged(t *testing.T) {
	n, err := cluster.New(cluster.Options{ID: "solo", Addr: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	next := http.NotFoundHandler()
	if h := n.Handler(next, nil); h == nil || n.Clustered() {
		t.Fatal("a single node is clustered")
	}
	n.Run(t.Context()) // returns at once
	if err := n.Leave(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestForwardedStreamsWhole forwards 300 legacy tools/call POSTs whose
// answers are SSE streams to their owner, a real go-sdk server: every
// answer must arrive whole. (Before the front read the body before
// forwarding, about one stream in a hundred was cut after its priming
// event: once an answer's first event was flushed, net/http failed the
// proxy's further reads of the request body and the proxy dropped the
// connection under the stream.)
func TestForwardedStreamsWhole(t *testing.T) {
	dir := &clustertest.Directory{}
	a := startReplica(t, "a", dir)
	b := &replica{}
	b.srv = httptest.NewUnstartedServer(nil)
	b.srv.Start()
	t.Cleanup(b.srv.Close)
	b.node = newNode(t, "b", b.srv.URL, dir)
	if err := dir.PutReplica(t.Context(), cluster.Replica{ID: "b", Addr: b.srv.URL}); err != nil {
		t.Fatal(err)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "owner", Version: "1"}, &mcp.ServerOptions{GetSessionID: b.node.SessionID})
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct{ Text string }) (*mcp.CallToolResult, any, error) {
		time.Sleep(2 * time.Millisecond) // long enough for the priming event to go out first
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{
		EventStore: mcp.NewMemoryEventStore(nil),
	})
	b.srv.Config.Handler = b.node.Handler(sdk, func(*http.Request) bool { return false })

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: b.srv.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	cut := 0
	for i := range 300 {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", a.srv.URL,
			strings.NewReader(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"Text":"x%d"}}}`, 1000+i, i)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Mcp-Session-Id", cs.ID())
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !strings.Contains(string(body), fmt.Sprintf(`"text":"x%d"`, i)) {
			cut++
		}
	}
	if cut > 0 {
		t.Errorf("%d of 300 forwarded answers were cut short", cut)
	}
}
