package main

import (
	"context"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testbin"
)

// TestCallWaitsForApprovalSaysSo: `mcphost call` through the daemon, on
// a tool an `ask` rule pauses, says at once on stderr that it waits for a
// person to approve it in the WebShell, under which rule and for how long;
// approved, it prints the result. Interrupted (Ctrl-C) while it waits, it
// says "cancelled" and the approval is withdrawn. Before, it waited in
// silence and, killed, said "no answer from the daemon"
// (research/newcomer.md #6).
func TestCallWaitsForApprovalSaysSo(t *testing.T) {
	bin := testbin.Build(t, mcphostPkg)
	dir := t.TempDir()
	cfg := writeDaemonConfig(t, dir, "127.0.0.1:0", filepath.Join(dir, "state"), `
policy "ask-echo" {
  phase   = "call"
  effect  = "ask"
  when    = "tool.name == 'echo'"
  message = "echo needs a person"
}
`)
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer client.CloseIdleConnections()
	d := startDaemon(t, bin, cfg)
	ev := d.subscribe(t, client)
	d.waitReady(t, client, ev)

	start := func(t *testing.T) (*exec.Cmd, *lineWriter, *lineWriter) {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), bin, "call", "-config", cfg, "fx.echo", "text=approved")
		out, errOut := &lineWriter{lines: make(chan string, 16)}, &lineWriter{lines: make(chan string, 16)}
		cmd.Stdout, cmd.Stderr = out, errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), daemonBound)
		defer cancel()
		for {
			select {
			case l := <-errOut.lines:
				want := "mcphost call: waiting for a person to approve it in the WebShell at " + d.base + `/ (policy "ask-echo": echo needs a person; `
				if strings.HasPrefix(l, want) && strings.HasSuffix(l, " left, then it is denied)") {
					return cmd, out, errOut
				}
			case <-ctx.Done():
				t.Fatalf("call said nothing of the approval; stderr:\n%s", errOut.buf.String())
			}
		}
	}
	pending := func(t *testing.T) []struct {
		ID string `json:"id"`
	} {
		var list struct {
			Approvals []struct {
				ID string `json:"id"`
			} `json:"approvals"`
		}
		d.mustJSON(t, client, "GET", "/api/v1/approvals", "", 200, &list)
		return list.Approvals
	}

	t.Run("approved", func(t *testing.T) {
		cmd, out, errOut := start(t)
		p := pending(t)
		if len(p) != 1 {
			t.Fatalf("pending approvals %+v", p)
		}
		d.mustJSON(t, client, "POST", "/api/v1/approvals/"+p[0].ID, `{"decision":"approve"}`, 200, nil)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("the approved call: %v\nstderr:\n%s", err, errOut.buf.String())
		}
		if got := out.buf.String(); got != "approved\n" {
			t.Fatalf("stdout %q", got)
		}
	})

	t.Run("interrupted", func(t *testing.T) {
		cmd, _, errOut := start(t)
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitFailure {
			t.Fatalf("the interrupted call: %v, want exit status 1", err)
		}
		if !strings.HasSuffix(errOut.buf.String(), "mcphost call: cancelled\n") {
			t.Fatalf("stderr:\n%s", errOut.buf.String())
		}
		ctx, cancel := context.WithTimeout(t.Context(), daemonBound)
		defer cancel()
		for len(pending(t)) > 0 { // the daemon sees the request end
			select {
			case <-ctx.Done():
				t.Fatal("the approval of the cancelled call is still pending")
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
}
