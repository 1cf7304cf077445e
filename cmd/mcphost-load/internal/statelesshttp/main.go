// Command statelesshttp serves the fixture MCP server (internal/fixture)
// over Streamable HTTP in go-sdk's stateless mode, which speaks both eras:
// it answers server/discover with 2026-07-28, so a host in
// version_negotiation = "auto" connects in the modern era, and it still
// accepts a legacy initialize. testdata/servers/wellbehaved -http is the
// stateful (legacy-only) counterpart. mcphost-load runs it for its
// "http-auto" servers and their direct twins.
//
// Build (from the module root):
//
//	go build -o statelesshttp ./cmd/mcphost-load/internal/statelesshttp
//
// Usage:
//
//	statelesshttp [-addr 127.0.0.1:0]
//
// The first line on stdout is the endpoint URL, for example
// "http://127.0.0.1:41234/mcp", printed once the listener is open. It exits
// 0 on SIGINT or SIGTERM and 1 on a setup error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcphost/mcphost/internal/fixture"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen `address`")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := serve(ctx, *addr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "statelesshttp: %v\n", err)
		os.Exit(1)
	}
}

func serve(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	server := fixture.NewServer()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
