package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testbin"
)

// TestDaemonReloadSIGHUP runs the real daemon with calls going through the
// API, and reloads its config with SIGHUP: a good config adds a server and
// a policy without touching the running server or failing a call; a broken
// one is reported on stderr with its position and changes nothing. Every
// acknowledged call is in the transcript afterwards.
func TestDaemonReloadSIGHUP(t *testing.T) {
	bin := testbin.Build(t, mcphostPkg)
	fixture := testbin.Build(t, wellbehavedPkg)
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "state")
	cfg := writeDaemonConfig(t, dir, "127.0.0.1:0", dataDir, "")
	original, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer client.CloseIdleConnections()

	d := startDaemon(t, bin, cfg)
	ev := d.subscribe(t, client)
	fx := d.waitReady(t, client, ev)
	var sess struct {
		ID string `json:"id"`
	}
	d.mustJSON(t, client, "POST", "/api/v1/sessions", `{"title":"reload"}`, 201, &sess)
	callPath := "/api/v1/sessions/" + sess.ID + "/calls"

	// Callers on fx for the whole test.
	ctx, cancel := context.WithTimeout(context.Background(), daemonBound)
	defer cancel()
	stop := make(chan struct{})
	var acked, failed atomic.Int64
	var firstFailure atomic.Value
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				status, b, err := d.request(ctx, client, "POST", callPath, fmt.Sprintf(`{"server":"fx","tool":"echo","arguments":{"text":"w%d-%d"}}`, w, i))
				if err == nil && status == 200 {
					acked.Add(1)
					continue
				}
				failed.Add(1)
				firstFailure.CompareAndSwap(nil, fmt.Sprintf("status %d, %v: %s", status, err, b))
			}
		})
	}
	// stopCallers ends the callers, also when the test fails half-way.
	stopCallers := sync.OnceFunc(func() {
		close(stop)
		wg.Wait()
	})
	defer stopCallers()
	waitAcked := func(n int64) {
		t.Helper()
		deadline := time.Now().Add(daemonBound)
		for acked.Load() < n {
			if time.Now().After(deadline) {
				t.Fatalf("%d calls acknowledged within %s, want %d (%d failed; first: %v)\nstderr:\n%s",
					acked.Load(), daemonBound, n, failed.Load(), firstFailure.Load(), d.stderr.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitAcked(20)

	// A good config: fx unchanged, a second server, a policy.
	extra := fmt.Sprintf(`
server "fx2" {
  command = %q
}

policy "no-add" {
  phase   = "call"
  effect  = "deny"
  when    = "tool.name == 'add'"
  message = "no adding after the reload"
}
`, fixture)
	if err := os.WriteFile(cfg, append(original, extra...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	data := ev.wait(t, "config", func(map[string]any) bool { return true })
	if fmt.Sprint(data["kept"]) != "[fx]" || fmt.Sprint(data["started"]) != "[fx2]" || data["policies"] != 1.0 {
		t.Errorf("config event %v, want fx kept, fx2 started, one policy", data)
	}
	var list struct {
		Servers []serverStatus `json:"servers"`
	}
	d.mustJSON(t, client, "GET", "/api/v1/servers", "", 200, &list)
	if len(list.Servers) != 2 || list.Servers[0].Name != "fx" || list.Servers[0].PID != fx.PID ||
		list.Servers[1].Name != "fx2" || list.Servers[1].Status != "ready" {
		t.Errorf("servers after the reload: %+v; want fx still pid %d, fx2 ready", list.Servers, fx.PID)
	}
	status, b, err := d.request(ctx, client, "POST", callPath, `{"server":"fx","tool":"add","arguments":{"a":1,"b":2}}`)
	if err != nil || status != 403 || !strings.Contains(string(b), "no adding after the reload") {
		t.Errorf("add after the reload: %d %v %s, want 403 from the new policy", status, err, b)
	}
	d.mustJSON(t, client, "POST", callPath, `{"server":"fx2","tool":"echo","arguments":{"text":"new"}}`, 200, nil)
	before := acked.Load()
	waitAcked(before + 20)

	// A broken config: reported with its position, and nothing changes.
	if err := os.WriteFile(cfg, append(original, "\nserver \"bad\" {\n  command = 42x\n}\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(daemonBound)
	for !strings.Contains(d.stderr.String(), "config reload failed") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	logs := d.stderr.String()
	if !strings.Contains(logs, "config reload failed; the running config stays in force") || !strings.Contains(logs, "mcphost.hcl:") {
		t.Errorf("a broken config on SIGHUP: want the diagnostic with its file position and the failure logged; stderr:\n%s", logs)
	}
	d.mustJSON(t, client, "GET", "/api/v1/servers", "", 200, &list)
	if len(list.Servers) != 2 || list.Servers[0].PID != fx.PID {
		t.Errorf("servers after a failed reload: %+v", list.Servers)
	}
	before = acked.Load()
	waitAcked(before + 20)

	stopCallers()
	if n := failed.Load(); n > 0 {
		t.Errorf("%d calls failed across the reloads (%d acknowledged); first: %v", n, acked.Load(), firstFailure.Load())
	}
	var sessions struct {
		Sessions []struct {
			ID      string `json:"id"`
			Entries int    `json:"entries"`
		} `json:"sessions"`
	}
	d.mustJSON(t, client, "GET", "/api/v1/sessions", "", 200, &sessions)
	// acked echo calls on fx, plus the denied add and the echo on fx2.
	if len(sessions.Sessions) != 1 || int64(sessions.Sessions[0].Entries) != acked.Load()+2 {
		t.Errorf("sessions %+v, want one with %d entries", sessions.Sessions, acked.Load()+2)
	}

	d.stop(t, syscall.SIGINT)
}
