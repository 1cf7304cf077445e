package testbin

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var (
	mu     sync.Mutex
	dir    string // created by the first Build, removed by Cleanup
	builds = map[string]*build{}
	names  = map[string]bool{} // binary names taken in dir
)

type build struct {
	once sync.Once
	bin  string
	err  error
}

// Build compiles the main package at importPath (for example
// "github.com/mcphost/mcphost/testdata/servers/wellbehaved") with `go build`
// into a per-process temporary directory and returns the binary's path.
// Concurrent and repeated calls for the same path build once. A failure,
// including a cached one, calls tb.Fatalf with the compiler output.
//
// The go command is the one on PATH, else the one of the running toolchain
// ($GOROOT/bin/go, which `go test` sets). It runs in the test's working directory, so
// importPath must be a package of the module under test or of its
// dependencies.
func Build(tb testing.TB, importPath string) string {
	tb.Helper()
	mu.Lock()
	b, ok := builds[importPath]
	if !ok {
		b = &build{}
		builds[importPath] = b
	}
	mu.Unlock()

	b.once.Do(func() { b.bin, b.err = compile(importPath) })
	if b.err != nil {
		tb.Fatalf("testbin: %v", b.err)
	}
	return b.bin
}

func compile(importPath string) (string, error) {
	out, err := output(importPath)
	if err != nil {
		return "", fmt.Errorf("build %s: %w", importPath, err)
	}
	goCmd, err := goTool()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(goCmd, "build", "-o", out, importPath)
	var buf bytes.Buffer
	cmd.Stdout = &buf
	cmd.Stderr = &buf
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", importPath, err, buf.Bytes())
	}
	return out, nil
}

// output reserves a unique binary path for importPath in the temporary
// directory, creating the directory on first use.
func output(importPath string) (string, error) {
	mu.Lock()
	defer mu.Unlock()
	if dir == "" {
		d, err := os.MkdirTemp("", "mcphost-testbin-")
		if err != nil {
			return "", err
		}
		dir = d
	}
	base := path.Base(importPath)
	name := base
	for i := 2; names[name]; i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	names[name] = true
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	return filepath.Join(dir, name), nil
}

// GoCommand returns the go command [Build] runs, for a test that runs go
// itself; with none, the test fails.
func GoCommand(tb testing.TB) string {
	tb.Helper()
	p, err := goTool()
	if err != nil {
		tb.Fatalf("testbin: %v", err)
	}
	return p
}

func goTool() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	exe := "go"
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	// `go test` runs tests with GOROOT in the environment.
	p := filepath.Join(os.Getenv("GOROOT"), "bin", exe)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("no go command on PATH or in %s", filepath.Dir(p))
	}
	return p, nil
}

// Cleanup removes the temporary directory and forgets every build, so a later
// Build compiles again. Call it from TestMain after m.Run().
func Cleanup() {
	mu.Lock()
	defer mu.Unlock()
	if dir != "" {
		os.RemoveAll(dir)
	}
	dir = ""
	cacheDir = ""
	builds = map[string]*build{}
	names = map[string]bool{}
}
