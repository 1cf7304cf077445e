// Command wasi-echo is an MCP server for mcphost's `wasm` servers: a plain
// go-sdk server on stdio, compiled to a WASI command. It has two tools:
//
//	echo {text}       returns text
//	read_file {path}  returns the file's content; only the directories the
//	                  server block grants (read = [...], write = [...]) are
//	                  visible, at the same path as on the host
//
// Build (from examples/wasm):
//
//	GOOS=wasip1 GOARCH=wasm go build -o echo.wasm ./wasi-echo
//
// The same source builds natively too (go build ./wasi-echo); the
// benchmarks of package wasmserver run both to compare.
package main

import (
	"context"
	"log"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoArgs struct {
	Text string `json:"text" jsonschema:"the text to return"`
}

type readArgs struct {
	Path string `json:"path" jsonschema:"an absolute path inside a granted directory"`
}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "wasi-echo", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns its text."}, echo)
	mcp.AddTool(s, &mcp.Tool{Name: "read_file", Description: "Returns a file's content."}, readFile)
	// The server ends when stdin does: mcphost closes it to stop the server.
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}

func echo(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
	return text(in.Text), nil, nil
}

func readFile(_ context.Context, _ *mcp.CallToolRequest, in readArgs) (*mcp.CallToolResult, any, error) {
	b, err := os.ReadFile(in.Path)
	if err != nil {
		return nil, nil, err // an error result, not a protocol error
	}
	return text(string(b)), nil, nil
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
