package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/upstream"
	"github.com/mcphost/mcphost/internal/benchpair"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkAppResolve measures the cost of MCP App resolution per call
// (apps.md §5): a call of the revenue demo's App tool through the host
// followed by the App's resolution (resources/read of ui://revenue-dashboard
// on the same session, exact-URI, MIME, UTF-8 and size checks, CSP merge,
// the display record and its JSON), against the physical limits over stdio
// in the same run: a direct go-sdk tools/call ("vs-call": what resolving an
// App adds to a call), and a direct tools/call plus resources/read
// ("vs-call-read": the overhead of the host's part beyond the extra round
// trip). The demo sets no ttlMs, so every resolution reads the resource.
// The host side includes encoding the record as JSON for the entry.
//
//	go test -run '^$' -bench BenchmarkAppResolve -benchmem -count 5 ./host/
func BenchmarkAppResolve(b *testing.B) {
	bin := testbin.Build(b, "github.com/mcphost/mcphost/testdata/servers/revenue")
	ctx := b.Context()
	direct := benchpair.DirectStdio(b, bin, upstream.LegacyProtocolVersion)

	s := config.Server{
		Name: "revenue", Transport: config.TransportStdio, Command: bin, Enabled: true,
		VersionNegotiation: config.NegotiationLegacy, DiscoveryTimeout: config.DefaultDiscoveryTimeout,
		CallTimeout: config.DefaultCallTimeout, Apps: config.AppsAuto,
		AppResourceMaxBytes: config.DefaultAppResourceMaxBytes, AppResourceTimeout: config.DefaultAppResourceTimeout,
	}
	h, err := New(&config.Config{Servers: []config.Server{s}}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	h.Start(ctx)
	b.Cleanup(func() { h.Close() })
	if err := h.WaitSettled(ctx); err != nil {
		b.Fatal(err)
	}
	c := h.gen().ByName["revenue"]
	cs, cat, err := c.Current()
	if err != nil {
		b.Fatal(err)
	}
	const tool = "show_revenue_dashboard"
	args := json.RawMessage(`{"quarter":"Q3"}`)

	directCall := func() error {
		res, err := direct.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil || res.IsError {
			return fmt.Errorf("direct call: %v (isError %v)", err, res != nil && res.IsError)
		}
		return nil
	}
	directCallRead := func() error {
		if err := directCall(); err != nil {
			return err
		}
		r, err := direct.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ui://revenue-dashboard"})
		if err != nil || len(r.Contents) != 1 {
			return fmt.Errorf("direct read: %v", err)
		}
		return nil
	}
	hostApp := func() error {
		res, err := c.CallTool(ctx, cs, tool, args, nil, nil)
		if err != nil || res.IsError {
			return fmt.Errorf("host call: %v (isError %v)", err, res != nil && res.IsError)
		}
		d := h.resolveApp(ctx, c, cs, cat, cat.ToolIndex[tool], args, res)
		if d == nil {
			return errors.New("no App display record")
		}
		if raw, err := json.Marshal(d); err != nil || len(raw) < 10000 {
			return fmt.Errorf("display record of %d bytes: %v", len(raw), err)
		}
		return nil
	}
	b.Run("vs-call", func(b *testing.B) { benchpair.Compare(b, "app", directCall, hostApp) })
	b.Run("vs-call-read", func(b *testing.B) { benchpair.Compare(b, "app", directCallRead, hostApp) })
}
