package host

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/pipeline"
	"github.com/mcphost/mcphost/internal/benchrules"
	"github.com/mcphost/mcphost/policies"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkPolicyStages measures what the policies add to one call inside
// the host, apart from any server: building the input (server status,
// tool, principal), the call phase (list rules first) with the arguments the
// schema check decoded, converting a 2 KB result and the result phase, for
// ten rules none of which matches. The call-path benchmarks compare two
// hosts with their own fixture processes; this isolates the host's own
// work.
//
//	go test -run '^$' -bench BenchmarkPolicyStages -benchmem -count 5 ./host/
func BenchmarkPolicyStages(b *testing.B) {
	for _, tc := range []struct{ name, hcl string }{{"none", ""}, {"ten-rules", benchrules.HCL}} {
		b.Run(tc.name, func(b *testing.B) {
			cfg, diags := config.Parse([]byte(tc.hcl), "bench.hcl", config.Options{})
			if diags.HasErrors() {
				b.Fatal(diags)
			}
			cfg.Servers = []config.Server{{Name: "fx", Transport: config.TransportStdio, Command: "fx", Enabled: true}}
			h, err := New(cfg, Options{})
			if err != nil {
				b.Fatal(err)
			}
			c := h.gen().ByName["fx"]
			tool := &mcp.Tool{Name: "echo", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}
			text := strings.Repeat("x", 2000)
			args, _ := json.Marshal(map[string]any{"text": text})
			res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
			p := Principal{Name: "alice", Groups: []string{"analysts", "writers"}}
			ctx := b.Context()
			b.ReportAllocs()
			for b.Loop() {
				var decoded any
				if err := json.Unmarshal(args, &decoded); err != nil { // done by the schema check anyway
					b.Fatal(err)
				}
				trail := &pipeline.Trail{}
				pol := pipeline.NewPolicy(h.gen(), p, c, tool, OriginAPI, args, decoded, trail)
				if d := pol.Decide(ctx, policies.PhaseCall); !d.Allowed() {
					b.Fatalf("denied: %+v", d)
				}
				if h.gen().Policies != nil {
					pol.In.Result = policies.ResultFromMCP(res)
					if d := pol.Decide(ctx, policies.PhaseResult); !d.Allowed() {
						b.Fatalf("denied: %+v", d)
					}
				}
				_ = trail.Raw()
			}
		})
	}
}
