package host_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/benchpair"
	"github.com/mcphost/mcphost/internal/benchrules"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/mcphost/mcphost/negotiate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCallTool measures a tool call through the host registry against
// the physical limit: a direct go-sdk call to its own process of the same
// stdio fixture, in the same run (../shared/docs/performance.md). The paired
// sub-benchmark alternates the two calls in one loop so drift hits both, and
// reports medians, p99s and their ratios.
//
//	go test -run '^$' -bench BenchmarkCallTool -benchmem -count 10 ./host/
func BenchmarkCallTool(b *testing.B) {
	bin := testbin.Build(b, wellbehavedPkg)
	ctx := b.Context()

	direct := benchpair.DirectStdio(b, bin, negotiate.LegacyVersion)
	s := stdioServer("fx", bin)
	h, err := host.New(&config.Config{Servers: []config.Server{s}}, host.Options{})
	if err != nil {
		b.Fatal(err)
	}
	h.Start(ctx)
	b.Cleanup(func() { h.Close() })
	if err := h.WaitSettled(ctx); err != nil {
		b.Fatal(err)
	}
	if st, _ := h.Server("fx"); st.State != host.StateReady {
		b.Fatalf("fixture not ready: %s", st.LastError)
	}

	const argsJSON = `{"text":"hello from the benchmark"}`
	directCall := func() error {
		res, err := direct.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello from the benchmark"}})
		if err != nil || res.IsError {
			return fmt.Errorf("direct call: %v (isError %v)", err, res != nil && res.IsError)
		}
		return nil
	}
	hostCall := func() error {
		res, err := h.CallTool(ctx, host.CallToolRequest{Server: "fx", Tool: "echo", Arguments: json.RawMessage(argsJSON)})
		if err != nil || res.IsError {
			return fmt.Errorf("host call: %v (isError %v)", err, res != nil && res.IsError)
		}
		return nil
	}
	benchpair.Compare(b, "host", directCall, hostCall)
}

// benchHost starts a host over the stdio fixture bin with the extra HCL
// (policies, plugins) parsed from extra.
func benchHost(b *testing.B, bin, extra string) *host.Host {
	b.Helper()
	cfg, diags := config.Parse([]byte(extra), "bench.hcl", config.Options{})
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	cfg.Servers = []config.Server{stdioServer("fx", bin)}
	h, err := host.New(cfg, host.Options{PluginCacheDir: testbin.PluginCacheDir(b)})
	if err != nil {
		b.Fatal(err)
	}
	h.Start(b.Context())
	b.Cleanup(func() { h.Close() })
	if err := h.WaitSettled(b.Context()); err != nil {
		b.Fatal(err)
	}
	return h
}

// benchEcho returns a benchpair callback: one echo call through h.
func benchEcho(b *testing.B, h *host.Host, args json.RawMessage) func() error {
	p := host.Principal{Name: "alice", Groups: []string{"analysts", "writers"}}
	return func() error {
		res, err := h.CallTool(b.Context(), host.CallToolRequest{Server: "fx", Tool: "echo", Arguments: args, Principal: p})
		if err != nil || res.IsError {
			return fmt.Errorf("call: %v (isError %v)", err, res != nil && res.IsError)
		}
		return nil
	}
}

// BenchmarkCallToolPolicies compares a host call with ten active rules (on
// a 2 KB argument) against the same call on a host without policies, in
// the same run; "p50-x-direct" is then the ratio with rules to without.
//
//	go test -run '^$' -bench BenchmarkCallToolPolicies -count 5 ./host/
func BenchmarkCallToolPolicies(b *testing.B) {
	bin := testbin.Build(b, wellbehavedPkg)
	args, _ := json.Marshal(map[string]any{"text": strings.Repeat("x", 2000)})
	plain := benchHost(b, bin, "")
	ruled := benchHost(b, bin, benchrules.HCL)
	benchpair.Compare(b, "policies", benchEcho(b, plain, args), benchEcho(b, ruled, args))
}

// BenchmarkCallToolPlugin compares a host call whose result goes through
// one result plugin (the identity example, and redact) against the same
// call without plugins, in the same run, on a 2 KB result.
//
//	go test -run '^$' -bench BenchmarkCallToolPlugin -count 5 ./host/
func BenchmarkCallToolPlugin(b *testing.B) {
	bin := testbin.Build(b, wellbehavedPkg)
	args, _ := json.Marshal(map[string]any{"text": strings.Repeat("x", 2000)})
	plain := benchHost(b, bin, "")
	for _, name := range []string{"identity", "redact"} {
		b.Run(name, func(b *testing.B) {
			wasm := testbin.ExamplePlugin(b, name)
			plugged := benchHost(b, bin, fmt.Sprintf(`
plugin %q {
  path   = %q
  stages = ["result"]
  config = { pattern = "sk-[A-Za-z0-9]{20,}" }
}
`, name, wasm))
			benchpair.Compare(b, name, benchEcho(b, plain, args), benchEcho(b, plugged, args))
		})
	}
}

// BenchmarkSessionCallPolicies is BenchmarkCallToolPolicies on the whole
// session call path (Host.Call: session check, schema check, policies,
// upstream call, the durable transcript write), which the API and the
// WebShell use: ten rules against none, each host with its own store.
//
//	go test -run '^$' -bench BenchmarkSessionCallPolicies -count 5 ./host/
func BenchmarkSessionCallPolicies(b *testing.B) {
	bin := testbin.Build(b, wellbehavedPkg)
	args, _ := json.Marshal(map[string]any{"text": strings.Repeat("x", 2000)})
	sessionCall := func(extra string) func() error {
		cfg, diags := config.Parse([]byte(extra), "bench.hcl", config.Options{})
		if diags.HasErrors() {
			b.Fatal(diags)
		}
		cfg.Servers = []config.Server{stdioServer("fx", bin)}
		st, err := store.Open(b.Context(), b.TempDir()+"/m.db", nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		h, err := host.New(cfg, host.Options{Store: st})
		if err != nil {
			b.Fatal(err)
		}
		h.Start(b.Context())
		b.Cleanup(func() { h.Close() })
		if err := h.WaitSettled(b.Context()); err != nil {
			b.Fatal(err)
		}
		p := host.Principal{Name: "alice", Groups: []string{"analysts", "writers"}}
		sess, err := h.CreateSession(b.Context(), p, "bench")
		if err != nil {
			b.Fatal(err)
		}
		return func() error {
			e, err := h.Call(b.Context(), host.SessionCall{Principal: p, SessionID: sess.ID, Server: "fx", Tool: "echo", Arguments: args})
			if err != nil {
				return fmt.Errorf("call: %v", err)
			}
			if e.Status != store.StatusOK {
				return fmt.Errorf("call: status %s", e.Status)
			}
			return nil
		}
	}
	benchpair.Compare(b, "policies", sessionCall(""), sessionCall(benchrules.HCL))
}
