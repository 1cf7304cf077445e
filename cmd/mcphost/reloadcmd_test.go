package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/mcphost/mcphost/internal/testbin"
)

// runCLI runs `mcphost ARGS...` to completion (bounded by daemonBound)
// without $MCPHOST_TOKEN, and returns its exit code and output.
func runCLI(t *testing.T, bin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), daemonBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, tokenEnv+"=") })
	var out, errOut syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("mcphost %v: %v", args, err)
	}
	return code, out.String(), errOut.String()
}

// rows returns the whitespace-separated fields of each line of out.
func rows(out string) [][]string {
	var rs [][]string
	for _, line := range strings.Split(out, "\n") {
		rs = append(rs, strings.Fields(line))
	}
	return rs
}

// hasRow reports whether out has a line whose first fields are fields.
func hasRow(out string, fields ...string) bool {
	for _, r := range rows(out) {
		if len(r) >= len(fields) && slices.Equal(r[:len(fields)], fields) {
			return true
		}
	}
	return false
}

type reloadPlanJSON struct {
	From    string   `json:"from"`
	To      string   `json:"to"`
	DryRun  bool     `json:"dry_run"`
	Kept    []string `json:"kept"`
	Added   []string `json:"added"`
	Started []string `json:"started"`
}

// TestDaemonReloadCommand runs the real daemon and drives it with
// `mcphost reload` (the owner token from data_dir): a dry run prints the
// plan and changes nothing, a reload applies it with the running server
// untouched, and a config with errors is refused with the diagnostics at
// their positions, in text and as JSON; one that reads a variable the
// daemon does not have is planned (the plan names it) but refused.
func TestDaemonReloadCommand(t *testing.T) {
	bin := testbin.Build(t, mcphostPkg)
	fixture := testbin.Build(t, wellbehavedPkg)
	dir := t.TempDir()
	cfg := writeDaemonConfig(t, dir, "127.0.0.1:0", filepath.Join(dir, "state"), "")
	original, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer client.CloseIdleConnections()
	d := startDaemon(t, bin, cfg)
	ev := d.subscribe(t, client)
	fx := d.waitReady(t, client, ev)
	var running struct {
		Hash string `json:"hash"`
		File string `json:"file"`
	}
	d.mustJSON(t, client, "GET", "/api/v1/config", "", 200, &running)
	if running.File != cfg || !strings.HasPrefix(running.Hash, "sha256:") {
		t.Fatalf("GET /api/v1/config = %+v, want file %s and a hash", running, cfg)
	}
	reload := func(args ...string) (int, string, string) {
		t.Helper()
		return runCLI(t, bin, append([]string{"reload", "-config", cfg, "-url", d.base}, args...)...)
	}
	servers := func() []serverStatus {
		var list struct {
			Servers []serverStatus `json:"servers"`
		}
		d.mustJSON(t, client, "GET", "/api/v1/servers", "", 200, &list)
		return list.Servers
	}

	if err := os.WriteFile(cfg, append(original, fmt.Sprintf("\nserver \"fx2\" {\n  command = %q\n}\n", fixture)...), 0o644); err != nil {
		t.Fatal(err)
	}

	// A dry run: the plan, and nothing changes.
	code, out, errOut := reload("-dry-run")
	if code != 0 || !strings.Contains(out, "Dry run") || !hasRow(out, "fx", "kept") || !hasRow(out, "fx2", "added") || !hasRow(out, "policies", "unchanged") {
		t.Errorf("reload -dry-run: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	code, out, errOut = reload("-dry-run", "-json")
	var plan reloadPlanJSON
	if err := json.Unmarshal([]byte(out), &plan); code != 0 || err != nil {
		t.Fatalf("reload -dry-run -json: exit %d, %v\nstdout:\n%s\nstderr:\n%s", code, err, out, errOut)
	}
	if !plan.DryRun || plan.From != running.Hash || plan.To == running.Hash || fmt.Sprint(plan.Kept) != "[fx]" || fmt.Sprint(plan.Added) != "[fx2]" {
		t.Errorf("dry run plan %+v, want fx kept and fx2 added, from %s", plan, running.Hash)
	}
	if ss := servers(); len(ss) != 1 {
		t.Errorf("servers after a dry run: %+v, want fx alone", ss)
	}
	var now struct {
		Hash string `json:"hash"`
	}
	d.mustJSON(t, client, "GET", "/api/v1/config", "", 200, &now)
	if now.Hash != running.Hash {
		t.Errorf("a dry run changed the config in force: %s, was %s", now.Hash, running.Hash)
	}

	// The reload: fx keeps its process, fx2 is ready when it answers.
	code, out, errOut = reload()
	if code != 0 || !strings.Contains(out, "Reloaded.") || !hasRow(out, "fx", "kept") || !hasRow(out, "fx2", "added") {
		t.Errorf("reload: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	data := ev.wait(t, "config", func(map[string]any) bool { return true })
	if fmt.Sprint(data["added"]) != "[fx2]" || data["to"] != plan.To {
		t.Errorf("config event %v, want fx2 added and the config %s", data, plan.To)
	}
	if ss := servers(); len(ss) != 2 || ss[0].PID != fx.PID || ss[1].Name != "fx2" || ss[1].Status != "ready" {
		t.Errorf("servers after the reload: %+v, want fx still pid %d and fx2 ready", ss, fx.PID)
	}
	// Again: the file is the config in force.
	if code, out, _ = reload("-dry-run"); code != 0 || !strings.Contains(out, "would change nothing") {
		t.Errorf("reload -dry-run of the config in force: exit %d\n%s", code, out)
	}

	// A config with errors: refused, with the position and the line.
	broken := append(original, "\nserver \"bad\" {\n  call_timeout = \"soon\"\n  command      = \"x\"\n}\n"...)
	if err := os.WriteFile(cfg, broken, 0o644); err != nil {
		t.Fatal(err)
	}
	line := strings.Count(string(original), "\n") + 3
	code, out, errOut = reload()
	if code != 2 || !strings.Contains(errOut, fmt.Sprintf("%s:%d:", cfg, line)) || !strings.Contains(errOut, `call_timeout = "soon"`) || out != "" {
		t.Errorf("reload of a config with errors: exit %d, want 2 with %s:%d and its line\nstdout:\n%s\nstderr:\n%s", code, cfg, line, out, errOut)
	}
	code, out, _ = reload("-dry-run", "-json")
	var diags struct {
		Valid       bool `json:"valid"`
		Diagnostics []struct {
			Severity string `json:"severity"`
			Range    struct {
				Filename string `json:"filename"`
				Start    struct {
					Line int `json:"line"`
				} `json:"start"`
			} `json:"range"`
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal([]byte(out), &diags); code != 2 || err != nil || diags.Valid || len(diags.Diagnostics) == 0 ||
		diags.Diagnostics[0].Range.Filename != cfg || diags.Diagnostics[0].Range.Start.Line != line {
		t.Errorf("reload -dry-run -json of a config with errors: exit %d, %v: %s", code, err, out)
	}
	if ss := servers(); len(ss) != 2 || ss[0].PID != fx.PID {
		t.Errorf("servers after a refused reload: %+v", ss)
	}

	// A variable the daemon does not have (issue 31 row 6): a dry run
	// still shows its plan and names the call; a reload refuses the file.
	unset := append(original, "\nserver \"gh\" {\n  command = \"x\"\n  env     = { T = env(\"MCPHOST_TEST_RELOAD_UNSET\") }\n}\n"...)
	if err := os.WriteFile(cfg, unset, 0o644); err != nil {
		t.Fatal(err)
	}
	line = strings.Count(string(original), "\n") + 4
	want := fmt.Sprintf(`env("MCPHOST_TEST_RELOAD_UNSET") ("env" of server "gh", %s:%d)`, cfg, line)
	code, out, errOut = reload("-dry-run")
	if code != 0 || !hasRow(out, "gh", "added") || !strings.Contains(out, "Not set in the daemon's environment") || !strings.Contains(out, want) {
		t.Errorf("reload -dry-run with an unset variable: exit %d, want the plan and %s\nstdout:\n%s\nstderr:\n%s", code, want, out, errOut)
	}
	// The plan says that gh's command is nowhere the daemon can find it.
	if !strings.Contains(out, `warning: server gh: command "x" is not on the daemon's PATH: it cannot start as it is`) {
		t.Errorf("reload -dry-run of a server whose command does not exist: no warning\nstdout:\n%s", out)
	}
	code, out, errOut = reload()
	if code != 2 || !strings.Contains(errOut, "error: Environment variable not set") || out != "" {
		t.Errorf("reload with an unset variable: exit %d, want 2 and the error\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	// A server that takes a while to start: the reload says what it waits
	// for while it waits.
	slow := testbin.Build(t, "github.com/mcphost/mcphost/testdata/servers/misbehave")
	if err := os.WriteFile(cfg, append(original, fmt.Sprintf("\nserver \"late\" {\n  command = %q\n  args    = [\"-mode\", \"slow-init\", \"-delay\", \"2500ms\"]\n}\n", slow)...), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = reload()
	if code != 0 || !hasRow(out, "late", "added") || !strings.Contains(errOut, "mcphost reload: the daemon connects the new and changed servers before it switches to the new config") {
		t.Errorf("reload of a slow server: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	// Without -url, the config's listen (port 0 here) cannot say where the
	// daemon is.
	if code, _, errOut = runCLI(t, bin, "reload", "-config", cfg); code != 2 || !strings.Contains(errOut, "-url") {
		t.Errorf("reload with listen port 0 and no -url: exit %d: %s", code, errOut)
	}
	d.stop(t, syscall.SIGINT)
}
