package wasmserver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tetratelabs/wazero/sys"
)

func TestWASICommand(t *testing.T) {
	path := echoWasm(t)
	kind, err := Detect(context.Background(), path)
	if err != nil || kind != KindWASICommand {
		t.Fatalf("Detect = %q, %v; want %q", kind, err, KindWASICommand)
	}
	for _, version := range []string{legacyVersion, "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			dir, file := dataDir(t)
			s := start(t, Spec{Name: "echo", Path: path, Read: []string{dir}})
			if s.Kind() != KindWASICommand {
				t.Fatalf("Kind = %q", s.Kind())
			}
			cs := connect(t, s, version, nil)
			if got := cs.InitializeResult().ServerInfo.Name; got != "wasi-echo" {
				t.Errorf("serverInfo.name = %q, want wasi-echo", got)
			}
			if names := toolNames(t, cs); !slices.Equal(names, []string{"echo", "read_file"}) {
				t.Errorf("tools = %v, want [echo read_file]", names)
			}
			if text, isErr := call(t, cs, "echo", map[string]any{"text": "hello"}); text != "hello" || isErr {
				t.Errorf("echo = %q (error %v), want hello", text, isErr)
			}
			if text, isErr := call(t, cs, "read_file", map[string]any{"path": file}); text != "granted content" || isErr {
				t.Errorf("read_file of a granted file = %q (error %v)", text, isErr)
			}
			if text, isErr := call(t, cs, "read_file", map[string]any{"path": "/etc/passwd"}); !isErr {
				t.Errorf("read_file /etc/passwd = %q, want an error result", text)
			} else {
				t.Logf("read_file /etc/passwd: %s", text)
			}

			// Ending the session closes stdin: the server exits cleanly.
			cs.Close()
			waitDone(t, s)
			if err := s.Err(); err != nil {
				t.Errorf("Err after a clean exit = %v", err)
			}
		})
	}
}

// Read is mounted read-only, Write read-write, at the same paths; a write
// directory may sit inside a read one.
func TestWASICommandGrants(t *testing.T) {
	ro := t.TempDir()
	rw := filepath.Join(ro, "inbox")
	if err := os.Mkdir(rw, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(path string) error {
		s := start(t, Spec{Path: hostileCmd(t), Args: []string{"write", path}, Read: []string{ro}, Write: []string{rw}})
		waitDone(t, s)
		return s.Err()
	}
	if err := write(filepath.Join(rw, "note")); err != nil {
		t.Fatalf("write into the read-write directory: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(rw, "note")); err != nil || string(b) != "written" {
		t.Fatalf("the written file: %q, %v", b, err)
	}
	for _, path := range []string{filepath.Join(ro, "note"), filepath.Join(t.TempDir(), "note")} {
		err := write(path)
		if err == nil || !strings.Contains(err.Error(), "exited with code 1") {
			t.Errorf("write %s: %v, want a failure", path, err)
		}
		if _, serr := os.Stat(path); serr == nil {
			t.Errorf("%s was written", path)
		}
		t.Logf("write %s: %v", path, err)
	}
	if _, err := Start(context.Background(), Spec{Path: hostileCmd(t), Read: []string{ro}, Write: []string{ro}}); err == nil || !strings.Contains(err.Error(), "both read-only and read-write") {
		t.Errorf("a directory granted twice: %v", err)
	}
}

func TestWASICommandOneSession(t *testing.T) {
	s := start(t, Spec{Path: hostileCmd(t), Args: []string{"spin"}})
	connect(t, s, legacyVersion, nil)
	_, err := s.Transport().Connect(context.Background())
	if err == nil || !strings.Contains(err.Error(), "serves one session") {
		t.Fatalf("second Connect: %v, want a one-session error", err)
	}
}

func TestWASICommandEnvAndArgs(t *testing.T) {
	// hostilecmd names an unknown mode on stderr and exits 2: the
	// argument reached it, and Err quotes its stderr.
	s := start(t, Spec{Path: hostileCmd(t), Args: []string{"no-such-mode"}, Env: map[string]string{"A": "1"}})
	waitDone(t, s)
	err := s.Err()
	if err == nil || !strings.Contains(err.Error(), "exited with code 2") || !strings.Contains(err.Error(), `unknown mode "no-such-mode"`) {
		t.Fatalf("Err = %v", err)
	}
	if _, err := Start(context.Background(), Spec{Path: hostileCmd(t), Env: map[string]string{"A=B": "1"}}); err == nil {
		t.Error("Start accepted an environment variable name with '='")
	}
}

func TestWASICommandTrapsOnStart(t *testing.T) {
	path := writeModule(t, module(true, "_start"))
	s := start(t, Spec{Name: "trap", Path: path})
	waitDone(t, s)
	err := s.Err()
	if err == nil || !strings.Contains(err.Error(), `"trap" trapped`) || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("Err = %v, want a trap", err)
	}
	if _, err := s.Transport().Connect(context.Background()); err == nil {
		t.Error("Connect to a stopped server succeeded")
	}
}

func TestWASICommandExitCode(t *testing.T) {
	s := start(t, Spec{Name: "crash", Path: hostileCmd(t), Args: []string{"crash"}})
	waitDone(t, s)
	err := s.Err()
	if err == nil || !strings.Contains(err.Error(), "exited with code 3") || !strings.Contains(err.Error(), "hostilecmd: deliberate crash") {
		t.Fatalf("Err = %v, want exit code 3 with the stderr line", err)
	}
	var exit *sys.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Errorf("Err does not unwrap to exit code 3: %v", err)
	}
}

