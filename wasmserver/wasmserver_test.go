package wasmserver

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fixtures are built from source by the tests:
//
//	examples/wasm/wasi-echo         GOOS=wasip1 GOARCH=wasm go build -o echo.wasm ./wasi-echo
//	examples/wasm/extism-echo       GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o echo-plugin.wasm ./extism-echo
//	testdata/wasm/hostilecmd        GOOS=wasip1 GOARCH=wasm go build -o hostilecmd.wasm ./hostilecmd
//	testdata/wasm/hostileplugin     GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o hostileplugin.wasm ./hostileplugin
//	testdata/wasm/v1plugin          GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o v1plugin.wasm ./v1plugin
//
// The plugins go through internal/testbin (kept across runs); the commands
// are built into a directory of this test process (Go's build cache makes
// a rebuild a link).

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// legacyVersion is the protocol version mcphost's legacy sessions pass.
const legacyVersion = "2025-11-25"

func echoWasm(tb testing.TB) string {
	return goBuild(tb, "examples/wasm", "wasi-echo", "wasip1", "wasm")
}

func echoPlugin(tb testing.TB) string {
	tb.Helper()
	return testbin.Plugin(tb, "examples/wasm", "extism-echo")
}

func hostileCmd(tb testing.TB) string {
	return goBuild(tb, "wasmserver/testdata/wasm", "hostilecmd", "wasip1", "wasm")
}

func hostilePlugin(tb testing.TB) string {
	tb.Helper()
	return testbin.Plugin(tb, "wasmserver/testdata/wasm", "hostileplugin")
}

func v1Plugin(tb testing.TB) string {
	tb.Helper()
	return testbin.Plugin(tb, "wasmserver/testdata/wasm", "v1plugin")
}

var (
	buildMu  sync.Mutex
	buildDir string // removed by TestMain
	builds   = map[string]*built{}
)

type built struct {
	once sync.Once
	path string
	err  error
}

// goBuild builds the main package pkg of the Go module moduleDir (relative
// to the repository root) for goos/goarch, once per test process, and
// returns the binary's path.
func goBuild(tb testing.TB, moduleDir, pkg, goos, goarch string) string {
	tb.Helper()
	key := strings.Join([]string{moduleDir, pkg, goos, goarch}, " ")
	buildMu.Lock()
	b := builds[key]
	if b == nil {
		b = &built{}
		builds[key] = b
	}
	if buildDir == "" {
		d, err := os.MkdirTemp("", "mcphost-wasmserver-")
		if err != nil {
			buildMu.Unlock()
			tb.Fatal(err)
		}
		buildDir = d
	}
	dir := buildDir
	buildMu.Unlock()
	b.once.Do(func() {
		root, err := filepath.Abs("..")
		if err != nil {
			b.err = err
			return
		}
		out := filepath.Join(dir, fmt.Sprintf("%s-%s-%s", pkg, goos, goarch))
		if goarch == "wasm" {
			out += ".wasm"
		}
		cmd := exec.Command(testbin.GoCommand(tb), "build", "-trimpath", "-o", out, "./"+pkg)
		cmd.Dir = filepath.Join(root, moduleDir)
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "GOWORK=off", "CGO_ENABLED=0")
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		if err := cmd.Run(); err != nil {
			b.err = fmt.Errorf("building %s of %s for %s/%s: %v\n%s", pkg, moduleDir, goos, goarch, err, buf.Bytes())
			return
		}
		b.path = out
	})
	if b.err != nil {
		tb.Fatal(b.err)
	}
	return b.path
}

// testCacheDir is the compilation cache of the tests, kept across runs
// under the user's cache directory like testbin's .wasm files: compiling
// the go-sdk example takes about ten seconds, and twenty times that under
// the race detector. wazero keys each entry by the module's hash, its own
// version and the CPU, so a stale entry is never used.
func testCacheDir(tb testing.TB) string {
	tb.Helper()
	return testbin.WasmServerCacheDir(tb)
}

// start starts spec with the test process's compilation cache and a logger
// into the test's log, and closes the server at the end of the test.
func start(tb testing.TB, spec Spec) *Server {
	tb.Helper()
	if spec.CacheDir == "" {
		spec.CacheDir = testCacheDir(tb)
	}
	if spec.Logger == nil {
		spec.Logger = slog.New(slog.NewTextHandler(tbWriter{tb}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	begin := time.Now()
	s, err := Start(context.Background(), spec)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Logf("started %s (%s) in %v", s.name, s.Kind(), time.Since(begin))
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Error(err)
		}
	})
	return s
}

// connect connects a client at version (mcphost always names one) and
// closes the session at the end of the test.
func connect(tb testing.TB, s *Server, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	tb.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "wasmserver-test", Version: "0"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := c.Connect(ctx, s.Transport(), &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

// call calls tool and returns its result's first text and whether it is an
// error result; a protocol error fails the test.
func call(tb testing.TB, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		tb.Fatalf("call %s: %v", tool, err)
	}
	return firstText(tb, res), res.IsError
}

func firstText(tb testing.TB, res *mcp.CallToolResult) string {
	tb.Helper()
	if len(res.Content) == 0 {
		tb.Fatalf("result has no content: %+v", res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		tb.Fatalf("content[0] is %T", res.Content[0])
	}
	return tc.Text
}

func toolNames(tb testing.TB, cs *mcp.ClientSession) []string {
	tb.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, t := range res.Tools {
		names = append(names, t.Name)
	}
	return names
}

// waitDone waits for the server to stop, failing the test after a minute.
func waitDone(tb testing.TB, s *Server) {
	tb.Helper()
	select {
	case <-s.Done():
	case <-time.After(time.Minute):
		tb.Fatal("the server did not stop")
	}
}

type tbWriter struct{ tb testing.TB }

func (w tbWriter) Write(p []byte) (int, error) {
	w.tb.Logf("%s", bytes.TrimRight(p, "\n"))
	return len(p), nil
}

// dataDir makes a directory holding one file, secret.txt.
func dataDir(tb testing.TB) (dir, file string) {
	tb.Helper()
	dir = tb.TempDir()
	file = filepath.Join(dir, "secret.txt")
	if err := os.WriteFile(file, []byte("granted content"), 0o600); err != nil {
		tb.Fatal(err)
	}
	return dir, file
}
