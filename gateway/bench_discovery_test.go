package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// syntheticServers starts n in-process MCP servers on 127.0.0.1 with
// perServer tools each, of the size and shape of ordinary npm servers'
// (a name of two or three words, a description of a sentence or two, a
// schema of three parameters), and returns their blocks.
func syntheticServers(tb testing.TB, n, perServer int) []config.Server {
	tb.Helper()
	verbs := []string{"list", "get", "create", "update", "delete", "search", "merge", "archive", "export", "sync"}
	nouns := []string{"issues", "pull_requests", "files", "branches", "messages", "channels", "pods", "deployments", "invoices", "customers",
		"tickets", "documents", "events", "records", "users", "tables", "buckets", "alerts", "dashboards", "notes"}
	var blocks []config.Server
	for s := range n {
		srv := mcp.NewServer(&mcp.Implementation{Name: fmt.Sprintf("svc%d", s), Version: "1"}, nil)
		for i := range perServer {
			verb, noun := verbs[i%len(verbs)], nouns[(i/len(verbs)+s)%len(nouns)]
			name := fmt.Sprintf("%s_%s_%d", verb, noun, i)
			schema := fmt.Sprintf(`{"type":"object","properties":{`+
				`"id":{"type":"string","description":"The identifier of the %[2]s item to %[1]s, as returned by the list call."},`+
				`"limit":{"type":"integer","minimum":1,"maximum":100,"description":"At most this many %[2]s are returned (default 30)."},`+
				`"filter":{"type":"string","enum":["open","closed","all"],"description":"Which %[2]s to %[1]s by their state."}},"required":["id"]}`, verb, noun)
			srv.AddTool(&mcp.Tool{Name: name,
				Description: fmt.Sprintf("%s %s of the service svc%d. Use it when the user asks to %s one or more %s; returns them as JSON with their ids, titles and states.", verb, noun, s, verb, noun),
				InputSchema: json.RawMessage(schema)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			})
		}
		hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
		tb.Cleanup(hs.Close)
		blocks = append(blocks, config.Server{Name: fmt.Sprintf("svc%d", s), Transport: config.TransportStreamableHTTP, URL: hs.URL,
			VersionNegotiation: config.NegotiationLegacy, DiscoveryTimeout: 20 * time.Second, CallTimeout: time.Minute, Enabled: true})
	}
	return blocks
}

// BenchmarkDiscovery measures what tools/list costs a client in list mode
// and in search mode over 300 and 3,000 tools (20 servers), and the time
// of one search_tools call through the gateway (2026-07-28 client).
//
//	go test -run '^$' -bench BenchmarkDiscovery -benchtime 200x ./gateway/
func BenchmarkDiscovery(b *testing.B) {
	for _, tools := range []int{300, 3000} {
		b.Run(fmt.Sprintf("tools=%d", tools), func(b *testing.B) {
			blocks := syntheticServers(b, 20, tools/20)
			sizes := map[string]int{}
			var cs *mcp.ClientSession
			for _, mode := range []string{config.DiscoveryList, config.DiscoverySearch} {
				e := newEnvConfig(b, &config.Config{Servers: blocks, Gateway: config.Gateway{Discovery: mode}})
				c := e.connect(b, "/mcp", aliceToken, modernVersion, nil)
				res, err := c.ListTools(b.Context(), nil)
				if err != nil {
					b.Fatal(err)
				}
				if mode == config.DiscoveryList && len(res.Tools) != tools {
					b.Fatalf("list mode lists %d tools, want %d", len(res.Tools), tools)
				}
				raw, _ := json.Marshal(res.Tools)
				sizes[mode] = len(raw)
				cs = c
			}
			queries := []string{"create a github issue", "delete old deployments", "export invoices of a customer", "search messages in a channel"}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": queries[i%len(queries)]}})
				if err != nil || res.IsError {
					b.Fatalf("search_tools: %v %v", res, err)
				}
			}
			// After the loop: ResetTimer drops the metrics reported before it.
			b.ReportMetric(float64(sizes[config.DiscoveryList]), "list-bytes")
			b.ReportMetric(float64(sizes[config.DiscoverySearch]), "search-bytes")
		})
	}
}
