package testbin

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

var (
	interopOnce sync.Once
	interopErr  error
)

// Interop returns the absolute path of the module's testdata/interop (the
// npm packages of the interoperability tests) once pkg is installed under
// it; root is the module root relative to the test's package directory
// (".." for a top-level package). When pkg is missing it runs npm ci once
// per process, or, under CI (which must run every test), fails; without
// node on PATH it fails under CI and skips elsewhere.
func Interop(tb testing.TB, root, pkg string) string {
	tb.Helper()
	dir, err := filepath.Abs(filepath.Join(root, "testdata", "interop"))
	if err != nil {
		tb.Fatal(err)
	}
	manifest := filepath.Join(dir, "node_modules", pkg, "package.json")
	install := "npm ci --prefix " + dir + " --no-audit --no-fund"
	if _, err := os.Stat(manifest); err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("%s is not installed (%v); run: %s", pkg, err, install)
		}
		interopOnce.Do(func() {
			npm, err := exec.LookPath("npm")
			if err != nil {
				interopErr = err
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, npm, "ci", "--prefix", dir, "--no-audit", "--no-fund")
			if out, err := cmd.CombinedOutput(); err != nil {
				interopErr = fmt.Errorf("%v\n%s", err, out)
			}
		})
		if interopErr != nil {
			tb.Skipf("%s is not installed and npm ci failed (%v); run: %s", pkg, interopErr, install)
		}
		if _, err := os.Stat(manifest); err != nil {
			tb.Skipf("%s is still missing after npm ci (%v); run: %s", pkg, err, install)
		}
	}
	if _, err := exec.LookPath("node"); err != nil {
		NeedInterop(tb, "node is not on PATH (%v): the interoperability tests run %s with Node.js", err, pkg)
	}
	return dir
}

// NeedInterop fails the test under CI (which must run every test) and skips
// it elsewhere.
func NeedInterop(tb testing.TB, format string, args ...any) {
	tb.Helper()
	if os.Getenv("CI") != "" {
		tb.Fatalf(format, args...)
	}
	tb.Skipf(format, args...)
}
