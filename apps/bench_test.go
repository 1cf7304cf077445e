package apps

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkResolve measures the CPU cost of Resolve alone (no transport):
// a 16 KiB App with a declared CSP, read from memory, every check of §5,
// the CSP merge and the JSON copy of the result, then the record encoded as
// JSON as the host stores it. The end-to-end cost per call, with the
// resources/read over stdio, is BenchmarkAppResolve in host.
//
//	go test -run '^$' -bench BenchmarkResolve -benchmem ./apps/
func BenchmarkResolve(b *testing.B) {
	html := "<!doctype html><title>bench</title>" + strings.Repeat("<p>figure é</p>", 16<<10/16)
	res := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
		URI: "ui://bench", MIMEType: MIMEType, Text: html,
		Meta: mcp.Meta{"ui": map[string]any{"csp": map[string]any{"connectDomains": []any{"https://api.example.com"}, "resourceDomains": []any{"https://cdn.example.com"}}}},
	}}}
	reader := fakeReaderFunc(func(context.Context, string) (*mcp.ReadResourceResult, error) { return res, nil })
	result := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Revenue Q3: $4.98M"}}, StructuredContent: map[string]any{"quarter": "Q3", "total": 4980000}}
	link := Link{ResourceURI: "ui://bench", ModelVisible: true, AppVisible: true}
	args := json.RawMessage(`{"quarter":"Q3"}`)
	opts := Options{ServerAdvertises: true, ValidSource: func(string) error { return nil }}
	ctx := b.Context()
	b.ReportAllocs()
	b.SetBytes(int64(len(html)))
	for b.Loop() {
		d := Resolve(ctx, reader, "bench", link, args, result, opts)
		if d == nil || d.HTML == "" {
			b.Fatal("no record")
		}
		if _, err := json.Marshal(d); err != nil {
			b.Fatal(err)
		}
	}
}
