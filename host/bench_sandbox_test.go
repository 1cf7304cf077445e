package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/benchpair"
	"github.com/mcphost/mcphost/internal/testbin"
)

// BenchmarkSandbox measures what containing a stdio server costs, against
// the same server unsandboxed (sandbox { mode = "off" }) in the same run:
// "start" is a host connecting the server from nothing to ready (process,
// initialize, tools/list), "call" a tools/call on a running one. The
// "paired" sub-benchmarks report p50-x-direct, contained over unsandboxed.
//
//	go test -run '^$' -bench BenchmarkSandbox -count 3 ./host/
func BenchmarkSandbox(b *testing.B) {
	needSandboxB(b)
	bin := testbin.Build(b, wellbehavedPkg)
	server := func(mode string) config.Server {
		s := stdioServer("fx", bin)
		s.Sandbox.Mode = mode
		return s
	}
	b.Run("start", func(b *testing.B) {
		start := func(mode string) func() error {
			return func() error {
				h, err := host.New(&config.Config{Servers: []config.Server{server(mode)}}, host.Options{})
				if err != nil {
					return err
				}
				defer h.Close()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				h.Start(ctx)
				if err := h.WaitSettled(ctx); err != nil {
					return err
				}
				if st, _ := h.Server("fx"); st.State != host.StateReady {
					return fmt.Errorf("%s: %s", mode, st.LastError)
				}
				return nil
			}
		}
		benchpair.Compare(b, "contained", start(config.SandboxOff), start(config.SandboxEnforce))
	})
	b.Run("call", func(b *testing.B) {
		open := func(mode string) func() error {
			h, err := host.New(&config.Config{Servers: []config.Server{server(mode)}}, host.Options{})
			if err != nil {
				b.Fatal(err)
			}
			h.Start(b.Context())
			b.Cleanup(func() { h.Close() })
			if err := h.WaitSettled(b.Context()); err != nil {
				b.Fatal(err)
			}
			return func() error {
				res, err := h.CallTool(context.Background(), host.CallToolRequest{Server: "fx", Tool: "echo", Arguments: json.RawMessage(`{"text":"hello"}`)})
				if err != nil || res.IsError {
					return fmt.Errorf("%s call: %v", mode, err)
				}
				return nil
			}
		}
		benchpair.Compare(b, "contained", open(config.SandboxOff), open(config.SandboxEnforce))
	})
}

func needSandboxB(b *testing.B) {
	b.Helper()
	if p := confineProbe(); !p.Ready() {
		b.Skipf("no sandbox here: %s", p)
	}
}
