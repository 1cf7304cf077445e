package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/gateway"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/benchpair"
	"github.com/mcphost/mcphost/internal/benchrules"
	"github.com/mcphost/mcphost/internal/pgtest"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/mcphost/mcphost/policies"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startHTTPFixture runs the wellbehaved fixture as a Streamable HTTP server
// (go-sdk's stateless mode, both eras) and returns its endpoint.
func startHTTPFixture(tb testing.TB) string {
	tb.Helper()
	cmd := exec.Command(testbin.Build(tb, wellbehavedPkg), "-http", "127.0.0.1:0", "-stateless")
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		tb.Fatalf("the fixture printed no URL: %v", err)
	}
	return strings.TrimSpace(line)
}

// connectURL opens a go-sdk client session on url, with a bearer token
// when one is given.
func connectURL(tb testing.TB, url, token, version string) *mcp.ClientSession {
	tb.Helper()
	hc := &http.Client{Transport: http.DefaultTransport}
	if token != "" {
		hc.Transport = bearer{token: token, next: http.DefaultTransport}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		tb.Fatalf("connect %s: %v", url, err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

// startBareRelay serves what any gateway built on go-sdk costs before it
// does anything: a go-sdk server whose one tool forwards the raw arguments
// through a go-sdk client session (up) to the upstream, over Streamable
// HTTP. It returns the relay's endpoint.
func startBareRelay(tb testing.TB, up *mcp.ClientSession) string {
	tb.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "bare-relay", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return up.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: req.Params.Arguments})
		})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)}
	go hs.Serve(ln)
	tb.Cleanup(func() { hs.Close() })
	return "http://" + ln.Addr().String()
}

// gatewayEnv runs the gateway in front of one server block, with the ten
// benchmark rules and a transcript with the given store sync.
func gatewayEnv(b *testing.B, server config.Server, sync, postgres string) *env {
	cfg, diags := config.Parse([]byte(benchrules.HCL), "bench.hcl", config.Options{})
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	cfg.Servers = []config.Server{server}
	cfg.Store.Sync, cfg.Store.Postgres = sync, postgres
	e := newEnvConfig(b, cfg)
	if st := e.h.Servers()[0]; st.State != host.StateReady {
		b.Fatalf("fx is %s: %s", st.State, st.LastError)
	}
	return e
}

// BenchmarkGatewayCall measures one tools/call (a 2 KB echo) three ways,
// alternated in one loop: a direct go-sdk call to the upstream; a bare
// go-sdk relay (Streamable HTTP in front, a go-sdk client behind); and the
// gateway (Streamable HTTP in front) with ten rules and a transcript. Each
// side has the same kind of upstream: the same Streamable HTTP server
// (http-*), or a stdio process of its own (stdio-*). The cases name the
// era every side speaks and the store's sync. It reports each side's p50
// and p99 and the ratios gateway/relay, gateway/direct and relay/direct.
//
//	go test -run '^$' -bench BenchmarkGatewayCall -count 5 ./gateway/
func BenchmarkGatewayCall(b *testing.B) {
	args := map[string]any{"text": strings.Repeat("x", 2000)}
	for _, tc := range []struct {
		name, upstream, version, sync string
	}{
		{"http-legacy-normal", "http", legacyVersion, config.StoreSyncNormal},
		{"http-modern-normal", "http", modernVersion, config.StoreSyncNormal},
		{"http-legacy-full", "http", legacyVersion, config.StoreSyncFull},
		{"stdio-legacy-normal", "stdio", legacyVersion, config.StoreSyncNormal},
		// The transcript on PostgreSQL (a local server, pgtest: fsync
		// off, synchronous_commit on), as a replica of a cluster writes it.
		{"http-legacy-postgres", "http", legacyVersion, config.StoreSyncFull},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var direct, relayUp *mcp.ClientSession
			server := config.Server{Name: "fx", DiscoveryTimeout: 20 * time.Second, CallTimeout: time.Minute,
				Enabled: true, Apps: config.AppsAuto, VersionNegotiation: config.NegotiationLegacy, HTTPProbeTimeout: config.HTTPProbeTimeoutFallback}
			if tc.version >= modernVersion {
				server.VersionNegotiation = config.NegotiationAuto
			}
			switch tc.upstream {
			case "http":
				url := startHTTPFixture(b)
				direct, relayUp = connectURL(b, url, "", tc.version), connectURL(b, url, "", tc.version)
				server.Transport, server.URL = config.TransportStreamableHTTP, url
			default:
				bin := testbin.Build(b, wellbehavedPkg)
				direct, relayUp = benchpair.DirectStdio(b, bin, tc.version), benchpair.DirectStdio(b, bin, tc.version)
				server.Transport, server.Command = config.TransportStdio, bin
			}
			relay := connectURL(b, startBareRelay(b, relayUp), "", tc.version)
			dsn := ""
			if strings.HasSuffix(tc.name, "-postgres") {
				dsn = pgtest.Start(b).NewDatabase(b)
			}
			e := gatewayEnv(b, server, tc.sync, dsn)
			gw := connectURL(b, e.base+"/mcp", aliceToken, tc.version)
			call := func(cs *mcp.ClientSession, name string) error {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
				if err != nil {
					return err
				}
				if res.IsError {
					return fmt.Errorf("%s: tool error %s", name, textOf(res))
				}
				return nil
			}
			sides := []struct {
				name string
				f    func() error
			}{
				{"direct", func() error { return call(direct, "echo") }},
				{"relay", func() error { return call(relay, "echo") }},
				{"gateway", func() error { return call(gw, "fx__echo") }},
			}
			for range 50 {
				for _, s := range sides {
					if err := s.f(); err != nil {
						b.Fatalf("warm-up %s: %v", s.name, err)
					}
				}
			}
			durations := make([][]time.Duration, len(sides))
			trips := e.st.RoundTrips()
			b.ResetTimer()
			for b.Loop() {
				for i, s := range sides {
					t0 := time.Now()
					if err := s.f(); err != nil {
						b.Fatalf("%s: %v", s.name, err)
					}
					durations[i] = append(durations[i], time.Since(t0))
				}
			}
			p50 := make([]float64, len(sides))
			for i, s := range sides {
				m, p99 := benchpair.Percentiles(durations[i])
				p50[i] = float64(m.Nanoseconds())
				b.ReportMetric(p50[i], s.name+"-p50-ns")
				b.ReportMetric(float64(p99.Nanoseconds()), s.name+"-p99-ns")
			}
			b.ReportMetric(p50[2]/p50[1], "gateway-x-relay")
			b.ReportMetric(p50[2]/p50[0], "gateway-x-direct")
			b.ReportMetric(p50[1]/p50[0], "relay-x-direct")
			if dsn != "" {
				// Round trips of the transcript's writes: each call's
				// entry is one group commit, alone or shared.
				b.ReportMetric(float64(e.st.RoundTrips()-trips)/float64(len(durations[2])), "pg-round-trips/call")
			}
		})
	}
}

