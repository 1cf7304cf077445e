package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/apiclient"
	"github.com/mcphost/mcphost/internal/termsafe"
)

// logsFollowEvery is how often `logs -f` asks the daemon for new lines.
const logsFollowEvery = time.Second

// onDaemonServer parses the flags and the one SERVER argument of a command
// that acts on a running server, and returns the server and the daemon to
// go through, or the exit code (d nil).
func (e *env) onDaemonServer(ctx context.Context, fs *flag.FlagSet, cf clientFlags, args []string) (server string, d *apiclient.Client, code int) {
	if code := parseFlags(fs, args); code >= 0 {
		return "", nil, code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return "", nil, exitUsage
	}
	d, code = e.daemonOnly(ctx, fs.Name(), cf)
	return fs.Arg(0), d, code
}

// daemonOnly returns the daemon a command that acts on running servers
// goes through, or the exit code: such a command has nothing to act on
// without one.
func (e *env) daemonOnly(ctx context.Context, name string, cf clientFlags) (*apiclient.Client, int) {
	if *cf.local {
		fmt.Fprintf(e.stderr, "mcphost %s: acts on the servers of a running daemon; -local has none\n", name)
		return nil, exitUsage
	}
	d, code := e.daemonOf(ctx, cf)
	if d != nil || code >= 0 {
		return d, code
	}
	fmt.Fprintf(e.stderr, "mcphost %s: no daemon serves this config's data_dir; start one with `mcphost serve`, or name one with -daemon URL\n", name)
	return nil, exitFailure
}

// restartCmd asks the daemon for a new session of one server: a ready
// server's session is closed and a new one started; a server waiting in
// its backoff, or failed for good, starts again at once.
func (e *env) restartCmd(ctx context.Context, args []string) int {
	fs, cf := e.clientFlagSet("restart", "[CLIENT FLAGS] SERVER")
	server, d, code := e.onDaemonServer(ctx, fs, cf, args)
	if d == nil {
		return code
	}
	if err := d.RestartServer(ctx, server); err != nil {
		fmt.Fprintf(e.stderr, "mcphost restart: %s\n", termsafe.Line(err.Error()))
		return exitFailure
	}
	fmt.Fprintf(e.stdout, "restart of %s requested (`mcphost servers` shows its state)\n", server)
	return exitOK
}

// logsCmd prints a server's last log messages and the tail of its
// process's stderr, from the daemon; with -f it goes on printing new ones
// until interrupted.
func (e *env) logsCmd(ctx context.Context, args []string) int {
	fs, cf := e.clientFlagSet("logs", "[CLIENT FLAGS] [-f] SERVER")
	follow := fs.Bool("f", false, "go on printing new lines until interrupted")
	server, d, code := e.onDaemonServer(ctx, fs, cf, args)
	if d == nil {
		return code
	}
	var seen logsSeen
	for {
		var logs host.ServerLogs
		if err := d.ServerLogs(ctx, server, &logs); err != nil {
			if ctx.Err() != nil && *follow {
				return exitOK // interrupted
			}
			fmt.Fprintf(e.stderr, "mcphost logs: %s\n", termsafe.Line(err.Error()))
			return exitFailure
		}
		if *cf.json && !*follow {
			writeJSON(e.stdout, logs)
			return exitOK
		}
		seen.print(e.stdout, logs)
		if !*follow {
			return exitOK
		}
		select {
		case <-ctx.Done():
			return exitOK
		case <-time.After(logsFollowEvery):
		}
	}
}

// logsSeen is what `logs` has printed, so that -f prints only what is new:
// the log messages up to a time, and the stderr tail as last read.
type logsSeen struct {
	until  time.Time
	atLast int // messages printed with the time until
	stderr []string
}

// print writes the lines of logs not printed yet: log messages as
// "TIME LEVEL [LOGGER] DATA", stderr lines as "stderr: LINE".
func (s *logsSeen) print(w io.Writer, logs host.ServerLogs) {
	atLast := 0
	for _, m := range logs.Messages {
		switch {
		case m.At.Before(s.until):
			continue
		case m.At.Equal(s.until):
			atLast++
			if atLast <= s.atLast {
				continue
			}
		default:
			s.until, atLast = m.At, 1
		}
		s.atLast = atLast
		logger := ""
		if m.Logger != "" {
			logger = " [" + termsafe.Line(m.Logger) + "]"
		}
		fmt.Fprintf(w, "%s %s%s %s\n", m.At.Local().Format(time.DateTime), termsafe.Line(m.Level), logger, termsafe.Line(m.Data))
	}
	for _, l := range logs.Stderr[newLines(s.stderr, logs.Stderr):] {
		fmt.Fprintf(w, "stderr: %s\n", termsafe.Line(l))
	}
	s.stderr = logs.Stderr
}

// newLines returns where the lines of cur not in prev begin: cur is a
// tail of the same stream as prev, read later, so the longest end of prev
// that begins cur is what was printed already.
func newLines(prev, cur []string) int {
	for n := min(len(prev), len(cur)); n > 0; n-- {
		if slices.Equal(prev[len(prev)-n:], cur[:n]) {
			return n
		}
	}
	return 0
}
