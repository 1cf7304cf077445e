package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/pipeline"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// trapTools are the tools of trapServer. The hostile plugin in mode "tool"
// does what the tool's name says: "count" answers, the others trap (a Go
// panic), return a non-zero status without a message, or fail with one.
var trapTools = []string{"count", "panic", "rc", "fail"}

// trapServer serves one tool per trapTools entry over Streamable HTTP; each
// answers "secret from NAME", which a failing plugin must never let through.
func trapServer(t *testing.T) *httptest.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "traps", Version: "1"}, nil)
	for _, name := range trapTools {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "secret from " + name}}}, nil
			})
	}
	return httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
}

// TestPluginStartsTrappingUnderLoad runs a result plugin (pool of 4) under
// 8 concurrent callers in three phases: every call clean, then three in
// four calls making the plugin trap or fail, then every call clean again.
// Every call is answered and recorded: with on_error = "fail" a failing
// plugin fails its call with an error naming the plugin and never lets the
// unprocessed result through; with "skip" the call succeeds with the
// result unchanged and the trail records the error. Calls the plugin
// handles cleanly succeed in every phase, the pool serves the last phase
// with fresh instances, and once the host and server are closed no
// goroutine is left behind. plugins' TestPanicTraps, TestOnErrorFailAndSkip
// and TestHammer cover the pool alone; host's TestPluginFailure one call.
func TestPluginStartsTrappingUnderLoad(t *testing.T) {
	wasm := testbin.Plugin(t, "plugins/testdata/wasm", "hostile")
	for _, onError := range []string{config.PluginOnErrorFail, config.PluginOnErrorSkip} {
		t.Run(onError, func(t *testing.T) {
			baseline := runtime.NumGoroutine()
			srv := trapServer(t)
			cfg, diags := config.Parse([]byte(fmt.Sprintf(`
plugin "flaky" {
  path      = %q
  stages    = ["result"]
  config    = { mode = "tool" }
  on_error  = %q
  pool_size = 4
  timeout   = "10s"
}
`, wasm, onError)), "flaky.hcl", config.Options{})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			cfg.Servers = []config.Server{remoteServer("traps", config.TransportStreamableHTTP, srv.URL)}
			st, err := store.Open(t.Context(), t.TempDir()+"/m.db", nil)
			if err != nil {
				t.Fatal(err)
			}
			h, err := host.New(cfg, host.Options{Store: st, PluginCacheDir: testbin.PluginCacheDir(t)})
			if err != nil {
				t.Fatal(err)
			}
			closed := false
			closeAll := func() {
				if closed {
					return
				}
				closed = true
				if err := h.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
				st.Close()
				srv.CloseClientConnections()
				srv.Close()
			}
			t.Cleanup(closeAll)
			ctx, cancel := context.WithTimeout(t.Context(), faultWait)
			defer cancel()
			h.Start(ctx)
			if err := h.WaitSettled(ctx); err != nil {
				t.Fatal(err)
			}
			if s := mustStatus(t, h, "traps"); s.State != host.StateReady {
				t.Fatalf("traps: %s (%s)", s.State, s.LastError)
			}
			sess, err := h.CreateSession(ctx, alice, "traps")
			if err != nil {
				t.Fatal(err)
			}

			const workers, perWorker = 8, 8
			var mu sync.Mutex
			recorded := map[string]bool{}
			// phase runs workers×perWorker calls, worker w's i-th call to
			// tools[(w+i) % len(tools)], and checks each outcome.
			phase := func(name string, tools []string) (answered map[string]int) {
				answered = map[string]int{}
				var wg sync.WaitGroup
				for w := range workers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := range perWorker {
							tool := tools[(w+i)%len(tools)]
							e, err := h.Call(ctx, host.SessionCall{Principal: alice, SessionID: sess.ID, Server: "traps", Tool: tool})
							if err != nil {
								t.Errorf("%s: %s: %v, want an entry", name, tool, err)
								continue
							}
							if msg := checkTrapEntry(e, tool, onError); msg != "" {
								t.Errorf("%s: %s: %s", name, tool, msg)
							}
							mu.Lock()
							recorded[e.ID] = true
							answered[tool]++
							mu.Unlock()
						}
					}()
				}
				wg.Wait()
				if ctx.Err() != nil {
					t.Fatalf("%s: calls did not end within %s", name, faultWait)
				}
				return answered
			}
			phase("clean", []string{"count"})
			got := phase("trapping", trapTools)
			t.Logf("trapping phase: %v", got)
			phase("recovered", []string{"count"})

			// Every call is in the transcript.
			ids := entryIDs(t, h, sess.ID)
			if len(ids) != 3*workers*perWorker || len(recorded) != len(ids) {
				t.Errorf("%d entries stored, %d answered, want %d", len(ids), len(recorded), 3*workers*perWorker)
			}
			for _, id := range ids {
				if !recorded[id] {
					t.Errorf("stored entry %s was never returned", id)
				}
			}

			closeAll()
			// No goroutine outlives the host, the store and the server.
			// Polling is the only way to see goroutines end; the bound
			// only keeps a leak from hanging the test.
			deadline := time.Now().Add(faultWait)
			for runtime.NumGoroutine() > baseline {
				if time.Now().After(deadline) {
					buf := make([]byte, 1<<20)
					t.Fatalf("%d goroutines after closing, %d before starting:\n%s", runtime.NumGoroutine(), baseline, buf[:runtime.Stack(buf, true)])
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// checkTrapEntry checks the entry of one call to tool; "" means it is
// right. It runs on the callers' goroutines, so it reports instead of
// failing the test.
func checkTrapEntry(e *store.Entry, tool, onError string) string {
	var tr pipeline.Trail
	if err := json.Unmarshal(e.Trail, &tr); err != nil {
		return fmt.Sprintf("trail %s: %v", e.Trail, err)
	}
	if len(tr.Plugins) != 1 || tr.Plugins[0].Plugin != "flaky" {
		return fmt.Sprintf("trail %+v, want one run of flaky", tr)
	}
	run := tr.Plugins[0]
	secret := strings.Contains(string(e.Result), "secret from")
	switch {
	case tool == "count":
		if e.Status != store.StatusOK || run.Error != "" || !strings.Contains(string(e.Result), "calls=") || secret {
			return fmt.Sprintf("status %s error %q result %s trail %+v, want the plugin's clean answer", e.Status, e.Error, e.Result, run)
		}
	case onError == config.PluginOnErrorFail:
		if e.Status != store.StatusError || secret || !strings.Contains(e.Error, "flaky") || run.Error == "" {
			return fmt.Sprintf("status %s error %q result %s, want an error naming the plugin and no result", e.Status, e.Error, e.Result)
		}
	default: // skip
		if e.Status != store.StatusOK || !strings.Contains(string(e.Result), "secret from "+tool) || !run.Skipped || run.Error == "" {
			return fmt.Sprintf("status %s result %s trail %+v, want the unchanged result and a skipped run with its error", e.Status, e.Result, run)
		}
	}
	return ""
}
