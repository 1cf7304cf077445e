package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcphost/mcphost/internal/gotool"
)

// The fixture programs, as packages of the module and as file names in the
// binary directory.
const (
	wellbehavedPkg = "./testdata/servers/wellbehaved"
	modernonlyPkg  = "./testdata/servers/modernonly"
	wellbehavedBin = "wellbehaved"
	modernonlyBin  = "modernonly"
	mcphostPkg     = "./cmd/mcphost"
	mcphostBin     = "mcphost"
)

// binaries are the paths of the built fixtures.
type binaries struct {
	Wellbehaved string `json:"wellbehaved"`
	Modernonly  string `json:"modernonly"`
	Plugin      string `json:"plugin,omitempty"`  // .wasm; "" without a plugin
	Mcphost     string `json:"mcphost,omitempty"` // the cluster run's replicas
}

// httpCommand returns the command line of an HTTP fixture of kind k:
// wellbehaved -http, stateful (legacy only), or with -stateless (both eras)
// for a kind in version_negotiation = "auto".
func (b binaries) httpCommand(k kind) []string {
	if k.Negotiation == "auto" {
		return []string{b.Wellbehaved, "-http", "127.0.0.1:0", "-stateless"}
	}
	return []string{b.Wellbehaved, "-http", "127.0.0.1:0"}
}

// buildFixtures compiles the fixture servers, mcphost itself withMcphost
// (the cluster run's replicas) and, unless plugin is "none", the example
// plugin into dir:
//
//	go build -o DIR/ ./testdata/servers/wellbehaved ./testdata/servers/modernonly [./cmd/mcphost]
//	cd examples/plugins && GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -o DIR/PLUGIN.wasm ./PLUGIN
func buildFixtures(ctx context.Context, root, dir, plugin string, withMcphost bool, logger *slog.Logger) (binaries, error) {
	goCmd, err := gotool.Go()
	if err != nil {
		return binaries{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return binaries{}, err
	}
	run := func(cmd *exec.Cmd) error {
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, buf.Bytes())
		}
		logger.Debug("built", "cmd", strings.Join(cmd.Args, " "), "duration", time.Since(start))
		return nil
	}
	logger.Info("building fixtures", "dir", dir)
	pkgs := []string{wellbehavedPkg, modernonlyPkg}
	if withMcphost {
		pkgs = append(pkgs, mcphostPkg)
	}
	cmd := exec.CommandContext(ctx, goCmd, append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)...)
	cmd.Dir = root
	if err := run(cmd); err != nil {
		return binaries{}, err
	}
	b := binaries{Wellbehaved: filepath.Join(dir, wellbehavedBin), Modernonly: filepath.Join(dir, modernonlyBin)}
	if withMcphost {
		b.Mcphost = filepath.Join(dir, mcphostBin)
	}
	if plugin != pluginNone {
		b.Plugin = filepath.Join(dir, plugin+".wasm")
		cmd := exec.CommandContext(ctx, goCmd, "build", "-buildmode=c-shared", "-trimpath", "-o", b.Plugin, "./"+plugin)
		cmd.Dir = filepath.Join(root, "examples", "plugins")
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "GOWORK=off", "CGO_ENABLED=0")
		if err := run(cmd); err != nil {
			return binaries{}, err
		}
	}
	return b, nil
}

// prebuilt returns the fixtures of -bin-dir, checking that they exist.
func prebuilt(dir, plugin string, withMcphost bool) (binaries, error) {
	b := binaries{Wellbehaved: filepath.Join(dir, wellbehavedBin), Modernonly: filepath.Join(dir, modernonlyBin)}
	if plugin != pluginNone {
		b.Plugin = filepath.Join(dir, plugin+".wasm")
	}
	if withMcphost {
		b.Mcphost = filepath.Join(dir, mcphostBin)
	}
	for _, p := range []string{b.Wellbehaved, b.Modernonly, b.Plugin, b.Mcphost} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			return binaries{}, fmt.Errorf("-bin-dir: %v", err)
		}
	}
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	b.Wellbehaved, b.Modernonly = abs(b.Wellbehaved), abs(b.Modernonly)
	if b.Plugin != "" {
		b.Plugin = abs(b.Plugin)
	}
	return b, nil
}

// owned is the set of processes the load tool started itself (HTTP
// fixtures, direct-baseline servers), so that counting the daemon's children
// can leave them out.
type owned struct {
	mu   sync.Mutex
	pids map[int]bool
}

func newOwned() *owned { return &owned{pids: map[int]bool{}} }

func (o *owned) add(pid int) {
	o.mu.Lock()
	o.pids[pid] = true
	o.mu.Unlock()
}

func (o *owned) has(pid int) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.pids[pid]
}

// httpFixture is one fixture process serving Streamable HTTP on loopback.
type httpFixture struct {
	URL  string
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has been waited for
}

// startHTTPFixture runs argv (a fixture listening on 127.0.0.1:0) and
// returns once it has printed its endpoint URL.
func startHTTPFixture(argv []string, own *owned) (*httpFixture, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	dieWithParent(cmd)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	own.add(cmd.Process.Pid)
	f := &httpFixture{cmd: cmd, done: make(chan struct{})}
	first := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		first <- strings.TrimSpace(line)
		io.Copy(io.Discard, r)
		cmd.Wait()
		close(f.done)
	}()
	select {
	case f.URL = <-first:
	case <-time.After(30 * time.Second):
		f.stop()
		return nil, errors.New("the HTTP fixture printed no URL within 30s")
	}
	if !strings.HasPrefix(f.URL, "http://127.0.0.1:") {
		f.stop()
		return nil, fmt.Errorf("the HTTP fixture printed %q, want its http://127.0.0.1:PORT/mcp URL", f.URL)
	}
	return f, nil
}

// stop ends the fixture with SIGTERM, then SIGKILL after 5 s, and waits.
func (f *httpFixture) stop() {
	_ = f.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-f.done:
	case <-time.After(5 * time.Second):
		_ = f.cmd.Process.Kill()
		<-f.done
	}
}

// startHTTPFixtures starts one HTTP fixture per command line, a few at a
// time.
func startHTTPFixtures(ctx context.Context, argvs [][]string, own *owned) ([]*httpFixture, error) {
	n := len(argvs)
	out := make([]*httpFixture, n)
	errs := make([]error, n)
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, argv := range argvs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if ctx.Err() != nil {
				errs[i] = ctx.Err()
				return
			}
			out[i], errs[i] = startHTTPFixture(argv, own)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		stopFixtures(out)
		return nil, err
	}
	return out, nil
}

// stopFixtures stops every started fixture of fs in parallel.
func stopFixtures(fs []*httpFixture) {
	var wg sync.WaitGroup
	for _, f := range fs {
		if f != nil {
			wg.Go(f.stop)
		}
	}
	wg.Wait()
}
