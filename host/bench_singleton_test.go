package host_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/benchpair"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/mcphost/mcphost/negotiate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkSingletonRelay measures what placement = "singleton" costs a
// call made on a replica that does not run the server: two replicas on one
// PostgreSQL, a runs the elicit fixture, b relays to it. For each era,
// "holder" pairs a direct go-sdk call to a process of the fixture of its
// own (the physical limit) with the same call through a's host, and
// "relayed" pairs a's host with b's, so its ratio is the relay hop alone
// (b's pipeline, one loopback HTTP request to a, a's session). The tool is
// count, which answers at once.
//
//	CI=1 go test -run '^$' -bench BenchmarkSingletonRelay -count 3 ./host/
func BenchmarkSingletonRelay(b *testing.B) {
	bin := testbin.Build(b, elicitPkg)
	for _, era := range eras {
		b.Run(era.name, func(b *testing.B) {
			a, r := startSingletonPair(b, era.negotiation)
			version := negotiate.LegacyVersion
			if era.era == host.EraModern {
				version = "2026-07-28"
			}
			direct := benchpair.DirectStdio(b, bin, version)
			ctx := b.Context()
			count := func(what string, call func() (*mcp.CallToolResult, error)) func() error {
				return func() error {
					res, err := call()
					if err != nil || res.IsError || len(res.Content) != 1 {
						return fmt.Errorf("%s: %v %+v", what, err, res)
					}
					if _, err := strconv.Atoi(res.Content[0].(*mcp.TextContent).Text); err != nil {
						return fmt.Errorf("%s: count answered %+v", what, res.Content[0])
					}
					return nil
				}
			}
			directCall := count("direct", func() (*mcp.CallToolResult, error) {
				return direct.CallTool(ctx, &mcp.CallToolParams{Name: "count"})
			})
			on := func(h *host.Host, what string) func() error {
				return count(what, func() (*mcp.CallToolResult, error) {
					return h.CallTool(ctx, host.CallToolRequest{Server: "ask", Tool: "count"})
				})
			}
			b.Run("holder", func(b *testing.B) { benchpair.Compare(b, "holder", directCall, on(a.h, "on the holder")) })
			// Here the "direct" side is the call on the holder.
			b.Run("relayed", func(b *testing.B) { benchpair.Compare(b, "relayed", on(a.h, "on the holder"), on(r.h, "relayed")) })
		})
	}
}
