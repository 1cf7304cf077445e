// Command modernonly is a go-sdk MCP server on stdin/stdout that speaks only
// MCP 2026-07-28: ServerOptions.SupportedProtocolVersions is
// ["2026-07-28"], and a receiving middleware refuses initialize with
// -32022 (UnsupportedProtocolVersion, data.supported ["2026-07-28"]) —
// go-sdk alone would answer a legacy initialize with 2025-11-25 instead. It
// answers server/discover and serves requests that carry the per-request
// _meta triple.
//
// Build (from the module root):
//
//	go build -o modernonly ./testdata/servers/modernonly
//
// Tests build it with internal/testbin:
//
//	testbin.Build(t, "github.com/mcphost/mcphost/testdata/servers/modernonly")
//
// Tools: echo {text} → text; add {a, b} → the sum as text.
//
// Flags:
//
//	-record FILE  append one JSON line per received request or notification
//	              frame, recorded as read off the wire (before any handler):
//	              {"pid": N, "method": "...", "call": true|false,
//	              "meta": <params._meta or null>}
//
// It writes "modernonly: started" to stderr and exits 0 when stdin closes.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const modern = "2026-07-28"

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("modernonly", flag.ContinueOnError)
	recordPath := fs.String("record", "", "append received frames to `file`")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fmt.Fprintln(os.Stderr, "modernonly: started")
	rec := &recorder{}
	if *recordPath != "" {
		f, err := os.OpenFile(*recordPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintf(os.Stderr, "modernonly: %v\n", err)
			return 1
		}
		defer f.Close()
		rec.f = f
	}

	s := mcp.NewServer(&mcp.Implementation{Name: "modernonly", Version: "1.0.0"},
		&mcp.ServerOptions{SupportedProtocolVersions: []string{modern}})
	s.AddReceivingMiddleware(rejectInitialize)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns its text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			A float64 `json:"a"`
			B float64 `json:"b"`
		}) (*mcp.CallToolResult, any, error) {
			sum := strconv.FormatFloat(in.A+in.B, 'f', -1, 64)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: sum}}}, nil, nil
		})

	err := s.Run(context.Background(), &recordingTransport{Transport: &mcp.StdioTransport{}, rec: rec})
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, mcp.ErrConnectionClosed) {
		fmt.Fprintf(os.Stderr, "modernonly: %v\n", err)
		return 1
	}
	return 0
}

// rejectInitialize refuses the legacy handshake with -32022 naming the one
// version this server speaks.
func rejectInitialize(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "initialize" {
			return next(ctx, method, req)
		}
		requested := ""
		if p, ok := req.GetParams().(*mcp.InitializeParams); ok && p != nil {
			requested = p.ProtocolVersion
		}
		data, _ := json.Marshal(mcp.UnsupportedProtocolVersionData{Supported: []string{modern}, Requested: requested})
		return nil, &jsonrpc.Error{
			Code:    mcp.CodeUnsupportedProtocolVersion,
			Message: "initialize is not supported: this server speaks only " + modern,
			Data:    data,
		}
	}
}

// recorder appends one line per received request or notification.
type recorder struct {
	mu sync.Mutex
	f  *os.File
}

func (r *recorder) record(req *jsonrpc.Request) {
	if r.f == nil {
		return
	}
	var p struct {
		Meta json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(req.Params, &p)
	b, _ := json.Marshal(map[string]any{"pid": os.Getpid(), "method": req.Method, "call": req.ID.IsValid(), "meta": p.Meta})
	r.mu.Lock()
	defer r.mu.Unlock()
	r.f.Write(append(b, '\n'))
}

type recordingTransport struct {
	mcp.Transport
	rec *recorder
}

func (t *recordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recordingConn{Connection: c, rec: t.rec}, nil
}

type recordingConn struct {
	mcp.Connection
	rec *recorder
}

func (c *recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && err == nil {
		c.rec.record(req)
	}
	return msg, err
}
