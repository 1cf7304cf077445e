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
// -variant NAME runs one of the demo's broken variants (demo.Variants:
// wrong-mime, oversized, unavailable, malicious, spoofer, silent,
// unadvertised), as `mcphost demo revenue -variant NAME` does.
//
// It exits 0 when stdin closes or on SIGINT/SIGTERM, 1 if the session
// fails, and 2 for an unknown flag or variant.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/mcphost/mcphost/internal/demo"
)

func main() {
	variant := flag.String("variant", "", "a broken variant for tests: "+strings.Join(demo.Variants(), ", "))
	flag.Parse()
	if err := demo.CheckVariant(*variant); err != nil {
		fmt.Fprintf(os.Stderr, "revenue: %v\n", err)
		os.Exit(2)
	}
	if flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "revenue: usage: revenue [-variant NAME]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := demo.ServeRevenueVariant(ctx, os.Stdin, os.Stdout, *variant)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "revenue: %v\n", err)
		os.Exit(1)
	}
}
