package gateway_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cluster"
	"github.com/mcphost/mcphost/gateway"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/clustertest"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/mcphost/mcphost/policies"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var clusterSecret = []byte("test-cluster-secret-0123456789abcdef")

// replicaEnv is one gateway replica: a daemon whose gateway has a cluster
// node on a shared directory, counting the requests it received as hops.
type replicaEnv struct {
	*env
	node *cluster.Node
	hops atomic.Int64 // requests that arrived forwarded by another replica
	seen atomic.Int64 // every request
}

// newReplica starts replica id on dir (nil: a single node, no
// forwarding) with the wellbehaved fixture as server fx, heartbeating
// until the test ends.
func newReplica(t testing.TB, id string, dir cluster.Directory, rules ...policies.Rule) *replicaEnv {
	t.Helper()
	bin := testbin.Build(t, wellbehavedPkg)
	r := &replicaEnv{}
	var secret []byte
	if dir != nil {
		secret = clusterSecret
	}
	opts := func(ln net.Listener) gateway.Options {
		n, err := cluster.New(cluster.Options{ID: id, Addr: "http://" + ln.Addr().String(), Directory: dir, Secret: secret,
			Heartbeat: 200 * time.Millisecond, DialTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		r.node = n
		o := gateway.Options{Version: "test", Cluster: n}
		if secret != nil {
			o.SealKey = cluster.DeriveKey(secret, "gateway requestState")
		}
		return o
	}
	count := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			r.seen.Add(1)
			if req.Header.Get(cluster.HeaderHop) != "" {
				r.hops.Add(1)
			}
			next.ServeHTTP(w, req)
		})
	}
	var set *policies.Set
	if len(rules) > 0 {
		var errs []policies.CompileError
		if set, errs = policies.Compile(rules, policies.EffectAllow); len(errs) > 0 {
			t.Fatal(errs)
		}
	}
	r.env = newEnvOpts(t, &config.Config{Servers: []config.Server{stdioServer("fx", bin)}, PolicySet: set}, opts, count)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.node.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	if dir != nil {
		waitFor(t, "replica "+id+" in the directory", func() bool {
			rs, _ := dir.Replicas(t.Context())
			for _, rep := range rs {
				if rep.ID == id {
					return true
				}
			}
			return false
		})
	}
	return r
}

// kill stops a replica the way a crash does: its listener closes, its
// sessions are gone, its directory row stays until it ages out.
func (r *replicaEnv) kill() {
	r.srv.Close()
	r.gw.Close()
}

func waitFor(t testing.TB, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// balancer is an in-test L7 load balancer: a streaming reverse proxy
// (FlushInterval -1) that picks a backend per request, round robin over
// the ones not marked down, or by pick when set.
type balancer struct {
	srv      *httptest.Server
	backends []*replicaEnv
	next     atomic.Uint64
	mu       sync.Mutex
	down     map[int]bool
	pick     func(r *http.Request, up []int) int // nil: round robin
}

func newBalancer(t testing.TB, backends ...*replicaEnv) *balancer {
	t.Helper()
	b := &balancer{backends: backends, down: map[int]bool{}}
	proxy := &httputil.ReverseProxy{
		Director: func(r *http.Request) {
			u, _ := url.Parse(b.backends[b.choose(r)].base)
			r.URL.Scheme, r.URL.Host = u.Scheme, u.Host
		},
		FlushInterval: -1,
		ErrorLog:      log.New(io.Discard, "", 0),
	}
	// Bodies are read whole first, as nginx does by default: streamed
	// through httputil.ReverseProxy, a body races its SSE answer and about
	// one stream in a hundred was cut (see cluster.TestForwardedStreamsWhole).
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(b.srv.Close)
	return b
}

func (b *balancer) choose(r *http.Request) int {
	b.mu.Lock()
	var up []int
	for i := range b.backends {
		if !b.down[i] {
			up = append(up, i)
		}
	}
	b.mu.Unlock()
	if b.pick != nil {
		return b.pick(r, up)
	}
	return up[int(b.next.Add(1))%len(up)]
}

func (b *balancer) markDown(i int) {
	b.mu.Lock()
	b.down[i] = true
	b.mu.Unlock()
}

func connectVia(t testing.TB, base, version string, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "lb-test", Version: "1.0"}, opts)
	tr := &mcp.StreamableClientTransport{Endpoint: base + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{token: aliceToken, next: http.DefaultTransport}}}
	ctx, cancel := context.WithTimeout(t.Context(), waitBound)
	defer cancel()
	cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// connectWatching connects a legacy client through base whose
