package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// dumpableChildEnv makes the test binary, started by
// TestServeMarksNonDumpable, run serve itself and report its dumpable flag.
const dumpableChildEnv = "MCPHOST_TEST_DUMPABLE_CHILD"

// TestServeMarksNonDumpable runs serve in a process of its own (the test
// binary again: a non-dumpable test process would stay so for every later
// test) and checks that serve leaves the process non-dumpable, so another
// process of the same user cannot read its /proc/PID/environ.
func TestServeMarksNonDumpable(t *testing.T) {
	if dir := os.Getenv(dumpableChildEnv); dir != "" {
		dumpableChild(dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeMarksNonDumpable$", "-test.count=1")
	cmd.Env = append(os.Environ(), dumpableChildEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "dumpable before serve: 1, after: 0\n") {
		t.Errorf("the child's report is not that serve cleared the flag:\n%s", out)
	}
}

// dumpableChild is the child's side: it runs serve with a context that is
// already cancelled, and prints the flag before and after. The flag is
// cleared first, before the config is read, so serve stopping at the
// cancelled context (opening the store) does not matter.
func dumpableChild(dir string) {
	before, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	if err != nil {
		fmt.Println("PR_GET_DUMPABLE:", err)
		return
	}
	cfg := filepath.Join(dir, "mcphost.hcl")
	src := fmt.Sprintf("listen = \"127.0.0.1:0\"\ndata_dir = %q\n", filepath.Join(dir, "state"))
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	run(ctx, []string{"serve", "-config", cfg}, strings.NewReader(""), io.Discard, io.Discard)
	after, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	if err != nil {
		fmt.Println("PR_GET_DUMPABLE:", err)
		return
	}
	fmt.Printf("dumpable before serve: %d, after: %d\n", before, after)
}
