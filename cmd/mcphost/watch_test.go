package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testbin"
)

// writeAtomic replaces path through a rename, as editors do.
func writeAtomic(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// waitLog waits until the daemon's stderr has n lines holding msg.
func (d *daemon) waitLog(t *testing.T, msg string, n int) {
	t.Helper()
	deadline := time.Now().Add(daemonBound)
	for strings.Count(d.stderr.String(), msg) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d lines with %q within %s, want %d\nstderr:\n%s", strings.Count(d.stderr.String(), msg), msg, daemonBound, n, d.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDaemonWatchConfig: with watch_config = true the daemon reloads its
// file when it changes. A half-written file is reported once, and not
// tried again while its content stays the same; the next good content
// applies; and watch_config = false stops the watching.
func TestDaemonWatchConfig(t *testing.T) {
	bin := testbin.Build(t, mcphostPkg)
	fixture := testbin.Build(t, wellbehavedPkg)
	dir := t.TempDir()
	cfg := writeDaemonConfig(t, dir, "127.0.0.1:0", filepath.Join(dir, "state"), "\nwatch_config = true\n")
	original, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer client.CloseIdleConnections()
	d := startDaemon(t, bin, cfg)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("daemon stderr:\n%s", d.stderr.String())
		}
	})
	ev := d.subscribe(t, client)
	fx := d.waitReady(t, client, ev)

	// An edit that adds a server: reloaded without a signal.
	withFx2 := append(original, fmt.Sprintf("\nserver \"fx2\" {\n  command = %q\n}\n", fixture)...)
	writeAtomic(t, cfg, withFx2)
	data := ev.wait(t, "config", func(map[string]any) bool { return true })
	if fmt.Sprint(data["kept"]) != "[fx]" || fmt.Sprint(data["added"]) != "[fx2]" {
		t.Errorf("config event after the edit: %v, want fx kept and fx2 added", data)
	}

	// Half of a write: reported once.
	const failed = "config reload failed; the running config stays in force"
	const skipped = "holds what failed to reload last"
	half := withFx2[:len(withFx2)-8]
	if err := os.WriteFile(cfg, half, 0o644); err != nil {
		t.Fatal(err)
	}
	d.waitLog(t, failed, 1)
	// The same bytes again with a new modification time: not tried again.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(cfg, later, later); err != nil {
		t.Fatal(err)
	}
	d.waitLog(t, skipped, 1)
	if n := strings.Count(d.stderr.String(), failed); n != 1 {
		t.Errorf("the half-written file was reloaded %d times, want once\nstderr:\n%s", n, d.stderr.String())
	}

	// The rest of the write, and watching turned off.
	off := bytes.Replace(withFx2, []byte("watch_config = true"), []byte("watch_config = false"), 1)
	if err := os.WriteFile(cfg, off, 0o644); err != nil {
		t.Fatal(err)
	}
	data = ev.wait(t, "config", func(map[string]any) bool { return true })
	if fmt.Sprint(data["kept"]) != "[fx fx2]" || fmt.Sprint(data["settings"]) != "[watch_config]" {
		t.Errorf("config event after the rest of the write: %v, want fx and fx2 kept and watch_config changed", data)
	}
	var list struct {
		Servers []serverStatus `json:"servers"`
	}
	d.mustJSON(t, client, "GET", "/api/v1/servers", "", 200, &list)
	if len(list.Servers) != 2 || list.Servers[0].PID != fx.PID || list.Servers[1].Status != "ready" {
		t.Errorf("servers: %+v, want fx still pid %d and fx2 ready", list.Servers, fx.PID)
	}
	if n := strings.Count(d.stderr.String(), failed); n != 1 {
		t.Errorf("%d failed reloads, want the one of the half-written file\nstderr:\n%s", n, d.stderr.String())
	}
	d.stop(t, syscall.SIGINT)
}
