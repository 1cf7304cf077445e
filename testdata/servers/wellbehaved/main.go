// Command wellbehaved runs the fixture MCP server (internal/fixture) for
// tests that need a real, well-behaved server process.
//
// Build (from the module root):
//
//	go build -o wellbehaved ./testdata/servers/wellbehaved
//
// Tests build it with internal/testbin:
//
//	testbin.Build(t, "github.com/mcphost/mcphost/testdata/servers/wellbehaved")
//
// Usage:
//
//	wellbehaved                        serve one session over stdin/stdout
//	wellbehaved -http ADDR             serve Streamable HTTP on ADDR (e.g. 127.0.0.1:0)
//	wellbehaved -http ADDR -stateless  the same in go-sdk's stateless mode
//	wellbehaved -sse ADDR              serve the 2024-11-05 HTTP+SSE transport on ADDR
//
// -http alone is stateful and legacy-only. With -stateless it speaks both
// eras: it answers server/discover with 2026-07-28, so a host in
// version_negotiation = "auto" connects in the modern era, and it still
// accepts a legacy initialize (cmd/mcphost-load runs it so for its
// "http-auto" servers). -stateless needs -http.
//
// In the HTTP modes the first line on stdout is the endpoint URL, for
// example "http://127.0.0.1:41234/mcp"; it is printed once the listener is
// open, so a test can connect as soon as it reads it. The process always
// writes "fixture: started" to stderr first. It exits 0 when stdin closes
// (stdio mode) or on SIGINT/SIGTERM, and 1 on a setup error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wellbehaved", flag.ContinueOnError)
	fs.SetOutput(stderr)
	httpAddr := fs.String("http", "", "serve Streamable HTTP on `addr` instead of stdio")
	sseAddr := fs.String("sse", "", "serve the 2024-11-05 SSE transport on `addr` instead of stdio")
	stateless := fs.Bool("stateless", false, "with -http, serve in go-sdk's stateless mode (both eras)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *httpAddr != "" && *sseAddr != "" {
		fmt.Fprintln(stderr, "fixture: -http and -sse are exclusive")
		return 2
	}
	if *stateless && *httpAddr == "" {
		fmt.Fprintln(stderr, "fixture: -stateless needs -http")
		return 2
	}
	fmt.Fprintln(stderr, "fixture: started")
	// FIXTURE_STARTS names a file that gets one line per start, so tests can
	// count how many processes a connect started (probe siblings included).
	if path := os.Getenv("FIXTURE_STARTS"); path != "" {
		if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
			fmt.Fprintf(f, "%d\n", os.Getpid())
			f.Close()
		}
	}

	server := fixture.NewServer()
	var err error
	switch {
	case *httpAddr != "":
		var opts *mcp.StreamableHTTPOptions
		if *stateless {
			opts = &mcp.StreamableHTTPOptions{Stateless: true}
		}
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, opts)
		err = serveHTTP(ctx, *httpAddr, "/mcp", h, stdout)
	case *sseAddr != "":
		h := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return server }, nil)
		err = serveHTTP(ctx, *sseAddr, "/sse", h, stdout)
	default:
		err = server.Run(ctx, &mcp.StdioTransport{})
		// The client closing stdin, or a signal, is the normal end.
		if ctx.Err() != nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
			err = nil
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "fixture: %v\n", err)
		return 1
	}
	return 0
}

// serveHTTP serves h at path on addr until ctx ends, printing the endpoint
// URL to stdout once the listener is open.
func serveHTTP(ctx context.Context, addr, path string, h http.Handler, stdout io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(path, h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "http://%s%s\n", ln.Addr(), path)

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Open SSE streams never finish on their own; give them a moment, then
	// close whatever is left.
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
