package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/httpapi"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/benchpair"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/mcphost/mcphost/negotiate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkAPICall measures a tool call through the HTTP API — bearer
// authentication, JSON decoding, schema validation, the upstream call and
// the durable transcript write — against a direct go-sdk call to its own
// process of the same stdio fixture in the same run. The paired
// sub-benchmark alternates both and reports medians and their ratio.
//
//	go test -run '^$' -bench BenchmarkAPICall -benchmem -count 10 ./host/httpapi/
func BenchmarkAPICall(b *testing.B) {
	bin := testbin.Build(b, "github.com/mcphost/mcphost/testdata/servers/wellbehaved")
	ctx := b.Context()

	direct := benchpair.DirectStdio(b, bin, negotiate.LegacyVersion)

	const token = "bench-token-0123456789abcdef"
	cfg := &config.Config{
		Servers: []config.Server{{
			Name: "fx", Transport: config.TransportStdio, Command: bin, Enabled: true,
			VersionNegotiation: config.NegotiationLegacy, DiscoveryTimeout: 20 * time.Second, CallTimeout: time.Minute,
		}},
		Principals: []config.Principal{{Name: "bench", Token: token}},
	}
	addr := startBenchAPI(b, cfg)

	hc := &http.Client{}
	// post is called from the sub-benchmarks too: it returns its failure
	// rather than failing b.
	post := func(path string, body []byte) ([]byte, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		buf.ReadFrom(resp.Body)
		if resp.StatusCode/100 != 2 {
			return nil, fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, buf.String())
		}
		return buf.Bytes(), nil
	}
	created, err := post("/api/v1/sessions", nil)
	if err != nil {
		b.Fatal(err)
	}
	var sess struct{ ID string }
	if err := json.Unmarshal(created, &sess); err != nil {
		b.Fatal(err)
	}
	callPath := fmt.Sprintf("/api/v1/sessions/%s/calls", sess.ID)
	body := []byte(`{"server":"fx","tool":"echo","arguments":{"text":"hello from the benchmark"}}`)

	directCall := func() error {
		_, err := direct.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello from the benchmark"}})
		return err
	}
	apiCall := func() error {
		_, err := post(callPath, body)
		return err
	}
	benchpair.Compare(b, "api", directCall, apiCall)
}

// startBenchAPI starts a daemon of cfg (a SQLite store in b's temporary
// directory, the host and its HTTP API on 127.0.0.1) until b ends, waits
// for its servers, and returns its address.
func startBenchAPI(b *testing.B, cfg *config.Config) (addr string) {
	b.Helper()
	ctx := b.Context()
	st, err := store.Open(ctx, b.TempDir()+"/bench.db", nil)
	if err != nil {
		b.Fatal(err)
	}
	h, err := host.New(cfg, host.Options{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr = ln.Addr().String()
	handler := httpapi.New(h, httpapi.Options{Hosts: []string{addr}})
	sctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	served := make(chan struct{})
	h.Start(sctx)
	go func() { h.Serve(sctx, ln, handler); close(served) }()
	b.Cleanup(func() { stop(); <-served; h.Close(); st.Close() })
	if err := h.WaitSettled(ctx); err != nil {
		b.Fatal(err)
	}
	return addr
}
