package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/fixture"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// reloadConfig is a config of the wellbehaved fixture under several names;
// each %[1]q is the fixture's path.
const reloadConfigA = `
server "keep" {
  command = %[1]q
}
server "change" {
  command = %[1]q
  env     = { TAG = "one" }
}
server "drop" {
  command = %[1]q
}
policy "no-add" {
  phase  = "call"
  effect = "deny"
  when   = "tool.name == 'add'"
}
`

// reloadConfigB keeps "keep" (moved in the file: same block), changes
// "change", drops "drop", adds "new", and swaps the policy.
const reloadConfigB = `
server "new" {
  command = %[1]q
}
server "change" {
  command = %[1]q
  env     = { TAG = "two" }
}

# keep moved below, with a comment: still the same server.
server "keep" {
  command = %[1]q
}
policy "no-echo-on-change" {
  phase   = "call"
  effect  = "deny"
  when    = "server == 'change' && tool.name == 'echo'"
  message = "not here"
}
`

func parseReload(t *testing.T, src, bin string) *config.Config {
	t.Helper()
	cfg, diags := config.Parse([]byte(fmt.Sprintf(src, bin)), "reload.hcl", config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return cfg
}

// TestReload swaps a config while calls run on every server: the unchanged
// server keeps its process and never fails a call, a call in flight on a
// removed server finishes, the changed and new servers are ready before the
// swap, the new policies apply at once, and the replaced processes end.
func TestReload(t *testing.T) {
	bin := testbin.Build(t, wellbehavedPkg)
	st, err := store.Open(t.Context(), t.TempDir()+"/m.db", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h, err := host.New(parseReload(t, reloadConfigA, bin), host.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	h.Start(t.Context())
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	settle, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := h.WaitSettled(settle); err != nil {
		t.Fatal(err)
	}
	pids := map[string]int{}
	for _, name := range []string{"keep", "change", "drop"} {
		st := mustStatus(t, h, name)
		if st.State != host.StateReady || st.PID == 0 {
			t.Fatalf("%s: %+v", name, st)
		}
		pids[name] = st.PID
	}
	// Another principal sees the config and server events but not alice's
	// thousands of call events, which would overflow its buffer.
	events, unsubscribe, err := h.Subscribe(host.Caller{Principal: host.Principal{Name: "observer"}})
	if err != nil {
		t.Fatal(err)
	}
	defer unsubscribe()

	p := host.Principal{Name: "alice", Groups: []string{}}
	sess, err := h.CreateSession(t.Context(), p, "reload")
	if err != nil {
		t.Fatal(err)
	}
	sessionCall := func(server, tool, args string) (*store.Entry, error) {
		return h.Call(t.Context(), host.SessionCall{Principal: p, SessionID: sess.ID, Server: server, Tool: tool,
			Arguments: json.RawMessage(args), Origin: host.OriginAPI})
	}

	// A slow call on "drop", in flight when the config loses it: the
	// reload comes after its call_started event.
	started, stopWatching, err := h.Subscribe(host.Caller{Principal: host.Principal{Name: "alice"}})
	if err != nil {
		t.Fatal(err)
	}
	slow := make(chan error, 1)
	go func() {
		e, err := sessionCall("drop", "slow", `{"ms":1500}`)
		if err == nil && e.Status != store.StatusOK {
			err = fmt.Errorf("status %s: %s", e.Status, e.Error)
		}
		slow <- err
	}()
	for ev := range started {
		if cs, ok := ev.Data.(host.CallStarted); ok && cs.Tool == "slow" {
			break
		}
	}
	stopWatching()

	// Calls on "keep" all through the reload.
	stop := make(chan struct{})
	var calls, failures atomic.Int64
	var firstFailure atomic.Value
	waitCalls := func(n int64) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for calls.Load() < n && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if calls.Load() < n {
			t.Fatalf("only %d calls on the unchanged server, want %d", calls.Load(), n)
		}
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				e, err := sessionCall("keep", "echo", fmt.Sprintf(`{"text":"w%d-%d"}`, w, i))
				calls.Add(1)
				if err == nil && e.Status != store.StatusOK {
					err = fmt.Errorf("status %s: %s", e.Status, e.Error)
				}
				if err != nil {
					failures.Add(1)
					firstFailure.CompareAndSwap(nil, err.Error())
				}
			}
		})
	}
	waitCalls(20)

	res, err := h.Reload(t.Context(), parseReload(t, reloadConfigB, bin))
	if err != nil {
		t.Fatal(err)
	}
	want := host.ReloadPlan{Kept: []string{"keep"}, Started: []string{"new", "change"}, Stopped: []string{"change", "drop"}, Policies: 1}
	got := host.ReloadPlan{Kept: res.Kept, Started: res.Started, Stopped: res.Stopped, Policies: res.Policies, Plugins: res.Plugins, Ignored: res.Ignored}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("reload result (-want +got):\n%s", diff)
	}

	// The new generation is in force at once, with its servers ready.
	if got := serverNamesOf(h); got != "new change keep" {
		t.Errorf("servers after the reload: %s", got)
	}
	for _, name := range []string{"new", "change"} {
		if st := mustStatus(t, h, name); st.State != host.StateReady {
			t.Errorf("%s is %s right after the reload, want ready (started before the swap)", name, st.State)
		}
	}
	if st := mustStatus(t, h, "keep"); st.PID != pids["keep"] {
		t.Errorf("keep's process changed from %d to %d: an unchanged server was restarted", pids["keep"], st.PID)
	}
	if st := mustStatus(t, h, "change"); st.PID == pids["change"] {
		t.Error("change kept its process although its block changed")
	}
	if got := textOf(call(t, h, "change", "env", `{"name":"TAG"}`)); !strings.Contains(got, "two") {
		t.Errorf("change's TAG is %q, want the new block's two", got)
	}
	if _, err := h.CallTool(t.Context(), host.CallToolRequest{Server: "drop", Tool: "echo", Arguments: json.RawMessage(`{"text":"x"}`)}); !host.IsNotFound(err) {
		t.Errorf("a call of the removed server: %v, want an unknown server", err)
	}
	call(t, h, "keep", "add", `{"a":1,"b":2}`) // the old rule is gone
	var pe *host.PolicyError
	if _, err := h.CallTool(t.Context(), host.CallToolRequest{Server: "change", Tool: "echo", Arguments: json.RawMessage(`{"text":"x"}`)}); !errors.As(err, &pe) || pe.Rule != "no-echo-on-change" {
		t.Errorf("echo on change: %v, want denied by no-echo-on-change", err)
	}

	// The call in flight on the removed server finished normally.
	if err := <-slow; err != nil {
		t.Errorf("the call in flight on the removed server: %v", err)
	}
	waitCalls(calls.Load() + 20) // and the unchanged server goes on answering
	close(stop)
	wg.Wait()
	if n := failures.Load(); n > 0 {
		t.Errorf("%d of %d calls on the unchanged server failed across the reload; first: %v", n, calls.Load(), firstFailure.Load())
	}

	// The replaced processes end once the old generation has drained.
	for _, name := range []string{"change", "drop"} {
		deadline := time.Now().Add(30 * time.Second)
		for syscall.Kill(pids[name], 0) == nil && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		assertGone(t, pids[name])
	}

	// Subscribers heard of it.
	timeout := time.After(10 * time.Second)
	for {
		var ev host.Event
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatal("the subscription was dropped")
			}
			ev = e
		case <-timeout:
			t.Fatal("no config event")
		}
		if ev.Type == host.EventConfig {
			if r, ok := ev.Data.(host.ReloadPlan); !ok || len(r.Started) != 2 {
				t.Errorf("config event data %#v", ev.Data)
			}
			break
		}
	}
}