// tenListRules are ten list rules that match none of the benchmark's
// tools, so every rule runs on every tool.
func tenListRules() []policies.Rule {
	var rules []policies.Rule
	for i := range 10 {
		rules = append(rules, policies.Rule{Name: fmt.Sprintf("l%d", i), Phase: policies.PhaseList, Effect: policies.EffectDeny,
			When: fmt.Sprintf("tool.name.startsWith('hidden%d_') && !('admins' in principal.groups)", i)})
	}
	return rules
}

// BenchmarkGatewayToolsList lists the tools of 10 servers through /mcp as
// the catalog grows (100, 1,000 and 10,000 tools in all) and with 0 and 10
// list rules: "uncached" is the evaluation of a caller's view (every rule
// on every tool, what the first tools/list after a change costs),
// "tools/list" the round trip a client sees afterwards, paired with a bare
// go-sdk server listing the same tools over the same transport.
//
//	go test -run '^$' -bench BenchmarkGatewayToolsList -count 5 ./gateway/
func BenchmarkGatewayToolsList(b *testing.B) {
	upstream := startHTTPFixture(b)
	seed := connectURL(b, upstream, "", legacyVersion)
	const servers = 10
	// The fixture server is shared by every session: it grows from the
	// smallest catalog to the largest, and each size gets hosts of its own.
	for _, total := range []int{100, 1000, 10000} {
		perServer := total / servers
		res, err := seed.ListTools(b.Context(), nil)
		if err != nil {
			b.Fatal(err)
		}
		for i := len(res.Tools); i < perServer; i++ {
			if _, err := seed.CallTool(b.Context(), &mcp.CallToolParams{Name: "grow", Arguments: map[string]any{"name": fmt.Sprintf("tool_%04d", i)}}); err != nil {
				b.Fatal(err)
			}
		}
		for _, rules := range [][]policies.Rule{nil, tenListRules()} {
			b.Run(fmt.Sprintf("tools=%d/rules=%d", total, len(rules)), func(b *testing.B) {
				toolsList(b, upstream, servers, total, rules)
			})
		}
	}
}

