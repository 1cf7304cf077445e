package main

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/mcphost/mcphost/internal/fixture"
	"github.com/mcphost/mcphost/internal/testbin"
)

// TestCLIThroughDaemon runs the real daemon and the client commands beside
// it on the same config: they find the daemon through data_dir, so a call
// lands in its transcript (the principal's "mcphost CLI" session) and no
// server starts twice; resources and prompts are read and got through it;
// -local runs one-shot and records nothing; once the daemon has stopped,
// the commands run locally again.
func TestCLIThroughDaemon(t *testing.T) {
	bin := testbin.Build(t, mcphostPkg)
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "state")
	cfg := writeDaemonConfig(t, dir, "127.0.0.1:0", dataDir, "")
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer client.CloseIdleConnections()
	d := startDaemon(t, bin, cfg)
	ev := d.subscribe(t, client)
	fx := d.waitReady(t, client, ev)
	if b, err := os.ReadFile(filepath.Join(dataDir, daemonFile)); err != nil || strings.TrimSpace(string(b)) != d.base {
		t.Fatalf("%s = %q, %v; want %s", daemonFile, b, err, d.base)
	}
	cli := func(args ...string) (int, string, string) {
		t.Helper()
		return runCLI(t, bin, append(args[:1:1], append([]string{"-config", cfg, "-v"}, args[1:]...)...)...)
	}
	cliEntries := func() int {
		var ss struct {
			Sessions []struct {
				Title   string `json:"title"`
				Entries int    `json:"entries"`
			} `json:"sessions"`
		}
		d.mustJSON(t, client, "GET", "/api/v1/sessions", "", 200, &ss)
		for _, s := range ss.Sessions {
			if s.Title == cliSessionTitle {
				return s.Entries
			}
		}
		return 0
	}

	tests := []struct {
		name    string
		args    []string
		code    int
		stdout  string // a substring of stdout
		entries int    // entries of the CLI session afterwards
	}{
		{"servers", []string{"servers"}, 0, "fx ", 0},
		{"tools", []string{"tools", "fx"}, 0, "fx.echo", 0},
		{"one tool", []string{"tools", "fx.add"}, 0, "input schema:", 0},
		{"call", []string{"call", "fx.echo", "text=through the daemon"}, 0, "through the daemon", 1},
		{"call JSON", []string{"call", "fx.add", `{"a": 2, "b": 3}`}, 0, "5", 2},
		{"call typed pairs", []string{"call", "fx.add", "a=4", "b=5"}, 0, "9", 3},
		{"call error result", []string{"call", "fx.fail"}, 1, fixture.FailText, 4},
		{"call unknown tool", []string{"call", "fx.nope"}, 2, "", 4},
		{"resources", []string{"resources", "fx"}, 0, fixture.ReadmeURI, 4},
		{"read", []string{"resources", "read", "fx", fixture.ReadmeURI}, 0, strings.TrimSpace(fixture.ReadmeText), 5},
		{"read template", []string{"resources", "read", "fx", "fixture://items/7"}, 0, "item 7", 6},
		{"read missing", []string{"resources", "read", "fx", "fixture://items/"}, 2, "", 7},
		{"prompts", []string{"prompts"}, 0, "fx.greet", 7},
		{"get prompt", []string{"prompts", "get", "fx.greet", "name=Ada"}, 0, "user: Hello, Ada!", 8},
		{"local call", []string{"call", "-local", "fx.echo", "text=one-shot"}, 0, "one-shot", 8},
	}
	for _, tt := range tests {
		code, out, errOut := cli(tt.args...)
		if code != tt.code || !strings.Contains(out, tt.stdout) {
			t.Errorf("%s: mcphost %v: exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", tt.name, tt.args, code, tt.code, tt.stdout, out, errOut)
			continue
		}
		local := slices.Contains(tt.args, "-local")
		if through := strings.Contains(errOut, "through the daemon at "+d.base+" (it serves data_dir "+dataDir+") as owner (the owner token in data_dir)"); through == local {
			t.Errorf("%s: through the daemon %v, want %v\nstderr:\n%s", tt.name, through, !local, errOut)
		}
		if local && !strings.Contains(errOut, "running in-process as owner (-local)") {
			t.Errorf("%s: -local does not say it runs in-process\nstderr:\n%s", tt.name, errOut)
		}
		if n := cliEntries(); n != tt.entries {
			t.Errorf("%s: the CLI session has %d entries, want %d", tt.name, n, tt.entries)
		}
	}
	// A long call shows its progress as the daemon hears it (a line per
	// change here; one rewritten line on a terminal).
	if code, out, errOut := cli("call", "fx.slow", "ms=1500"); code != 0 || !strings.Contains(out, "slept 1500 ms") || !strings.Contains(errOut, "progress: ") {
		t.Errorf("a slow call through the daemon: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	// The server was never started a second time.
	if now := d.waitReady(t, client, ev); now.PID != fx.PID {
		t.Errorf("fx has pid %d, was %d", now.PID, fx.PID)
	}

	// A principal's token that the daemon does not know: the CLI fails
	// with the ways out, instead of running locally behind the daemon's
	// back; -local runs it in-process.
	other := writeDaemonConfig(t, t.TempDir(), "127.0.0.1:0", dataDir, "\nprincipal \"mallory\" {\n  token = \"mallory-0123456789abcdef\"\n}\n")
	code, out, errOut := runCLI(t, bin, "call", "-config", other, "-as", "mallory", "fx.echo", "text=local")
	if code != 1 || out != "" || !strings.Contains(errOut, `does not accept the token of "mallory"`) || !strings.Contains(errOut, "or run in-process with -local") {
		t.Errorf("call as a principal the daemon does not know: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, bin, "call", "-config", other, "-as", "mallory", "-local", "fx.echo", "text=local")
	if code != 0 || !strings.Contains(out, "local") {
		t.Errorf("call -local as mallory: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	// An explicit -daemon that does not answer fails instead.
	code, _, errOut = runCLI(t, bin, "servers", "-config", cfg, "-daemon", "http://127.0.0.1:1")
	if code != 1 || !strings.Contains(errOut, "no answer from the daemon") {
		t.Errorf("servers -daemon with nobody there: exit %d\nstderr:\n%s", code, errOut)
	}

	// Stopped: the file is gone and the commands run locally.
	d.stop(t, syscall.SIGTERM)
	if _, err := os.Stat(filepath.Join(dataDir, daemonFile)); !os.IsNotExist(err) {
		t.Errorf("after the daemon stopped, %s: %v; want it gone", daemonFile, err)
	}
	if err := os.WriteFile(filepath.Join(dataDir, daemonFile), []byte(d.base+"\n"), 0o644); err != nil {
		t.Fatal(err) // a kill -9 leaves the file behind: a stale one
	}
	code, out, errOut = runCLI(t, bin, "call", "-config", cfg, "fx.echo", "text=after")
	if code != 0 || !strings.Contains(out, "after") {
		t.Errorf("call with a stale %s: exit %d\nstdout:\n%s\nstderr:\n%s", daemonFile, code, out, errOut)
	}
}
