package host_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testbin"
)

// filesystemPkg is the official filesystem server, which takes its allowed
// directories from the client's roots (pinned in testdata/interop).
const filesystemPkg = "@modelcontextprotocol/server-filesystem"

// eventually calls the tool until its text satisfies ok, for at most a
// minute: the filesystem server asks for the roots on its own after
// initialize and after roots/list_changed, so there is no answer to wait
// for but the tool's.
func eventually(t *testing.T, h *host.Host, server, tool, args string, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		got := textOf(call(t, h, server, tool, args))
		if ok(got) || time.Now().After(deadline) {
			return got
		}
		<-tick.C
	}
}

// TestRootsFilesystemServer: server-filesystem, started without
// directories, works in the roots of its server block; a reload that
// changes them moves it: unsandboxed, the same process hears
// roots/list_changed; contained, a new process starts with the new roots
// as its grants (the old one could not reach them).
func TestRootsFilesystemServer(t *testing.T) {
	for _, tc := range []struct {
		mode    string
		restart bool
	}{{config.SandboxOff, false}, {config.SandboxEnforce, true}} {
		t.Run(tc.mode, func(t *testing.T) { rootsFilesystemServer(t, tc.mode, tc.restart) })
	}
}

func rootsFilesystemServer(t *testing.T, mode string, restart bool) {
	interop := testbin.Interop(t, "..", filesystemPkg)
	index := filepath.Join(interop, "node_modules", filesystemPkg, "dist", "index.js")
	// Directories the sandbox uid can be granted (t.TempDir's are not).
	a, b := testbin.SandboxDir(t), testbin.SandboxDir(t)
	if err := os.WriteFile(filepath.Join(a, "note.txt"), []byte("in a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b, "note.txt"), []byte("in b"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := stdioServer("fs", "node", index)
	s.Roots = []string{"file://" + a}
	s.Sandbox.Mode = mode
	s.Sandbox.Read = []string{interop}
	h := startHost(t, host.Options{}, s)
	if st := mustStatus(t, h, "fs"); st.State != host.StateReady {
		t.Fatalf("fs is %s: %s", st.State, st.LastError)
	}
	real := func(dir string) string {
		r, err := filepath.EvalSymlinks(dir)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if got := eventually(t, h, "fs", "list_allowed_directories", `{}`, func(s string) bool { return strings.Contains(s, real(a)) }); !strings.Contains(got, real(a)) {
		t.Fatalf("allowed directories %q, want the root %s", got, a)
	}
	if got := textOf(call(t, h, "fs", "read_text_file", `{"path":"`+filepath.Join(a, "note.txt")+`"}`)); got != "in a" {
		t.Fatalf("read in the root: %q", got)
	}
	res := call(t, h, "fs", "read_text_file", `{"path":"`+filepath.Join(b, "note.txt")+`"}`)
	if !res.IsError {
		t.Fatalf("read outside the roots: %q, want a refusal", textOf(res))
	}
	pid := mustStatus(t, h, "fs").PID

	s.Roots = []string{"file://" + b}
	plan, err := h.Reload(t.Context(), &config.Config{Servers: []config.Server{s}})
	if err != nil {
		t.Fatal(err)
	}
	if restart && len(plan.Restarted) != 1 || !restart && len(plan.Kept) != 1 {
		t.Fatalf("plan %+v, want fs restarted: %v", plan.Servers, restart)
	}
	got := eventually(t, h, "fs", "list_allowed_directories", `{}`, func(s string) bool {
		return strings.Contains(s, real(b)) && !strings.Contains(s, real(a))
	})
	if !strings.Contains(got, real(b)) || strings.Contains(got, real(a)) {
		t.Fatalf("allowed directories after the reload %q, want only %s", got, b)
	}
	if got := textOf(call(t, h, "fs", "read_text_file", `{"path":"`+filepath.Join(b, "note.txt")+`"}`)); got != "in b" {
		t.Fatalf("read in the new root: %q", got)
	}
	if same := mustStatus(t, h, "fs").PID == pid; same == restart {
		t.Errorf("same process after the reload: %v, want %v", same, !restart)
	}
}
