package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/mcphost/mcphost/internal/testbin"
)

// TestLogsAndRestart: `mcphost logs SERVER` prints a server's log
// messages (and stderr tail) from the daemon; -f goes on printing what is
// new (the message of a later call, once) until interrupted; `mcphost restart
// SERVER` asks the daemon for a new session, after which the server is
// ready again. Both need a daemon, and say so.
func TestLogsAndRestart(t *testing.T) {
	bin := testbin.Build(t, mcphostPkg)
	misbehave := testbin.Build(t, "github.com/mcphost/mcphost/testdata/servers/misbehave")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcphost.hcl")
	src := fmt.Sprintf("listen = \"127.0.0.1:0\"\ndata_dir = %q\n\nserver \"fx\" {\n  command = %q\n  args    = [\"-mode\", \"log-flood\"]\n}\n", filepath.Join(dir, "state"), misbehave)
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer client.CloseIdleConnections()
	d := startDaemon(t, bin, cfg)
	ev := d.subscribe(t, client)
	d.waitReady(t, client, ev)

	flood := func() {
		t.Helper()
		if code, out, errOut := runCLI(t, bin, "call", "-config", cfg, "fx.flood", `{"n": 1}`); code != 0 {
			t.Fatalf("call fx.flood: %d\n%s%s", code, out, errOut)
		}
	}
	logLine := regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d info \[fixture\] fixture: log message 000001$`)
	flood()
	code, out, errOut := runCLI(t, bin, "logs", "-config", cfg, "fx")
	if code != 0 || !logLine.MatchString(out) {
		t.Fatalf("logs fx: %d\n%s%s", code, out, errOut)
	}

	// -f: the follower prints the tail, then a log message of a later call.
	ctx, cancel := context.WithTimeout(t.Context(), daemonBound)
	defer cancel()
	follow := exec.CommandContext(ctx, bin, "logs", "-f", "-config", cfg, "fx")
	lines := &lineWriter{lines: make(chan string, 64)}
	follow.Stdout = lines
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	waitLine := func(re *regexp.Regexp) {
		t.Helper()
		for {
			select {
			case l := <-lines.lines:
				if re.MatchString(l) {
					return
				}
			case <-ctx.Done():
				t.Fatalf("logs -f printed no line matching %s; it printed:\n%s", re, lines.buf.String())
			}
		}
	}
	waitLine(logLine) // the message already there
	flood()
	waitLine(logLine) // the new one
	if err := follow.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := follow.Wait(); err != nil {
		t.Fatalf("logs -f after an interrupt: %v", err)
	}
	if n := len(logLine.FindAllString(lines.buf.String(), -1)); n != 2 {
		t.Errorf("logs -f printed the log message %d times, want twice (the old one and the new one):\n%s", n, lines.buf.String())
	}

	code, out, errOut = runCLI(t, bin, "restart", "-config", cfg, "fx")
	if code != 0 || out != "restart of fx requested (`mcphost servers` shows its state)\n" {
		t.Fatalf("restart fx: %d\n%s%s", code, out, errOut)
	}
	d.waitReady(t, client, ev)

	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"restart", "-config", cfg, "nosuch"}, 1, `nosuch`},
		{[]string{"logs", "-config", cfg, "nosuch"}, 1, `nosuch`},
		{[]string{"restart", "-config", cfg, "-local", "fx"}, 2, "mcphost restart: acts on the servers of a running daemon; -local has none\n"},
		{[]string{"logs", "-config", cfg}, 2, "usage: mcphost logs "},
		{[]string{"logs", "-config", filepath.Join(dir, "elsewhere.hcl"), "fx"}, 2, "elsewhere.hcl"},
	} {
		code, _, errOut := runCLI(t, bin, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.err) {
			t.Errorf("mcphost %v: %d %q, want %d and %q", tc.args, code, errOut, tc.code, tc.err)
		}
	}
}

func TestNewLines(t *testing.T) {
	for _, tc := range []struct {
		name      string
		prev, cur []string
		want      int
	}{
		{"first read", nil, []string{"a", "b"}, 0},
		{"nothing new", []string{"a", "b"}, []string{"a", "b"}, 2},
		{"two new", []string{"a", "b"}, []string{"a", "b", "c", "d"}, 2},
		{"the tail moved on", []string{"a", "b", "c"}, []string{"b", "c", "d"}, 2},
		{"all new", []string{"a", "b"}, []string{"x", "y"}, 0},
		{"a repeated line", []string{"a", "a"}, []string{"a", "a", "a"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := newLines(tc.prev, tc.cur); got != tc.want {
				t.Errorf("newLines(%q, %q) = %d, want %d", tc.prev, tc.cur, got, tc.want)
			}
		})
	}
}
