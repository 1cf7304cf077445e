// Command revenue runs the revenue demo MCP server (internal/demo) over
// stdin/stdout, so host tests and benchmarks can use the demo without
// building the mcphost binary. It is the same server as `mcphost demo revenue`.
//
// Build (from the module root):
//
//	go build -o revenue ./testdata/servers/revenue
//
// Tests build it with internal/testbin:
//
//	testbin.Build(t, "github.com/mcphost/mcphost/testdata/servers/revenue")
//
// It exits 0 when stdin closes or on SIGINT/SIGTERM, and 1 if the session
// fails.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcphost/mcphost/internal/demo"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := demo.ServeRevenue(ctx, os.Stdin, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "revenue: %v\n", err)
		os.Exit(1)
	}
}
