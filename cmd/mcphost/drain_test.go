package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testbin"
)

// TestDaemonDrain stops the real daemon with SIGTERM while a call runs:
// /readyz turns 503 "draining" at once while /healthz stays 200; a new
// call through the API is refused with 503 and the replica's name, a new
// 2026-07-28 tools/call through the gateway too; the running call
// completes normally; then the process exits 0, well before its grace
// period (the drain ends when the last call has finished).
func TestDaemonDrain(t *testing.T) {
	bin := testbin.Build(t, mcphostPkg)
	dir := t.TempDir()
	cfg := writeDaemonConfig(t, dir, "127.0.0.1:0", filepath.Join(dir, "state"), "")
	readyFile := filepath.Join(dir, "ready")
	const grace = 90 * time.Second // much longer than the call: the drain must not wait it out
	d := startDaemon(t, bin, cfg, "-replica-id", "drain-1", "-ready-file", readyFile, "-shutdown-grace", grace.String())
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer client.CloseIdleConnections()

	if b, err := os.ReadFile(readyFile); err != nil || strings.TrimSpace(string(b)) != d.base {
		t.Fatalf("ready file = %q, %v; want %s", b, err, d.base)
	}
	probe := func(path string) (int, map[string]any) {
		t.Helper()
		res, err := client.Get(d.base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(res.Body).Decode(&body)
		return res.StatusCode, body
	}
	if code, body := probe("/readyz"); code != 200 || body["status"] != "ready" || body["replica"] != "drain-1" {
		t.Fatalf("/readyz before: %d %v", code, body)
	}
	if code, body := probe("/healthz"); code != 200 || body["replica"] != "drain-1" {
		t.Fatalf("/healthz: %d %v", code, body)
	}

	ev := d.subscribe(t, client)
	d.waitReady(t, client, ev)
	var sess struct {
		ID string `json:"id"`
	}
	d.mustJSON(t, client, "POST", "/api/v1/sessions", `{"title":"drain"}`, 201, &sess)
	callPath := "/api/v1/sessions/" + sess.ID + "/calls"
	ctx, cancel := context.WithTimeout(context.Background(), daemonBound)
	defer cancel()
	type answer struct {
		status int
		body   []byte
		err    error
	}
	long := make(chan answer, 1)
	go func() {
		status, b, err := d.request(ctx, client, "POST", callPath, `{"server":"fx","tool":"slow","arguments":{"ms":4000},"callId":"long"}`)
		long <- answer{status, b, err}
	}()
	ev.wait(t, "progress", func(s map[string]any) bool { return s["callId"] == "long" })

	start := time.Now()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The signal is handled asynchronously: wait for the flip (bounded by
	// daemonBound), then check everything while the call still runs.
	for {
		code, body := probe("/readyz")
		if code == http.StatusServiceUnavailable {
			if body["status"] != "draining" || body["replica"] != "drain-1" {
				t.Errorf("/readyz draining: %v", body)
			}
			break
		}
		if time.Since(start) > daemonBound {
			t.Fatalf("/readyz still %d after SIGTERM", code)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code, _ := probe("/healthz"); code != 200 {
		t.Errorf("/healthz while draining: %d, want 200", code)
	}
	status, b, err := d.request(ctx, client, "POST", callPath, `{"server":"fx","tool":"echo","arguments":{"text":"late"}}`)
	if err != nil || status != http.StatusServiceUnavailable || !strings.Contains(string(b), "mcphost replica drain-1 is draining, retry") {
		t.Errorf("a new API call while draining: %d %s %v; want 503 naming the replica", status, b, err)
	}
	req, _ := http.NewRequestWithContext(ctx, "POST", d.base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fx__echo","arguments":{"text":"late"}}}`))
	req.Header.Set("Authorization", "Bearer "+d.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "fx__echo")
	if res, err := client.Do(req); err != nil {
		t.Errorf("gateway call while draining: %v", err)
	} else {
		var body struct {
			Error struct{ Message string } `json:"error"`
		}
		_ = json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body.Error.Message, "drain-1 is draining") {
			t.Errorf("a new gateway call while draining: %d %+v; want 503 naming the replica", res.StatusCode, body)
		}
	}

	a := <-long
	var e daemonEntry
	if a.err != nil || a.status != 200 || json.Unmarshal(a.body, &e) != nil || e.Status != "ok" {
		t.Fatalf("the running call: %d %s %v; want its ok entry", a.status, a.body, a.err)
	}
	select {
	case <-d.exited:
	case <-time.After(daemonBound):
		t.Fatalf("the daemon did not exit after its last call\nstderr:\n%s", d.stderr.String())
	}
	if d.err != nil {
		t.Errorf("exit: %v, want 0\nstderr:\n%s", d.err, d.stderr.String())
	}
	if took := time.Since(start); took >= grace {
		t.Errorf("the daemon stopped %s after SIGTERM: it waited out the grace period instead of the call", took)
	}
	if _, err := os.Stat(readyFile); !os.IsNotExist(err) {
		t.Errorf("the ready file is still there after exit (%v)", err)
	}
}
