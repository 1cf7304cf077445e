// Command envreport is a go-sdk MCP server on stdin/stdout that reports the
// environment it was started with, so a test can see exactly what a stdio
// server inherits from the host.
//
// Build (from the module root):
//
//	go build -o envreport ./testdata/servers/envreport
//
// Tests build it with internal/testbin:
//
//	testbin.Build(t, "github.com/mcphost/mcphost/testdata/servers/envreport")
//
// Tool: environ {} → structuredContent {"env": {NAME: VALUE, ...}} with
// every variable of the process (os.Environ), and the same as NAME=VALUE
// lines, sorted, in the text. It exits 0 when stdin closes.
package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// environOut is the structuredContent of the environ tool.
type environOut struct {
	Env map[string]string `json:"env"`
}

func environ(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, environOut, error) {
	lines := os.Environ()
	slices.Sort(lines)
	out := environOut{Env: make(map[string]string, len(lines))}
	for _, kv := range lines {
		k, v, _ := strings.Cut(kv, "=")
		out.Env[k] = v
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(lines, "\n")}}}, out, nil
}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "envreport", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "environ", Description: "Returns the environment variables of this server process."}, environ)
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintf(os.Stderr, "envreport: %v\n", err)
		os.Exit(1)
	}
}
