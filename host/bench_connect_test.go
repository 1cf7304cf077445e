package host_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/benchpair"
	"github.com/mcphost/mcphost/internal/fixture"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkConnect measures connecting one stdio server (start to ready,
// catalog included) in legacy mode, in auto mode with a warm era cache, and
// in auto mode cold (probe on a sibling process, then the session), in one
// run. "paired" alternates legacy and warm auto and reports their ratio.
//
//	go test -run '^$' -bench BenchmarkConnect -count 5 ./host/
func BenchmarkConnect(b *testing.B) {
	bin := testbin.Build(b, wellbehavedPkg)
	st, err := store.Open(b.Context(), b.TempDir()+"/era.db", nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })

	// connect fails tb, the benchmark running it (the sub-benchmarks run on
	// goroutines of their own).
	connect := func(tb testing.TB, mode string, s *store.Store) time.Duration {
		tb.Helper()
		srv := stdioServer("fx", bin)
		srv.VersionNegotiation = mode
		h, err := host.New(&config.Config{Servers: []config.Server{srv}}, host.Options{Store: s})
		if err != nil {
			tb.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(tb.Context(), time.Minute)
		defer cancel()
		start := time.Now()
		h.Start(ctx)
		if err := h.WaitSettled(ctx); err != nil {
			h.Close()
			tb.Fatal(err)
		}
		d := time.Since(start)
		if got, _ := h.Server("fx"); got.State != host.StateReady {
			h.Close()
			tb.Fatalf("%s: %s", mode, got.LastError)
		}
		h.Close()
		return d
	}
	connect(b, config.NegotiationAuto, st) // warm the era cache

	for _, tc := range []struct {
		name  string
		mode  string
		store *store.Store
	}{
		{"legacy", config.NegotiationLegacy, nil},
		{"auto-warm", config.NegotiationAuto, st},
		{"auto-cold", config.NegotiationAuto, nil},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var ds []time.Duration
			for b.Loop() {
				ds = append(ds, connect(b, tc.mode, tc.store))
			}
			p50, _ := benchpair.Percentiles(ds)
			b.ReportMetric(float64(p50.Microseconds()), "p50-µs")
		})
	}
	b.Run("paired", func(b *testing.B) {
		var legacy, warm, cold []time.Duration
		for b.Loop() {
			legacy = append(legacy, connect(b, config.NegotiationLegacy, nil))
			warm = append(warm, connect(b, config.NegotiationAuto, st))
			cold = append(cold, connect(b, config.NegotiationAuto, nil))
		}
		l50, _ := benchpair.Percentiles(legacy)
		w50, _ := benchpair.Percentiles(warm)
		c50, _ := benchpair.Percentiles(cold)
		b.ReportMetric(float64(l50.Microseconds()), "legacy-p50-µs")
		b.ReportMetric(float64(w50.Microseconds()), "warm-p50-µs")
		b.ReportMetric(float64(c50.Microseconds()), "cold-p50-µs")
		b.ReportMetric(float64(w50)/float64(l50), "warm-x-legacy")
		b.ReportMetric(float64(c50)/float64(l50), "cold-x-legacy")
	})
}

// BenchmarkCacheHit measures refreshing a modern server's catalog when every
// list is still fresh by its ttlMs (four host-cache hits, no request) against
// one direct go-sdk tools/list round trip to the same kind of server without
// a ttlMs, over Streamable HTTP on loopback, in the same run.
//
//	go test -run '^$' -bench BenchmarkCacheHit -count 5 ./host/
func BenchmarkCacheHit(b *testing.B) {
	newServer := func(ttl int) *httptest.Server {
		s := fixture.NewServer()
		if ttl > 0 {
			withListTTL(s, ttl, "public")
			s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					res, err := next(ctx, method, req)
					switch r := res.(type) {
					case *mcp.ListPromptsResult:
						r.TTLMs, r.CacheScope = ttl, "public"
					case *mcp.ListResourcesResult:
						r.TTLMs, r.CacheScope = ttl, "public"
					case *mcp.ListResourceTemplatesResult:
						r.TTLMs, r.CacheScope = ttl, "public"
					}
					return res, err
				}
			})
		}
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
		srv := httptest.NewServer(h)
		b.Cleanup(srv.Close)
		return srv
	}
	plain, cached := newServer(0), newServer(3_600_000)

	ctx := b.Context()
	client := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "bench"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	direct, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: plain.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { direct.Close() })

	s := remoteServer("fx", config.TransportStreamableHTTP, cached.URL)
	s.VersionNegotiation = config.NegotiationAuto
	h, err := host.New(&config.Config{Servers: []config.Server{s}}, host.Options{})
	if err != nil {
		b.Fatal(err)
	}
	h.Start(ctx)
	b.Cleanup(func() { h.Close() })
	if err := h.WaitSettled(ctx); err != nil {
		b.Fatal(err)
	}
	if st, _ := h.Server("fx"); st.State != host.StateReady || st.Era != host.EraModern {
		b.Fatalf("%s %s: %s", st.State, st.Era, st.LastError)
	}
	var d, c []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := direct.ListTools(ctx, nil); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := h.RefreshCatalog(ctx, "fx"); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		d = append(d, t1.Sub(t0))
		c = append(c, t2.Sub(t1))
	}
	slices.Sort(d)
	slices.Sort(c)
	dp50, cp50 := d[len(d)/2], c[len(c)/2]
	b.ReportMetric(float64(dp50.Nanoseconds()), "direct-list-p50-ns")
	b.ReportMetric(float64(cp50.Nanoseconds()), "cached-refresh-p50-ns")
	b.ReportMetric(float64(cp50)/float64(dp50), "x-direct")
	if hits := h.CacheStats().Hits; hits == 0 {
		b.Fatal("no cache hits")
	}
}
