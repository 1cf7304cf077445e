// Command lockfile is a legacy go-sdk MCP server on stdin/stdout that takes
// an exclusive flock on a file at start, like servers that allow one owner
// of a resource. A second instance started while the first holds the lock
// writes "lockfile: <path> is held by another instance" to stderr and exits
// 1, so a test can tell whether a probe process was reaped before the
// session process started.
//
// It supports only the legacy versions (ServerOptions.SupportedProtocolVersions
// 2025-11-25 … 2024-11-05), so it answers a 2026-07-28 server/discover with
// -32022 naming legacy versions only.
//
// Build (from the module root):
//
//	go build -o lockfile ./testdata/servers/lockfile
//
// Tests build it with internal/testbin:
//
//	testbin.Build(t, "github.com/mcphost/mcphost/testdata/servers/lockfile")
//
// Flags:
//
//	-lock PATH    the file to lock (required; created if missing)
//	-grandchild   after taking the lock, start a child process (this program
//	              again) that inherits the locked file, stdout and stderr and
//	              sleeps until killed, in the same process group: the lock
//	              then outlives this process unless the whole group is killed
//
// Tool: echo {text} → text. It exits 0 when stdin closes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("lockfile", flag.ContinueOnError)
	lockPath := fs.String("lock", "", "the `file` to lock")
	grandchild := fs.Bool("grandchild", false, "leave a child holding the lock, stdout and stderr")
	hold := fs.Bool("hold", false, "internal: the grandchild's mode (sleep holding fd 3)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *hold {
		select {} // until killed
	}
	if *lockPath == "" {
		fmt.Fprintln(os.Stderr, "lockfile: -lock is required")
		return 2
	}
	f, err := os.OpenFile(*lockPath, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "lockfile: %v\n", err)
		return 1
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		fmt.Fprintf(os.Stderr, "lockfile: %s is held by another instance (%v)\n", *lockPath, err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "lockfile: locked %s (pid %d)\n", *lockPath, os.Getpid())
	if *grandchild {
		self, err := os.Executable()
		if err != nil {
			fmt.Fprintf(os.Stderr, "lockfile: %v\n", err)
			return 1
		}
		child := exec.Command(self, "-hold")
		child.Stdout, child.Stderr = os.Stdout, os.Stderr
		child.ExtraFiles = []*os.File{f}
		if err := child.Start(); err != nil {
			fmt.Fprintf(os.Stderr, "lockfile: starting the grandchild: %v\n", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "lockfile: grandchild %d holds the lock\n", child.Process.Pid)
	}

	s := mcp.NewServer(&mcp.Implementation{Name: "lockfile", Version: "1.0.0"},
		&mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns its text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	err = s.Run(context.Background(), &mcp.StdioTransport{})
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, mcp.ErrConnectionClosed) {
		fmt.Fprintf(os.Stderr, "lockfile: %v\n", err)
		return 1
	}
	return 0
}
