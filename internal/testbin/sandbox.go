package testbin

import (
	"os"
	"testing"
)

// SandboxDir returns a new directory that a contained server may be
// granted whatever uid it runs as (mode 0777 directly under the system's
// temporary directory: t.TempDir's are 0700 and so closed to the sandbox
// uid when tests run as root). It is removed when the test ends.
func SandboxDir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.MkdirTemp("", "mcphost-sandboxed-")
	if err != nil {
		tb.Fatalf("testbin: %v", err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		tb.Fatalf("testbin: %v", err)
	}
	return dir
}
