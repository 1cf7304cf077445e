package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/mcphost/mcphost/cluster"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/clustertest"
)

// addrDir is a directory of replicas whose reads give some replicas
// another address than the one they registered: the address a proxy in
// the test listens at.
type addrDir struct {
	*clustertest.Directory
	mu   sync.Mutex
	addr map[string]string
}

func (d *addrDir) Replicas(ctx context.Context) ([]cluster.Replica, error) {
	rs, err := d.Directory.Replicas(ctx)
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range rs {
		if a, ok := d.addr[rs[i].ID]; ok {
			rs[i].Addr = a
		}
	}
	return rs, err
}

// wiretap is a streaming proxy that records every request it passes on:
// what someone on the path between two replicas sees.
type wiretap struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []*http.Request // with their bodies read into body
	body map[*http.Request][]byte
}

func newWiretap(t *testing.T, target string) *wiretap {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	w := &wiretap{body: map[*http.Request][]byte{}}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.FlushInterval = -1
	w.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		w.mu.Lock()
		c := r.Clone(context.Background())
		w.seen = append(w.seen, c)
		w.body[c] = b
		w.mu.Unlock()
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		proxy.ServeHTTP(rw, r)
	}))
	t.Cleanup(w.srv.Close)
	return w
}

// find returns the requests whose JSON-RPC method is method.
func (w *wiretap) find(method string) []*http.Request {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*http.Request
	for _, r := range w.seen {
		if r.Method == http.MethodPost && strings.Contains(string(w.body[r]), `"method":"`+method+`"`) {
			out = append(out, r)
		}
	}
	return out
}

// replay sends r, as captured, to base.
func (w *wiretap) replay(t *testing.T, base string, r *http.Request) (int, string) {
	t.Helper()
	w.mu.Lock()
	body := w.body[r]
	w.mu.Unlock()
	req, _ := http.NewRequestWithContext(t.Context(), r.Method, base+r.URL.RequestURI(), bytes.NewReader(body))
	req.Header = r.Header.Clone()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestSingletonRelayHop: b reaches the singleton server a runs through a
// path someone taps. A call b makes for alice is recorded in the shared
// transcript as hers and in the holder's audit log as a relayed call of
// hers from b. What the tap captured opens nothing at a: not the call
// (the server does not run it again), not b's initialize (which before
// closed b's live relay session: a's relay took it for b reconnecting).
// A request a replica signs for nobody gets no call through.
func TestSingletonRelayHop(t *testing.T) {
	_, dsn := clusterDB(t)
	dir := &addrDir{Directory: &clustertest.Directory{}, addr: map[string]string{}}
	srv := elicitServer(t, config.NegotiationLegacy)
	srv.Placement = config.PlacementSingleton
	a := startSingletonReplica(t, dsn, "a", dir, srv)
	waitRunsOn(t, a, "ask", "a")
	tap := newWiretap(t, a.base)
	dir.mu.Lock()
	dir.addr["a"] = tap.srv.URL
	dir.mu.Unlock()
	b := startSingletonReplica(t, dsn, "b", dir, srv)
	waitRunsOn(t, b, "ask", "a")

	count := func(r singletonReplica) string {
		t.Helper()
		sess, err := r.h.CreateSession(t.Context(), alice, "")
		if err != nil {
			t.Fatal(err)
		}
		e, err := r.h.Call(t.Context(), host.SessionCall{Principal: alice, SessionID: sess.ID, Server: "ask", Tool: "count", Arguments: json.RawMessage(`{}`), Origin: host.OriginUser})
		if err != nil {
			t.Fatalf("count on %s: %v", r.id, err)
		}
		if got, err := r.st.Entry(t.Context(), "alice", e.ID); err != nil || got.Principal != "alice" {
			t.Fatalf("count on %s: entry %+v, %v; want alice's", r.id, got, err)
		}
		var res struct {
			Content []struct{ Text string } `json:"content"`
		}
		_ = json.Unmarshal(e.Result, &res)
		if len(res.Content) != 1 {
			t.Fatalf("count on %s: %s", r.id, e.Result)
		}
		return res.Content[0].Text
	}
	if got := count(b); got != "1" {
		t.Fatalf("first count, on b: %s", got)
	}

	// The holder recorded the relayed call, with its principal and the
	// replica that made it.
	audit, err := a.st.AuditLog(t.Context(), "alice", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var relayed int
	for _, r := range audit {
		if r.Phase == host.PhaseRelay {
			relayed++
			if r.Server != "ask" || r.Tool != "count" || !strings.Contains(r.Reason, "replica b") || r.Error {
				t.Errorf("the holder's record of the relayed call: %+v", r)
			}
		}
	}
	if relayed != 1 {
		t.Errorf("%d relay records in alice's audit log, want 1: %+v", relayed, audit)
	}

	// Replays of what the tap saw, straight to the holder.
	calls, inits := tap.find("tools/call"), tap.find("initialize")
	if len(calls) != 1 || len(inits) != 1 {
		t.Fatalf("the tap saw %d calls and %d initialize requests, want 1 and 1", len(calls), len(inits))
	}
	if got := calls[0].Header.Get(cluster.HeaderHopPrincipal); got != "alice" {
		t.Errorf("the relayed call names principal %q, want alice", got)
	}
	if code, body := tap.replay(t, a.base, calls[0]); code != http.StatusForbidden {
		t.Errorf("the captured call replayed: %d %s, want 403", code, body)
	}
	if code, body := tap.replay(t, a.base, inits[0]); code != http.StatusForbidden {
		t.Errorf("the captured initialize replayed: %d %s, want 403", code, body)
	}
	// b's relay session is the one it had: the next call goes through it,
	// and the server counted neither replay.
	if got := count(b); got != "2" {
		t.Errorf("count on b after the replays: %s, want 2", got)
	}
	if n := len(tap.find("initialize")); n != 1 {
		t.Errorf("b initialized %d relay sessions, want 1 (its session was closed)", n)
	}

	// A replica's request for nobody: refused by the holder.
	x, err := cluster.New(cluster.Options{ID: "x", Addr: "http://127.0.0.1:1", Directory: dir, Secret: []byte(singletonSecret)})
	if err != nil {
		t.Fatal(err)
	}
	var sid string
	post := func(body, principal string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, a.base+host.RelayPath+"ask", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		if err := x.SignHop(req, "a", principal); err != nil {
			t.Fatal(err)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if s := res.Header.Get("Mcp-Session-Id"); s != "" {
			sid = s
		}
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`, ""); code != http.StatusOK || sid == "" {
		t.Fatalf("x's initialize: %d %s", code, body)
	}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "")
	if code, body := post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count","arguments":{}}}`, ""); code != http.StatusOK || !strings.Contains(body, "only for a principal") {
		t.Errorf("a call for nobody: %d %s, want the relay's refusal", code, body)
	}
	if got := count(b); got != "3" {
		t.Errorf("count on b after the call for nobody: %s, want 3 (it never reached the server)", got)
	}
}
