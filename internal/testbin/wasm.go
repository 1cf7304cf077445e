package testbin

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ExamplePlugin builds the example plugin name (a directory of
// examples/plugins, such as "redact") for WebAssembly with the standard
// toolchain and returns the .wasm path:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o NAME.wasm ./NAME
//
// run in the examples/plugins module, found by walking up from the test's
// working directory. Builds are shared like [Build]'s: once per process,
// into the temporary directory Cleanup removes. The go command caches the
// compiled packages, so a rerun is quick.
func ExamplePlugin(tb testing.TB, name string) string {
	tb.Helper()
	return Plugin(tb, filepath.Join("examples", "plugins"), name)
}

// Plugin builds the plugin package pkg of the Go module in moduleDir (a
// directory relative to the repository root, such as
// "plugins/testdata/wasm") like [ExamplePlugin].
func Plugin(tb testing.TB, moduleDir, pkg string) string {
	tb.Helper()
	key := "wasm:" + moduleDir + ":" + pkg
	mu.Lock()
	b, ok := builds[key]
	if !ok {
		b = &build{}
		builds[key] = b
	}
	mu.Unlock()
	b.once.Do(func() { b.bin, b.err = compilePlugin(moduleDir, pkg) })
	if b.err != nil {
		tb.Fatalf("testbin: %v", b.err)
	}
	return b.bin
}

func compilePlugin(moduleDir, name string) (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	module := filepath.Join(root, moduleDir)
	out, err := output("plugin-" + name)
	if err != nil {
		return "", err
	}
	out = strings.TrimSuffix(out, ".exe") + ".wasm"
	goCmd, err := goTool()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(goCmd, "build", "-buildmode=c-shared", "-trimpath", "-o", out, "./"+name)
	cmd.Dir = module
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "GOWORK=off", "CGO_ENABLED=0")
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building the plugin %s of %s: %v\n%s", name, moduleDir, err, buf.Bytes())
	}
	return out, nil
}

// repoRoot finds the repository root (the directory holding
// examples/plugins/go.mod) at or above the working directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "examples", "plugins", "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no examples/plugins/go.mod above the working directory")
		}
		dir = parent
	}
}

// PluginCacheDir returns a compilation cache directory for plugins shared by
// the tests of this process (mode 0700, removed by Cleanup), so each module
// is compiled once per test binary rather than once per test.
func PluginCacheDir(tb testing.TB) string {
	tb.Helper()
	mu.Lock()
	d := cacheDir
	mu.Unlock()
	if d != "" {
		return d
	}
	out, err := output("plugin-cache")
	if err != nil {
		tb.Fatalf("testbin: %v", err)
	}
	if err := os.MkdirAll(out, 0o700); err != nil {
		tb.Fatalf("testbin: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if cacheDir == "" {
		cacheDir = out
	}
	return cacheDir
}

var cacheDir string // under mu; reset by Cleanup