// tools/list_changed notifications arrive on changed.
func connectWatching(t *testing.T, base string) (cs *mcp.ClientSession, changed <-chan struct{}) {
	t.Helper()
	ch := make(chan struct{}, 8)
	cs, err := connectVia(t, base, legacyVersion, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case ch <- struct{}{}:
			default:
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return cs, ch
}

// exercise lists and calls tools n times on cs.
func exercise(ctx context.Context, cs *mcp.ClientSession, n int) error {
	for i := range n {
		if _, err := cs.ListTools(ctx, nil); err != nil {
			return fmt.Errorf("tools/list %d: %w", i, err)
		}
		want := fmt.Sprintf("hello %d", i)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fx__echo", Arguments: map[string]any{"text": want}})
		if err != nil {
			return fmt.Errorf("tools/call %d: %w", i, err)
		}
		if got := textOf(res); got != want {
			return fmt.Errorf("tools/call %d = %q, want %q", i, got, want)
		}
	}
	return nil
}

func owner(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	id, ok := cluster.OwnerOf(cs.ID())
	if !ok {
		t.Fatalf("session id %q names no replica", cs.ID())
	}
	return id
}

// TestReplicasLegacySessions: two gateway replicas on one directory behind
// a plain round-robin balancer serve a 2025-11-25 client (initialize, many
// lists and calls, notifications on its GET stream), because the replica
// that does not own the session forwards to the one that does; a balancer
// that always picks the wrong replica works too (every request after
// initialize is a hop, the GET stream included). The same two replicas as
// single nodes fail: the test checks the feature. When the owner dies the
// next request gets 404 and a new session works on the survivor.
func TestReplicasLegacySessions(t *testing.T) {
	dir := &clustertest.Directory{}
	a, b := newReplica(t, "a", dir), newReplica(t, "b", dir)
	reps := map[string]*replicaEnv{"a": a, "b": b}

	t.Run("round robin", func(t *testing.T) {
		lb := newBalancer(t, a, b)
		cs, changed := connectWatching(t, lb.srv.URL)
		if err := exercise(t.Context(), cs, 20); err != nil {
			t.Fatal(err)
		}
		// A notification the owner sends on the session's GET stream.
		own := reps[owner(t, cs)]
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "fx__grow", Arguments: map[string]any{"name": "sprout"}}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-changed:
		case <-time.After(waitBound):
			t.Fatal("no tools/list_changed on the GET stream")
		}
		if a.hops.Load()+b.hops.Load() == 0 {
			t.Fatal("no request was forwarded: the balancer did not exercise the feature")
		}
		t.Logf("owner %s; hops received: a %d, b %d", own.node.ID(), a.hops.Load(), b.hops.Load())
	})

	t.Run("always the wrong replica", func(t *testing.T) {
		lb := newBalancer(t, a, b)
		// initialize goes to a; every request with a session id to the
		// replica that does not own it.
		lb.pick = func(r *http.Request, up []int) int {
			sid := r.Header.Get("Mcp-Session-Id")
			if sid == "" {
				return 0
			}
			if strings.HasPrefix(sid, "a.") {
				return 1
			}
			return 0
		}
		hopsBefore := b.hops.Load()
		cs, changed := connectWatching(t, lb.srv.URL)
		if owner(t, cs) != "a" {
			t.Fatalf("owner %s, want a", owner(t, cs))
		}
		if err := exercise(t.Context(), cs, 10); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "fx__grow", Arguments: map[string]any{"name": "shoot"}}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-changed:
		case <-time.After(waitBound):
			t.Fatal("no tools/list_changed on the forwarded GET stream")
		}
		if a.hops.Load() < 20 || b.hops.Load() != hopsBefore {
			t.Errorf("hops: a got %d, b %d more; want every request after initialize forwarded to a", a.hops.Load(), b.hops.Load()-hopsBefore)
		}
		if err := cs.Close(); err != nil { // DELETE, forwarded
			t.Errorf("close (DELETE through the wrong replica): %v", err)
		}
	})

	t.Run("modern never forwarded", func(t *testing.T) {
		lb := newBalancer(t, a, b)
		before := a.hops.Load() + b.hops.Load()
		cs, err := connectVia(t, lb.srv.URL, modernVersion, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := exercise(t.Context(), cs, 10); err != nil {
			t.Fatal(err)
		}
		if n := a.hops.Load() + b.hops.Load() - before; n != 0 {
			t.Errorf("%d 2026-07-28 requests were forwarded, want none", n)
		}
	})

	t.Run("forged hop header", func(t *testing.T) {
		lb := newBalancer(t, a, b)
		cs, err := connectVia(t, lb.srv.URL, legacyVersion, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, target := range []string{a.base, b.base} {
			req, _ := http.NewRequestWithContext(t.Context(), "POST", target+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
			req.Header.Set("Authorization", "Bearer "+aliceToken)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", legacyVersion)
			req.Header.Set("Mcp-Session-Id", cs.ID())
			req.Header.Set(cluster.HeaderHop, "a")
			req.Header.Set(cluster.HeaderHopAuth, strings.Repeat("ab", 32))
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusForbidden {
				t.Errorf("forged hop to %s: %d %s, want 403", target, res.StatusCode, body)
			}
		}
	})

	t.Run("unreachable owner", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := "http://" + ln.Addr().String()
		ln.Close()
		dir.Set(cluster.Replica{ID: "ghost", Addr: closed, Seen: time.Now().Add(time.Hour)})
		for _, sid := range []string{"ghost.ABCDEF", "nobody.ABCDEF", "no-prefix"} {
			req, _ := http.NewRequestWithContext(t.Context(), "POST", a.base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
			req.Header.Set("Authorization", "Bearer "+aliceToken)
			req.Header.Set("Mcp-Protocol-Version", legacyVersion)
			req.Header.Set("Mcp-Session-Id", sid)
			start := time.Now()
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusNotFound {
				t.Errorf("session %s: %d, want 404", sid, res.StatusCode)
			}
			t.Logf("session %s: %d in %s", sid, res.StatusCode, time.Since(start))
		}
	})

	t.Run("owner killed", func(t *testing.T) {
		lb := newBalancer(t, a, b)
		var cs *mcp.ClientSession
		for cs == nil || owner(t, cs) != "b" { // a session of b's
			var err error
			if cs, err = connectVia(t, lb.srv.URL, legacyVersion, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := exercise(t.Context(), cs, 2); err != nil {
			t.Fatal(err)
		}
		b.kill()
		lb.markDown(1) // the balancer's health check notices
		if _, err := cs.ListTools(t.Context(), nil); err == nil {
			t.Fatal("the dead owner's session still answers")
		}
		req, _ := http.NewRequestWithContext(t.Context(), "POST", lb.srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
		req.Header.Set("Authorization", "Bearer "+aliceToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", legacyVersion)
		req.Header.Set("Mcp-Session-Id", cs.ID())
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Fatalf("the dead owner's session through the survivor: %d, want 404", res.StatusCode)
		}
		cs2, err := connectVia(t, lb.srv.URL, legacyVersion, nil)
		if err != nil {
			t.Fatal(err)
		}
		if owner(t, cs2) != "a" {
			t.Errorf("new session owned by %s, want the survivor a", owner(t, cs2))
		}
		if err := exercise(t.Context(), cs2, 3); err != nil {
			t.Fatal(err)
		}
	})
}

// TestReplicasWithoutForwarding is the control: the same two replicas as
// single nodes (no directory) behind the round-robin balancer fail a
// legacy client, as the research measured ("session not found").
func TestReplicasWithoutForwarding(t *testing.T) {
	a, b := newReplica(t, "a", nil), newReplica(t, "b", nil)
	lb := newBalancer(t, a, b)
	cs, err := connectVia(t, lb.srv.URL, legacyVersion, nil)
	if err == nil {
		if _, ok := cluster.OwnerOf(cs.ID()); ok && strings.Contains(cs.ID(), ".") {
			t.Errorf("a single node's session id %q carries a replica prefix", cs.ID())
		}
		err = exercise(t.Context(), cs, 5)
	}
	if err == nil {
		t.Fatal("a legacy client worked through round robin without forwarding: the replica tests prove nothing")
	}
	t.Logf("without forwarding: %v", err)
}

// BenchmarkLegacyCallForwarded: one 2025-11-25 tools/call by a go-sdk
// client on a session of replica a, sent to a itself (direct) or, through
// a balancer that sends it to a (balancer-owner) or everything after
// initialize to b, forwarded by b to a (balancer-forwarded). The ratio of
// the last two is the cost of the extra loopback hop.
func BenchmarkLegacyCallForwarded(b *testing.B) {
	dir := &clustertest.Directory{}
	ra, rb := newReplica(b, "a", dir), newReplica(b, "b", dir)
	wrong := newBalancer(b, ra, rb)
	wrong.pick = func(r *http.Request, _ []int) int {
		if r.Header.Get("Mcp-Session-Id") == "" {
			return 0
		}
		return 1
	}
	right := newBalancer(b, ra, rb)
	right.pick = func(*http.Request, []int) int { return 0 }
	for _, bc := range []struct {
		name, base string
	}{{"direct", ra.base}, {"balancer-owner", right.srv.URL}, {"balancer-forwarded", wrong.srv.URL}} {
		b.Run(bc.name, func(b *testing.B) {
			cs, err := connectVia(b, bc.base, legacyVersion, nil)
			if err != nil {
				b.Fatal(err)
			}
			hops := ra.hops.Load()
			for b.Loop() {
				res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: "fx__echo", Arguments: map[string]any{"text": "x"}})
				if err != nil || textOf(res) != "x" {
					b.Fatalf("call: %v", err)
				}
			}
			b.ReportMetric(float64(ra.hops.Load()-hops)/float64(b.N), "hops/op")
		})
	}
}

// TestReplicasInputRequiredRound: a 2026-07-28 client's ask round (an
// input_required answer of the gateway's own, its requestState sealed)
// begins on one replica and its retry lands on the other, behind a round
// robin balancer: the retry opens there because every replica seals with
// the key derived from the cluster secret. (With a key of each replica's
// own, the retry on the other is refused and this test fails.)
func TestReplicasInputRequiredRound(t *testing.T) {
	ask := policies.Rule{Name: "ask-echo", Phase: policies.PhaseCall, Effect: policies.EffectAsk, When: `tool.name == "echo"`, Message: "echo needs a yes"}
	dir := &clustertest.Directory{}
	a, b := newReplica(t, "a", dir, ask), newReplica(t, "b", dir, ask)
	lb := newBalancer(t, a, b)
	asked := 0
	cs, err := connectVia(t, lb.srv.URL, modernVersion, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked++
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	seenA, seenB := a.seen.Load(), b.seen.Load()
	for i := range 4 {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "fx__echo", Arguments: map[string]any{"text": fmt.Sprint("round ", i)}})
		if err != nil || res.IsError || textOf(res) != fmt.Sprint("round ", i) {
			t.Fatalf("call %d through the balancer: %+v, %v", i, res, err)
		}
	}
	if asked != 4 {
		t.Errorf("the client was asked %d times, want 4", asked)
	}
	// Each call is two requests (the round and its retry), which round
	// robin sends to different replicas.
	if a.seen.Load() == seenA || b.seen.Load() == seenB {
		t.Errorf("requests a %d, b %d: the balancer did not spread the rounds", a.seen.Load()-seenA, b.seen.Load()-seenB)
	}
}

// TestClusterAuthenticatesBeforeForwarding: a request naming another
// replica's session is authenticated on the replica it reached before
// anything else: without a bearer token that verifies it is 401 there, as
// a local request is, with its body unread (a body that never ends still
// gets its 401 at once), and nothing reaches the owner's address (a
// listener there, which could be anyone's by now, sees no request, no
// client token, no proof). With alice's token it is forwarded. (Before,
// the front forwarded first and the owner authenticated: an
// unauthenticated request had up to 8 MiB of body read and was sent on
// with the replica's proof.)
func TestClusterAuthenticatesBeforeForwarding(t *testing.T) {
	dir := &clustertest.Directory{}
	a := newReplica(t, "a", dir)
	var mu sync.Mutex
	var reached []http.Header
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		reached = append(reached, r.Header.Clone())
		mu.Unlock()
		http.Error(w, "session not found", http.StatusNotFound)
	}))
	t.Cleanup(owner.Close)
	dir.Set(cluster.Replica{ID: "c", Addr: owner.URL, Seen: time.Now()})
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(reached)
	}
	post := func(body io.Reader, length int64, auth string) (*http.Response, error) {
		ctx, cancel := context.WithTimeout(t.Context(), waitBound)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, a.base+"/mcp", body)
		req.ContentLength = length
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", legacyVersion)
		req.Header.Set("Mcp-Session-Id", "c.ABCDEFGHIJKLMNOPQRSTUVWXYZ")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
		}
		return res, err
	}
	list := `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`
	for _, tc := range []struct{ name, auth string }{
		{"no token", ""},
		{"a token that is no principal's", "Bearer not-a-token-0123456789abcdef"},
		{"not a bearer token", "Basic YWxpY2U6eA=="},
	} {
		res, err := post(strings.NewReader(list), int64(len(list)), tc.auth)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if res.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: %d (WWW-Authenticate %q), want 401 with a Bearer challenge", tc.name, res.StatusCode, res.Header.Get("WWW-Authenticate"))
		}
	}
	// An 8 MiB body of which 1 KiB comes before the answer: answered at
	// once. (The pipe ends only at waitBound, so that a replica that
	// reads it first fails the test instead of hanging it.)
	pr, pw := io.Pipe()
	bound, cancel := context.WithTimeout(t.Context(), waitBound)
	defer cancel()
	go func() {
		_, _ = pw.Write(bytes.Repeat([]byte(" "), 1024))
		<-bound.Done()
		pw.CloseWithError(io.ErrUnexpectedEOF)
	}()
	res, err := post(pr, 8<<20, "")
	if err != nil {
		t.Errorf("an endless unauthenticated body: %v (the replica read it before answering)", err)
	} else if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("an endless unauthenticated body: %d, want 401", res.StatusCode)
	}
	if n := count(); n != 0 {
		t.Fatalf("%d unauthenticated requests reached the owner's address", n)
	}

	// The control: alice's request goes to the owner, with a proof.
	if _, err := post(strings.NewReader(list), int64(len(list)), "Bearer "+aliceToken); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 1 {
		t.Fatalf("alice's request reached the owner %d times, want once", n)
	}
	mu.Lock()
	h := reached[0]
	mu.Unlock()
	if h.Get(cluster.HeaderHop) != "a" || h.Get(cluster.HeaderHopAuth) == "" {
		t.Errorf("the forwarded request's hop headers: %q %q", h.Get(cluster.HeaderHop), h.Get(cluster.HeaderHopAuth))
	}
}
