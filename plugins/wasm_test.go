package plugins

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testbin"
)

// wasmPath returns the path of fixture name's .wasm, built by testbin (and
// cached across runs by a hash of its sources): an example plugin of
// examples/plugins, or a test plugin of testdata/wasm.
func wasmPath(tb testing.TB, name string) string {
	tb.Helper()
	switch name {
	case "hostile", "noexport":
		return testbin.Plugin(tb, "plugins/testdata/wasm", name)
	}
	return testbin.ExamplePlugin(tb, name)
}

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// newRuntime makes a Runtime closed at the end of the test.
func newRuntime(tb testing.TB, opts Options) *Runtime {
	tb.Helper()
	if opts.ValidSource == nil {
		opts.ValidSource = testValidSource
	}
	if opts.CacheDir == "" {
		// Shared by the tests' runtimes, so that each module is compiled
		// once per test binary rather than once per test.
		opts.CacheDir = testbin.PluginCacheDir(tb)
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
