package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testbin"
)

// TestServeStopsChildren runs serve in-process with a stdio server, cancels
// its context as main does on SIGINT, and checks that serve exits 0 and
// leaves no server process behind.
func TestServeStopsChildren(t *testing.T) {
	bin := testbin.Build(t, "github.com/mcphost/mcphost/testdata/servers/wellbehaved")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcphost.hcl")
	src := fmt.Sprintf("listen = \"127.0.0.1:0\"\ndata_dir = %q\n\nserver \"fixture\" {\n  command = %q\n}\n",
		filepath.Join(dir, "state"), bin)
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "-config", cfg}, strings.NewReader(""), &stdout, &stderr)
	}()

	pid, err := waitForChild(bin, done)
	if err != nil {
		cancel()
		<-done
		t.Fatalf("%v\nstderr:\n%s", err, stderr.String())
	}

	cancel()
	if code := <-done; code != exitOK {
		t.Fatalf("serve returned %d, want %d\nstderr:\n%s", code, exitOK, stderr.String())
	}
	// serve reaps its children before it returns: the pid is gone, not a
	// zombie waiting for us (a zombie still answers kill 0).
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("server process %d still exists after serve returned (kill 0: %v)", pid, err)
	}
	if !strings.Contains(stderr.String(), `msg="mcphost stopped"`) {
		t.Errorf("stderr does not report a clean stop:\n%s", stderr.String())
	}
}

// waitForChild polls /proc until a child of this process runs bin, and
// returns its pid. It gives up when serve returns first, or after a bound
// that only keeps a broken test from hanging.
func waitForChild(bin string, done <-chan int) (int, error) {
	const (
		interval = 20 * time.Millisecond
		bound    = 30 * time.Second
	)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	timeout := time.After(bound)
	for {
		if pid, ok := findChild(os.Getpid(), bin); ok {
			return pid, nil
		}
		select {
		case code := <-done:
			return 0, fmt.Errorf("serve returned %d before it started %s", code, bin)
		case <-timeout:
			return 0, fmt.Errorf("no child process running %s after %s", bin, bound)
		case <-tick.C:
		}
	}
}

// findChild returns the pid of a process whose parent is ppid and whose
// argv[0] is bin.
func findChild(ppid int, bin string) (int, bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, false
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(ppid) {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		argv0, _, _ := bytes.Cut(cmdline, []byte{0})
		if string(argv0) == bin {
			return pid, true
		}
	}
	return 0, false
}

// syncBuffer is a bytes.Buffer that serve's logger and the test may use
// from different goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