// TestReloadFailureKeepsConfig: a config the host cannot build (a plugin
// that does not load) changes nothing; the running servers and policies go
// on, and a later good reload works.
func TestReloadFailureKeepsConfig(t *testing.T) {
	bin := testbin.Build(t, wellbehavedPkg)
	h, err := host.New(parseReload(t, reloadConfigA, bin), host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h.Start(t.Context())
	t.Cleanup(func() { h.Close() })
	settle, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := h.WaitSettled(settle); err != nil {
		t.Fatal(err)
	}
	keep := mustStatus(t, h, "keep").PID

	bad := parseReload(t, reloadConfigB+`
plugin "broken" {
  path   = "`+t.TempDir()+`/missing.wasm"
  stages = ["result"]
}
`, bin)
	_, err = h.Reload(t.Context(), bad)
	var pe *host.PluginLoadError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "missing.wasm") {
		t.Fatalf("reload with a missing plugin: %v, want a PluginLoadError naming the file", err)
	}
	if got := serverNamesOf(h); got != "keep change drop" {
		t.Errorf("servers after a failed reload: %s, want the old ones", got)
	}
	if mustStatus(t, h, "keep").PID != keep {
		t.Error("a failed reload restarted a server")
	}
	var polErr *host.PolicyError
	if _, err := h.CallTool(t.Context(), host.CallToolRequest{Server: "keep", Tool: "add", Arguments: json.RawMessage(`{"a":1,"b":2}`)}); !errors.As(err, &polErr) {
		t.Errorf("add after a failed reload: %v, want the old policy's denial", err)
	}
	if _, err := h.Reload(t.Context(), parseReload(t, reloadConfigB, bin)); err != nil {
		t.Fatalf("a good reload after a failed one: %v", err)
	}
	call(t, h, "keep", "add", `{"a":1,"b":2}`)
}

func serverNamesOf(h *host.Host) string {
	var names []string
	for _, s := range h.Servers() {
		names = append(names, s.Name)
	}
	return strings.Join(names, " ")
}

// TestRetiredRemoteServerClosesConnections: when a reload removes a remote
// server, its HTTP connections are closed once it stops, not left to the
// keep-alive timeout (90 s). The fixture counts the connections it holds.
func TestRetiredRemoteServerClosesConnections(t *testing.T) {
	var mu sync.Mutex
	open := map[net.Conn]bool{}
	srv := httptest.NewUnstartedServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fixture.NewServer() }, nil))
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch s {
		case http.StateNew:
			open[c] = true
		case http.StateClosed, http.StateHijacked:
			delete(open, c)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	openConns := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(open)
	}

	bin := testbin.Build(t, wellbehavedPkg)
	remote := remoteServer("remote", config.TransportStreamableHTTP, srv.URL)
	h := startHost(t, host.Options{}, remote, stdioServer("local", bin))
	var wg sync.WaitGroup
	for range 4 { // several at once, so that more than one connection opens
		wg.Go(func() { call(t, h, "remote", "slow", `{"ms":50}`) })
	}
	wg.Wait()
	if openConns() == 0 {
		t.Fatal("the fixture saw no connection")
	}

	if _, err := h.Reload(t.Context(), &config.Config{Servers: []config.Server{stdioServer("local", bin)}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second) // far below the 90 s keep-alive timeout
	for openConns() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := openConns(); n > 0 {
		t.Errorf("%d connections of the removed server are still open", n)
	}
}