// toolsList is one point of BenchmarkGatewayToolsList: servers servers on
// upstream listing total tools in all, under rules.
func toolsList(b *testing.B, upstream string, servers, total int, rules []policies.Rule) {
	cfg := &config.Config{}
	if len(rules) > 0 {
		set, errs := policies.Compile(rules, policies.EffectAllow)
		if len(errs) > 0 {
			b.Fatal(errs)
		}
		cfg.PolicySet = set
	}
	for i := range servers {
		cfg.Servers = append(cfg.Servers, config.Server{
			Name: fmt.Sprintf("s%02d", i), Transport: config.TransportStreamableHTTP, URL: upstream,
			VersionNegotiation: config.NegotiationLegacy, DiscoveryTimeout: 20 * time.Second,
			CallTimeout: time.Minute, Enabled: true, Apps: config.AppsAuto,
		})
	}
	e := newEnvConfig(b, cfg)
	gw := connectURL(b, e.base+"/mcp", bobToken, legacyVersion)
	lr, err := gw.ListTools(b.Context(), nil)
	if err != nil {
		b.Fatal(err)
	}
	if len(lr.Tools) != total {
		b.Fatalf("listed %d tools, want %d", len(lr.Tools), total)
	}
	caller, _ := e.h.GatewayAuthenticate(bobToken)
	b.Run("uncached", func(b *testing.B) {
		cat := e.h.GatewayCatalog(host.GatewayEndpoint{Prefix: true})
		b.ReportAllocs()
		for b.Loop() {
			if tools, _ := e.h.GatewayFilter(context.Background(), caller, cat); len(tools) != total {
				b.Fatalf("%d tools", len(tools))
			}
		}
	})
	// The round trip as a 2026-07-28 client makes it, on the wire: go-sdk's
	// client would add its own decoding (it re-marshals every tool's input
	// schema to check x-mcp-header annotations, about 30 ms for 1,000
	// tools), which is not the gateway's cost.
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	b.Cleanup(hc.CloseIdleConnections)
	listAt := func(url, token string) (int, error) {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		req.Header.Set("Mcp-Protocol-Version", modernVersion)
		req.Header.Set("Mcp-Method", "tools/list")
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("status %d", resp.StatusCode)
		}
		return int(n), err
	}
	// The physical limit: a go-sdk server of its own listing the same
	// tools (as the gateway lists them) over the same transport.
	// (One page, as the gateway answers: go-sdk pages at 1,000 by default.)
	bare := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "1"}, &mcp.ServerOptions{PageSize: total + 1})
	for _, tl := range lr.Tools {
		cp := *tl
		cp.InputSchema = rawSchemaOf(b, tl.InputSchema)
		if tl.OutputSchema != nil {
			cp.OutputSchema = rawSchemaOf(b, tl.OutputSchema)
		}
		bare.AddTool(&cp, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return bare }, &mcp.StreamableHTTPOptions{Stateless: true})}
	go hs.Serve(ln)
	b.Cleanup(func() { hs.Close() })
	bareURL := "http://" + ln.Addr().String()
	n, err := listAt(e.base+"/mcp", bobToken)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := listAt(bareURL, ""); err != nil {
		b.Fatal(err)
	}
	b.Run("tools/list", func(b *testing.B) {
		b.SetBytes(int64(n))
		var d, g []time.Duration
		for b.Loop() {
			t0 := time.Now()
			if _, err := listAt(bareURL, ""); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			if _, err := listAt(e.base+"/mcp", bobToken); err != nil {
				b.Fatal(err)
			}
			d, g = append(d, t1.Sub(t0)), append(g, time.Since(t1))
		}
		dp50, _ := benchpair.Percentiles(d)
		gp50, _ := benchpair.Percentiles(g)
		b.ReportMetric(float64(dp50.Nanoseconds()), "bare-sdk-p50-ns")
		b.ReportMetric(float64(gp50.Nanoseconds()), "gateway-p50-ns")
		b.ReportMetric(float64(gp50)/float64(dp50), "p50-x-bare-sdk")
	})
}

// rawSchemaOf encodes a schema a client decoded.
func rawSchemaOf(tb testing.TB, schema any) json.RawMessage {
	raw, err := json.Marshal(schema)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

// BenchmarkBridgeCall measures the stdio bridge's round trip: a tools/call
// from go-sdk's client over stdio (in-process pipes) through Bridge to the
// gateway, against the same client calling the gateway's /mcp directly
// over Streamable HTTP, alternated in one loop ("p50-x-direct" is then the
// ratio bridged to direct). Both speak 2025-11-25.
//
//	go test -run '^$' -bench BenchmarkBridgeCall -count 5 ./gateway/
func BenchmarkBridgeCall(b *testing.B) {
	e := newEnv(b, []string{"fx"})
	direct := connectURL(b, e.base+"/mcp", aliceToken, legacyVersion)

	clientIn, bridgeOut := io.Pipe()
	bridgeIn, clientOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- gateway.Bridge(ctx, bridgeIn, bridgeOut, gateway.BridgeOptions{URL: e.base + "/mcp", Token: aliceToken})
	}()
	b.Cleanup(func() {
		clientOut.Close()
		cancel()
		<-done
	})
	client := mcp.NewClient(&mcp.Implementation{Name: "bench-stdio", Version: "1"}, nil)
	cctx, ccancel := context.WithTimeout(context.Background(), waitBound)
	defer ccancel()
	bridged, err := client.Connect(cctx, &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { bridged.Close() })
	args := map[string]any{"text": strings.Repeat("x", 2000)}
	call := func(cs *mcp.ClientSession) func() error {
		return func() error {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fx__echo", Arguments: args})
			if err == nil && res.IsError {
				err = fmt.Errorf("tool error: %s", textOf(res))
			}
			return err
		}
	}
	benchpair.Compare(b, "bridged", call(direct), call(bridged))
}
