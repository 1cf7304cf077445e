package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/confine"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/rogpeppe/go-internal/testscript"
)

// update rewrites the expected files of failing `cmp` commands in the
// scripts: go test ./cmd/mcphost -run TestScripts -update
var update = flag.Bool("update", false, "update testdata/script/*.txtar from the actual output")

// stderrCopyEnv names a file that the mcphost command of the scripts also
// writes its stderr to, so a script can watch the log of a background
// `mcphost serve` while it runs (see the waitlog command). It is a hook of
// the test shim only; the real binary does not know it.
const stderrCopyEnv = "MCPHOST_TEST_STDERR_COPY"

func TestMain(m *testing.M) {
	confine.MaybeHelper() // the sandbox helper of the stdio servers the tests start
	testscript.Main(cleanupAfter{m}, map[string]func(){
		"mcphost": mcphostMain,
	})
}

// cleanupAfter runs the tests, then removes the fixture binaries that
// testbin built; testscript.Main owns TestMain and calls os.Exit itself.
type cleanupAfter struct{ m *testing.M }

func (c cleanupAfter) Run() int {
	defer testbin.Cleanup()
	return c.m.Run()
}

// mcphostMain is the mcphost command inside the scripts: main, with the
// optional stderr copy.
func mcphostMain() {
	demoRaceEnv()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	var stderr io.Writer = os.Stderr
	if path := os.Getenv(stderrCopyEnv); path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			panic(err)
		}
		stderr = io.MultiWriter(os.Stderr, f)
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: stderr, reload: hup}
	code := e.run(ctx, os.Args[1:])
	signal.Stop(hup)
	stop()
	os.Exit(code)
}

// demoRaceEnv starts the demo server again with GORACE=atexit_sleep_ms=0
// when this is a race-enabled test binary running `mcphost demo` without
// GORACE. The demo of the embedded default is this binary, started by the
// mcphost under test, which passes a server only an allowlist of its
// environment, so the scripts' GORACE (see TestScripts) does not reach it;
// and a race-enabled process sleeps 1 s at exit without it, once for each of
// the dozens of demos the scripts start. The exec happens before anything
// else, and only here, in the test shim.
func demoRaceEnv() {
	if !raceEnabled || len(os.Args) < 2 || os.Args[1] != "demo" || os.Getenv("GORACE") != "" {
		return
	}
	self, err := os.Executable()
	if err != nil {
		return
	}
	_ = syscall.Exec(self, os.Args, append(os.Environ(), "GORACE=atexit_sleep_ms=0"))
	// Exec failed: run as is, only slower to exit.
}

func TestScripts(t *testing.T) {
	// The plugin scripts run the example plugins, built once from source.
	redactWasm := testbin.ExamplePlugin(t, "redact")
	hostileWasm := testbin.Plugin(t, "plugins/testdata/wasm", "hostile")
	// The raw JSON-RPC fixture server; its -mode hostile supplies strings
	// hostile to a terminal.
	misbehave := testbin.Build(t, "github.com/mcphost/mcphost/testdata/servers/misbehave")
	// The go-sdk fixture server (fx.echo, fx.fail, …).
	wellbehaved := testbin.Build(t, "github.com/mcphost/mcphost/testdata/servers/wellbehaved")
	// The server whose tools ask for input (elicitation, roots, sampling).
	elicit := testbin.Build(t, "github.com/mcphost/mcphost/testdata/servers/elicit")
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update,
		Setup: func(env *testscript.Env) error {
			// data_dir and other home-relative defaults stay in the sandbox.
			env.Setenv("HOME", env.WorkDir)
			// testscript.Main put the directory of the mcphost shim first in
			// PATH; executable() in a config resolves to it through PATH.
			// The package runners the scripts' configs name are stubs first
			// in PATH, so validate's "command not found here" warnings are
			// the same on every machine.
			stubs := filepath.Join(env.WorkDir, ".stubs")
			if err := os.MkdirAll(stubs, 0o755); err != nil {
				return err
			}
			for _, name := range []string{"npx", "uvx"} {
				stub := "#!/bin/sh\necho \"" + name + " is a stub of the tests\" >&2\nexit 1\n"
				if err := os.WriteFile(filepath.Join(stubs, name), []byte(stub), 0o755); err != nil {
					return err
				}
			}
			env.Setenv("PATH", stubs+string(os.PathListSeparator)+os.Getenv("PATH"))
			env.Setenv("REDACT_WASM", redactWasm)
			env.Setenv("HOSTILE_WASM", hostileWasm)
			env.Setenv("MISBEHAVE", misbehave)
			env.Setenv("WELLBEHAVED", wellbehaved)
			env.Setenv("ELICIT", elicit)
			// Under -race every process sleeps 1s at exit so other goroutines
			// can finish their reports; a script starts dozens (each call
			// also runs the demo as a child). Races found in them are still
			// reported, and still fail the script with status 66.
			if os.Getenv("GORACE") == "" {
				env.Setenv("GORACE", "atexit_sleep_ms=0")
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":    cmdExits,
			"waitlog":  cmdWaitLog,
			"holdport": cmdHoldPort,
		},
	})
}

// cmdExits implements `exits N PROGRAM [ARGS...]`: like exec, but the
// program must exit with status N. stdout and stderr are kept for the
// commands that follow, as after exec.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exits")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exits STATUS PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = exitErr.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

// cmdHoldPort implements `holdport NAME`: it listens on a free port of
// 127.0.0.1 until the script ends and sets NAME to its address, for a
// script to find an address that is taken.
func cmdHoldPort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: holdport NAME")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	ts.Defer(func() { ln.Close() })
	ts.Setenv(args[0], ln.Addr().String())
}

// cmdWaitLog implements `waitlog FILE REGEXP`: it waits until FILE exists and
// matches REGEXP (multi-line mode). It polls, because a background command
// has no other way to say it reached a point; the bound only keeps a broken
// test from hanging, it is not a timing assertion.
func cmdWaitLog(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! waitlog")
	}
	if len(args) != 2 {
		ts.Fatalf("usage: waitlog FILE REGEXP")
	}
	re, err := regexp.Compile("(?m)" + args[1])
	ts.Check(err)
	path := ts.MkAbs(args[0])
	const (
		interval = 20 * time.Millisecond
		bound    = 30 * time.Second
	)
	for range int(bound / interval) {
		if b, err := os.ReadFile(path); err == nil && re.Match(b) {
			return
		}
		time.Sleep(interval)
	}
	b, _ := os.ReadFile(path)
	ts.Fatalf("waitlog: %s did not match %q within %s; it holds:\n%s", args[0], args[1], bound, b)
}
