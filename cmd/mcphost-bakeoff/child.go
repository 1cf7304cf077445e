package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// child is one process the run started, in a process group of its own,
// with its stdout (after the first line) and stderr in a log file.
type child struct {
	name  string
	cmd   *exec.Cmd
	log   *os.File
	first chan string   // the first line of stdout, once
	done  chan struct{} // closed once the process has been waited for
}

// startChild starts argv with its output in logPath. env, when not nil,
// is added to this process's environment.
func startChild(name string, argv []string, env []string, logPath string) (*child, error) {
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stderr = lf
	cmd.SysProcAttr = ownGroup()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		lf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, log: lf, first: make(chan string, 1), done: make(chan struct{})}
	go func() {
		r := bufio.NewReader(stdout)
		line, err := r.ReadString('\n')
		if err == nil {
			c.first <- strings.TrimSpace(line)
		}
		fmt.Fprint(lf, line)
		io.Copy(lf, r)
		cmd.Wait()
		lf.Close()
		close(c.done)
	}()
	return c, nil
}

// pid is the process's id (and its group's).
func (c *child) pid() int { return c.cmd.Process.Pid }

// firstLine waits up to limit for the first line of the process's stdout.
func (c *child) firstLine(ctx context.Context, limit time.Duration) (string, error) {
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case line := <-c.first:
		return line, nil
	case <-c.done:
		return "", fmt.Errorf("%s exited at start; see %s", c.name, c.log.Name())
	case <-t.C:
		return "", fmt.Errorf("%s printed no line within %v; see %s", c.name, limit, c.log.Name())
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// exited says whether the process has ended.
func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// stop ends the process group: SIGTERM, then SIGKILL after 5 s.
func (c *child) stop() {
	if c == nil {
		return
	}
	_ = signalGroup(c.pid(), syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
	}
	// Whatever is left in the group (the leader gone or not).
	_ = signalGroup(c.pid(), syscall.SIGKILL)
	<-c.done
}

// freePort returns a loopback port that was free a moment ago, for a
// program that cannot listen on port 0 and report it (TBXark/mcp-proxy).
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return strconv.Atoi(port)
}

// readFirst returns the first line of path, trimmed, or "".
func readFirst(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line)
}
