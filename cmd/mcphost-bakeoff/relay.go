package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// relayCommand is the hidden subcommand that runs the bare go-sdk relay:
//
//	mcphost-bakeoff relay -upstream URL -listen 127.0.0.1:0 -version V
//
// It prints its endpoint URL on stdout once it listens and serves until
// SIGINT or SIGTERM.
const relayCommand = "relay"

// runRelay serves what any MCP proxy built on go-sdk costs before it does
// anything: a go-sdk server (Streamable HTTP, stateless) whose one tool
// forwards each call's raw arguments through one go-sdk client session to
// the upstream, as gateway/bench_test.go's startBareRelay does in process.
func runRelay(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcphost-bakeoff relay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	upstream := fs.String("upstream", "", "the upstream's Streamable HTTP `URL`")
	listen := fs.String("listen", "127.0.0.1:0", "listen on `ADDR`")
	version := fs.String("version", "", "the protocol `VERSION` the upstream session pins")
	tool := fs.String("tool", "echo", "the upstream tool the relay serves under the same `NAME`")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if *upstream == "" || *version == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "mcphost-bakeoff relay: -upstream and -version are required, and nothing else")
		return exitUsage
	}
	if err := serveRelay(ctx, *upstream, *listen, *version, *tool, stdout); err != nil {
		fmt.Fprintf(stderr, "mcphost-bakeoff relay: %v\n", err)
		return exitFailure
	}
	return exitOK
}

func serveRelay(ctx context.Context, upstream, listen, version, tool string, stdout io.Writer) error {
	client := mcp.NewClient(&mcp.Implementation{Name: "bakeoff-relay", Version: "1"}, nil)
	// Every caller's call shares this one session: its idle pool must
	// hold a connection per concurrent call, as mcphost's does, or the
	// relay dials again for most calls beyond four callers and the run
	// measures the dialling.
	tr := newTransport()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 100, 100
	hc := &http.Client{Transport: tr}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	up, err := client.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: upstream, HTTPClient: hc},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	cancel()
	if err != nil {
		return fmt.Errorf("connect %s: %w", upstream, err)
	}
	defer up.Close()
	srv := mcp.NewServer(&mcp.Implementation{Name: "bakeoff-relay", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: tool, InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return up.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: req.Params.Arguments})
		})
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	fmt.Fprintf(stdout, "http://%s/mcp\n", ln.Addr())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer scancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
