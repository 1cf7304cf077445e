package webshell_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestWebShellModules runs the node unit tests of the WebShell's pure
// modules (testdata/js/*.test.mjs, with node --test): what a browser test
// would reach only end to end. Node is required in CI.
func TestWebShellModules(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is required in CI")
		}
		t.Skipf("node is not installed: %v", err)
	}
	files, err := filepath.Glob(filepath.Join("testdata", "js", "*.test.mjs"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no module tests found (%v)", err)
	}
	cmd := exec.CommandContext(t.Context(), node, append([]string{"--test"}, files...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
}
