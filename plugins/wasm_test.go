package plugins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Wasm fixtures are built from source with the standard toolchain, once per
// test binary, and cached by a hash of their sources under
// $XDG_CACHE_HOME/mcphost-test-wasm (os.UserCacheDir), so reruns skip the
// build. The command, run in the fixture's module directory, is
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -o NAME.wasm ./PKG
var fixtures = map[string]struct{ module, pkg string }{
	"redact":    {"../examples/plugins", "redact"},
	"truncate":  {"../examples/plugins", "truncate"},
	"app-guard": {"../examples/plugins", "app-guard"},
	"identity":  {"../examples/plugins", "identity"},
	"hostile":   {"testdata/wasm", "hostile"},
	"noexport":  {"testdata/wasm", "noexport"},
}

var (
	buildMu    sync.Mutex
	buildOnce  = map[string]*sync.Once{}
	buildPath  = map[string]string{}
	buildError = map[string]error{}
)

// wasmPath returns the path of fixture name's .wasm, building it if needed.
func wasmPath(tb testing.TB, name string) string {
	tb.Helper()
	buildMu.Lock()
	once := buildOnce[name]
	if once == nil {
		once = new(sync.Once)
		buildOnce[name] = once
	}
	buildMu.Unlock()
	once.Do(func() {
		p, err := buildFixture(name)
		buildMu.Lock()
		buildPath[name], buildError[name] = p, err
		buildMu.Unlock()
	})
	buildMu.Lock()
	defer buildMu.Unlock()
	if err := buildError[name]; err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			tb.Skipf("no Go toolchain to build wasm fixtures: %v", err)
		}
		tb.Fatalf("build %s: %v", name, err)
	}
	return buildPath[name]
}

func buildFixture(name string) (string, error) {
	fx, ok := fixtures[name]
	if !ok {
		return "", fmt.Errorf("unknown fixture %q", name)
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(os.Getenv("GOROOT"), "bin", "go") // go test sets GOROOT
		if _, serr := os.Stat(gobin); serr != nil {
			return "", err
		}
	}
	key, err := sourceHash(fx.module, fx.pkg)
	if err != nil {
		return "", err
	}
	dir := cacheDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	out := filepath.Join(dir, name+"-"+key+".wasm")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	tmp, err := os.CreateTemp(dir, name+"-*.tmp")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	cmd := exec.Command(gobin, "build", "-buildmode=c-shared", "-trimpath", "-o", tmp.Name(), "./"+fx.pkg)
	cmd.Dir = fx.module
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "GOWORK=off", "CGO_ENABLED=0")
	start := time.Now()
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%v: %v\n%s", cmd.Args, err, b)
	}
	buildMu.Lock()
	buildLog = append(buildLog, fmt.Sprintf("built %s in %v", name, time.Since(start).Round(time.Millisecond)))
	buildMu.Unlock()
	if err := os.Rename(tmp.Name(), out); err != nil {
		return "", err
	}
	return out, nil
}

var buildLog []string // under buildMu; printed by TestMain with -v

func cacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "mcphost-test-wasm")
	}
	return filepath.Join(os.TempDir(), "mcphost-test-wasm")
}

// sourceHash hashes what the build of module/pkg depends on: the toolchain
// version, the package path and every go.mod, go.sum and .go file of the
// module (the examples share an internal package).
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
		fmt.Fprintf(h, "%s\n", rel)
		_, err = io.Copy(h, fh)
		fh.Close()
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// testCacheDir is a compilation cache shared by the tests' runtimes, so that
// each module is compiled once per test binary rather than once per test.
var testCacheDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcphost-plugins-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testCacheDir = filepath.Join(dir, "cache")
	code := m.Run()
	os.RemoveAll(dir)
	if testing.Verbose() {
		for _, l := range buildLog {
			fmt.Println(l)
		}
	}
	os.Exit(code)
}

// newRuntime makes a Runtime closed at the end of the test.
func newRuntime(tb testing.TB, opts Options) *Runtime {
	tb.Helper()
	if opts.ValidSource == nil {
		opts.ValidSource = testValidSource
	}
	if opts.CacheDir == "" {
		opts.CacheDir = testCacheDir
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(tbWriter{tb}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	rt, err := NewRuntime(opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := rt.Close(context.Background()); err != nil {
			tb.Error(err)
		}
	})
	return rt
}

type tbWriter struct{ tb testing.TB }

func (w tbWriter) Write(p []byte) (int, error) {
	w.tb.Logf("%s", p)
	return len(p), nil
}

// load loads specs and fails the test on any LoadError.
func load(tb testing.TB, rt *Runtime, specs ...Spec) *Set {
	tb.Helper()
	s, errs := rt.Load(context.Background(), specs)
	if errs != nil {
		for _, e := range errs {
			tb.Error(e.Error())
		}
		tb.FailNow()
	}
	tb.Cleanup(s.Close)
	return s
}

// spec returns a spec for a fixture with a generous timeout (tests that are
// not about time must not depend on the machine's speed) and a pool of one.
func spec(tb testing.TB, name, fixture string, stages []string, config map[string]string) Spec {
	return Spec{
		Name:     name,
		Path:     wasmPath(tb, fixture),
		Stages:   stages,
		Servers:  []string{"*"},
		Tools:    []string{"*"},
		Config:   config,
		Timeout:  10 * time.Second,
		PoolSize: 1,
	}
}

var (
	result  = []string{StageResult}
	display = []string{StageDisplay}
)

// testValidSource stands in for sandbox.ValidSource (a leaf may not import
// another): scheme://host with a few schemes and no path.
func testValidSource(s string) error {
	for _, scheme := range []string{"https://", "http://", "wss://", "ws://"} {
		if len(s) > len(scheme) && s[:len(scheme)] == scheme {
			for _, c := range s[len(scheme):] {
				if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '*' || c == ':') {
					return fmt.Errorf("bad character %q", c)
				}
			}
			return nil
		}
	}
	return errors.New("bad scheme")
}
