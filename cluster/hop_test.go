package cluster_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cluster"
	"github.com/mcphost/mcphost/internal/clustertest"
)

// captured is one request as a listener at a replica's address saw it.
type captured struct {
	method, uri string
	header      http.Header
	body        []byte
}

// squatter is a listener at an address the directory gives a replica (a
// crashed replica's old address, taken by something else): it records
// every request and answers 200.
type squatter struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []captured
}

func newSquatter(t *testing.T) *squatter {
	t.Helper()
	s := &squatter{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.seen = append(s.seen, captured{r.Method, r.URL.RequestURI(), r.Header.Clone(), body})
		s.mu.Unlock()
		io.WriteString(w, "squatted")
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *squatter) requests() []captured {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]captured(nil), s.seen...)
}

// send sends c to base (another address than the one it was captured at),
// with edit applied to a copy first.
func send(t *testing.T, base string, c captured, edit func(*captured)) (*http.Response, string) {
	t.Helper()
	c.header = c.header.Clone()
	c.body = bytes.Clone(c.body)
	if edit != nil {
		edit(&c)
	}
	req, _ := http.NewRequestWithContext(t.Context(), c.method, base+c.uri, bytes.NewReader(c.body))
	for k, vs := range c.header {
		req.Header[k] = vs
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// TestHopReplay: the hop headers a forwarding replica sent to an address
// that is no longer its owner's (a squatter's) open one request at the
// real owner, within the window, and never a second one, nor another
// method, path or body. (Before, the proof was a constant HMAC of the
// sender's id: a permanent credential that opened every request, on every
// replica.)
func TestHopReplay(t *testing.T) {
	dir := &clustertest.Directory{}
	a := startReplica(t, "a", dir)
	b := startReplica(t, "b", dir)
	sq := newSquatter(t)
	dir.Set(cluster.Replica{ID: "b", Addr: sq.srv.URL, Seen: time.Now()})
	capture := func() captured {
		t.Helper()
		before := len(sq.requests())
		for deadline := time.Now().Add(5 * time.Second); ; {
			// a reads the directory again once its cached read is old.
			do(t, a.srv.URL, b.node.SessionID(), nil)
			if rs := sq.requests(); len(rs) > before {
				return rs[len(rs)-1]
			}
			if time.Now().After(deadline) {
				t.Fatal("a never forwarded to the squatter")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	c := capture()
	if c.header.Get(cluster.HeaderHop) != "a" || c.header.Get(cluster.HeaderHopAuth) == "" {
		t.Fatalf("captured hop headers %q %q", c.header.Get(cluster.HeaderHop), c.header.Get(cluster.HeaderHopAuth))
	}
	if c2 := capture(); c2.header.Get(cluster.HeaderHopAuth) == c.header.Get(cluster.HeaderHopAuth) {
		t.Error("two forwarded requests carry the same proof")
	}

	for _, tc := range []struct {
		name string
		edit func(*captured)
	}{
		{"another method", func(c *captured) { c.method = http.MethodDelete }},
		{"another path", func(c *captured) { c.uri = "/mcp/servers/admin?x=1" }},
		{"another query", func(c *captured) { c.uri = "/mcp?x=2" }},
		{"another principal", func(c *captured) { c.header.Set(cluster.HeaderHopPrincipal, "admin") }},
		{"another sender", func(c *captured) { c.header.Set(cluster.HeaderHop, "c") }},
		{"the proof of version 1", func(c *captured) { c.header.Set(cluster.HeaderHopAuth, strings.Repeat("ab", 32)) }},
	} {
		if res, body := send(t, b.srv.URL, c, tc.edit); res.StatusCode != http.StatusForbidden || res.Header.Get("X-Served-By") != "" {
			t.Errorf("%s: %d by %q (%s), want 403", tc.name, res.StatusCode, res.Header.Get("X-Served-By"), body)
		}
	}
	// The proof is still unused: the real owner takes it once.
	if res, body := send(t, b.srv.URL, c, nil); res.StatusCode != http.StatusOK || res.Header.Get("X-Served-By") != "b" {
		t.Fatalf("the captured request, first time at the owner: %d by %q (%s)", res.StatusCode, res.Header.Get("X-Served-By"), body)
	}
	if res, body := send(t, b.srv.URL, c, nil); res.StatusCode != http.StatusForbidden || res.Header.Get("X-Served-By") != "" {
		t.Errorf("the captured request replayed: %d by %q (%s), want 403", res.StatusCode, res.Header.Get("X-Served-By"), body)
	}
	// At another replica than the one it names: refused, as a session
	// that is not there.
	if res, body := send(t, a.srv.URL, capture(), nil); res.StatusCode != http.StatusNotFound || res.Header.Get("X-Served-By") != "" {
		t.Errorf("a hop for b sent to a: %d by %q (%s), want 404", res.StatusCode, res.Header.Get("X-Served-By"), body)
	}
	// Another body under the same proof: refused.
	if res, body := send(t, b.srv.URL, capture(), func(c *captured) { c.body = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`) }); res.StatusCode != http.StatusForbidden {
		t.Errorf("another body: %d (%s), want 403", res.StatusCode, body)
	}
}

// TestHopWindow: a proof is valid for HopWindow either side of the
// receiver's clock.
func TestHopWindow(t *testing.T) {
	var skew atomic.Int64
	dir := &clustertest.Directory{}
	sender := newNode(t, "a", "http://127.0.0.1:1", dir)
	srv := httptest.NewServer(nil)
	t.Cleanup(srv.Close)
	recv, err := cluster.New(cluster.Options{ID: "b", Addr: srv.URL, Directory: dir, Secret: secret,
		Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = recv.HopOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, _ := cluster.HopOf(r)
		io.WriteString(w, h.From+" for "+h.Principal)
	}))
	post := func(principal string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/_cluster/singleton/x", strings.NewReader(`{}`))
		if err := sender.SignHop(req, "b", principal); err != nil {
			t.Fatal(err)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	for _, tc := range []struct {
		name string
		skew time.Duration
		want int
	}{
		{"in time", 0, http.StatusOK},
		{"nearly late", cluster.HopWindow - 2*time.Second, http.StatusOK},
		{"late", cluster.HopWindow + time.Second, http.StatusForbidden},
		{"from the future", -cluster.HopWindow - time.Second, http.StatusForbidden},
	} {
		skew.Store(int64(tc.skew))
		if got, body := post("alice"); got != tc.want {
			t.Errorf("%s: %d (%s), want %d", tc.name, got, body, tc.want)
		} else if got == http.StatusOK && body != "a for alice" {
			t.Errorf("%s: the handler saw %q, want a for alice", tc.name, body)
		}
	}
	skew.Store(0)
	// A request that is no hop, to a hop-only front.
	res, err := http.Post(srv.URL+"/_cluster/singleton/x", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("a client's request to a hop-only front: %d, want 403", res.StatusCode)
	}
}

// TestSweep: a replica's heartbeat deletes the rows of replicas not seen
// for StaleAfter beats, and keeps the others.
func TestSweep(t *testing.T) {
	dir := &clustertest.Directory{}
	now := time.Now()
	dir.Set(cluster.Replica{ID: "crashed", Addr: "http://127.0.0.1:1", Seen: now.Add(-time.Hour)})
	dir.Set(cluster.Replica{ID: "late", Addr: "http://127.0.0.1:2", Seen: now.Add(-5 * cluster.DefaultHeartbeat)})
	n := newNode(t, "a", "http://127.0.0.1:3", dir)
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(t.Context())
	go func() { n.Run(ctx); close(done) }()
	for deadline := time.Now().Add(5 * time.Second); ; {
		if _, ok := dir.Get("crashed"); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the crashed replica's row was never swept")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	for _, id := range []string{"late", "a"} {
		if _, ok := dir.Get(id); !ok {
			t.Errorf("the row of %s was swept", id)
		}
	}
}
