package testbin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// ExamplePlugin builds the example plugin name (a directory of
// examples/plugins, such as "redact") for WebAssembly like [Plugin] and
// returns the .wasm path.
func ExamplePlugin(tb testing.TB, name string) string {
	tb.Helper()
	return Plugin(tb, filepath.Join("examples", "plugins"), name)
}

// Plugin builds the plugin package pkg of the Go module in moduleDir (a
// directory relative to the repository root, such as
// "plugins/testdata/wasm", found by walking up from the test's working
// directory) for WebAssembly with the standard toolchain and returns the
// .wasm path. The command, run in the module directory, is
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -o PKG.wasm ./PKG
//
// The .wasm is kept under the user's cache directory
// ($XDG_CACHE_HOME/mcphost-test-wasm/HASH/PKG.wasm, see [os.UserCacheDir]),
// in a directory named by a hash of what the build depends on (the toolchain version, pkg and every
// go.mod, go.sum and .go file of the module), so a rerun with the same
// sources builds nothing. Calls are shared like [Build]'s: once per process
// and package. A failure calls tb.Fatalf with the compiler output.
func Plugin(tb testing.TB, moduleDir, pkg string) string {
	tb.Helper()
	return wasmBuild(tb, moduleDir, pkg, true)
}

// WasmCommand is [Plugin] for a WASI command (a plain GOOS=wasip1 build,
// a program with a main that runs once), such as a WebAssembly MCP server
// on stdio.
func WasmCommand(tb testing.TB, moduleDir, pkg string) string {
	tb.Helper()
	return wasmBuild(tb, moduleDir, pkg, false)
}

func wasmBuild(tb testing.TB, moduleDir, pkg string, reactor bool) string {
	tb.Helper()
	key := fmt.Sprintf("wasm:%s:%s:%t", moduleDir, pkg, reactor)
	mu.Lock()
	b, ok := builds[key]
	if !ok {
		b = &build{}
		builds[key] = b
	}
	mu.Unlock()
	b.once.Do(func() { b.bin, b.err = compilePlugin(moduleDir, pkg, reactor) })
	if b.err != nil {
		tb.Fatalf("testbin: %v", b.err)
	}
	return b.bin
}

func compilePlugin(moduleDir, pkg string, reactor bool) (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	module := filepath.Join(root, moduleDir)
	goCmd, err := goTool()
	if err != nil {
		return "", err
	}
	key, err := sourceHash(module, pkg)
	if err != nil {
		return "", fmt.Errorf("hash the sources of %s/%s: %w", moduleDir, pkg, err)
	}
	// The file keeps the package's name (`mcphost plugin run` names a
	// plugin after its file).
	dir := filepath.Join(wasmCacheDir(), key)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	name := pkg
	if !reactor {
		name += "-command"
	}
	out := filepath.Join(dir, name+".wasm")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	// Build next to the cached file and rename: test processes running in
	// parallel may build the same plugin, and none may see half a file.
	tmp, err := os.CreateTemp(dir, pkg+"-*.tmp")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	args := []string{"build", "-trimpath", "-o", tmp.Name(), "./" + pkg}
	if reactor {
		args = append(args[:1], append([]string{"-buildmode=c-shared"}, args[1:]...)...)
	}
	cmd := exec.Command(goCmd, args...)
	cmd.Dir = module
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "GOWORK=off", "CGO_ENABLED=0")
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building the plugin %s of %s: %v\n%s", pkg, moduleDir, err, buf.Bytes())
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return "", err
	}
	return out, nil
}

// wasmCacheDir is where built plugins are kept across test runs.
func wasmCacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "mcphost-test-wasm")
	}
	return filepath.Join(os.TempDir(), "mcphost-test-wasm")
}

// sourceHash hashes what the build of pkg in module depends on: the
// toolchain version, the package path and every go.mod, go.sum and .go file
// of the module (the examples share an internal package).
func sourceHash(module, pkg string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s %s/%s wasip1/wasm c-shared trimpath %s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, pkg)
	var files []string
	err := filepath.WalkDir(module, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if n := d.Name(); !d.IsDir() && (n == "go.mod" || n == "go.sum" || strings.HasSuffix(n, ".go")) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	slices.Sort(files)
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(module, f)
		fmt.Fprintf(h, "%s\n", filepath.ToSlash(rel))
		_, err = io.Copy(h, fh)
		fh.Close()
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
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

// WasmServerCacheDir is a compilation cache for WebAssembly servers kept
// across test runs and shared by the packages that start them (under the
// user's cache directory, like the built modules): compiling a go-sdk
// server takes about ten seconds, and twenty times that under -race.
func WasmServerCacheDir(tb testing.TB) string {
	tb.Helper()
	d := filepath.Join(wasmCacheDir(), "wasmserver-compiled")
	if err := os.MkdirAll(d, 0o700); err != nil {
		tb.Fatalf("testbin: %v", err)
	}
	return d
}