// A tool that never returns: the caller's deadline ends the call, and
// Close stops the module although it never reaches a host call again.
func TestWASICommandSpinningCall(t *testing.T) {
	s := start(t, Spec{Name: "spin", Path: hostileCmd(t), Args: []string{"spin"}})
	cs := connect(t, s, legacyVersion, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "spin"}); err == nil {
		t.Fatal("a call that never returns returned")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	waitDone(t, s)
	if err := s.Err(); err != nil {
		t.Errorf("Err after Close = %v", err)
	}
}

// A tool that sleeps for an hour: Close ends the sleep.
func TestWASICommandSleepingCall(t *testing.T) {
	sleeping := &signal{want: "hostilecmd: sleeping", c: make(chan struct{})}
	s := start(t, Spec{Name: "sleep", Path: hostileCmd(t), Args: []string{"spin"}, Stderr: sleeping})
	cs := connect(t, s, legacyVersion, nil)
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "sleep"})
		called <- err
	}()
	select {
	case <-sleeping.c:
	case <-time.After(time.Minute):
		t.Fatal("the call did not start sleeping")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-called; err == nil {
		t.Error("the sleeping call returned a result after Close")
	}
}

// A module that writes without a newline: the session fails once the line
// is over MaxLineBytes, the module is stopped, and Err says why. The host
// never buffers more than one line's bound.
func TestWASICommandFloodsStdout(t *testing.T) {
	s := start(t, Spec{Name: "flood", Path: hostileCmd(t), Args: []string{"flood"}})
	c := mcp.NewClient(&mcp.Implementation{Name: "wasmserver-test", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := c.Connect(ctx, s.Transport(), &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err == nil {
		cs.Close()
		t.Fatal("initialize succeeded against a server that floods stdout")
	}
	t.Logf("connect: %v", err)
	waitDone(t, s)
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "without a newline") {
		t.Fatalf("Err = %v, want the line bound", err)
	}
}

func TestCloseIdempotent(t *testing.T) {
	s := start(t, Spec{Path: hostileCmd(t), Args: []string{"spin"}})
	for range 3 {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	waitDone(t, s)
}

// signal closes c when what is written to it contains want.
type signal struct {
	want string
	c    chan struct{}
	mu   sync.Mutex
	buf  strings.Builder
	once sync.Once
}

func (s *signal) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.buf.Write(p)
	found := strings.Contains(s.buf.String(), s.want)
	s.mu.Unlock()
	if found {
		s.once.Do(func() { close(s.c) })
	}
	return len(p), nil
}
