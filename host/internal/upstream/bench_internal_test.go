package upstream

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cache"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/benchpair"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/mcphost/mcphost/negotiate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// BenchmarkUpstreamCall measures what mcphost's upstream layer adds to a
// go-sdk client call to a Streamable HTTP server (bakeoff.md §5: twice the
// CPU of a bare go-sdk relay's client). Both sides call the echo tool of
// the same wellbehaved fixture (go-sdk's stateless Streamable HTTP server,
// its answers event streams) with the same 2 KB arguments, pinned to
// 2025-11-25:
//
//   - direct: mcp.ClientSession.CallTool on a StreamableClientTransport
//     with a plain HTTP client, as the bare relay makes it;
//   - upstream: the call as the pipeline makes it (callrun.go: upstream)
//     on a Conn's session: Target, Track, the call in the context,
//     Conn.CallTool with a progress listener, through the server's HTTP
//     client (HeaderShim, AnswerCheck). Tracing is off and the log at
//     info, as a daemon without a collector runs.
//
// "direct" and "upstream" run alone (with -benchmem, their allocs/op);
// "paired" alternates them in one loop and reports each side's objects
// and bytes allocated per call, their ratios, and the p50s.
//
//	go test -run '^$' -bench BenchmarkUpstreamCall -benchmem -count 5 ./host/internal/upstream/
//	go test -run '^$' -bench 'BenchmarkUpstreamCall/upstream' -cpuprofile up.prof ./host/internal/upstream/
func BenchmarkUpstreamCall(b *testing.B) {
	url := startHTTPFixture(b)
	args := json.RawMessage(fmt.Sprintf(`{"text":%q}`, strings.Repeat("x", 2000)))
	ctx := b.Context()

	client := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "bench"}, nil)
	direct, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}},
		&mcp.ClientSessionOptions{ProtocolVersion: negotiate.LegacyVersion})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { direct.Close() })

	c := benchConn(b, url)
	directCall := func() error {
		res, err := direct.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
		return callErr("direct", res, err)
	}
	var heard int
	onProgress := func(Progress) { heard++ }
	upstreamCall := func() error {
		t, err := c.Target(ctx, "alice")
		if err != nil {
			return err
		}
		call := &Call{Principal: "alice", SessionID: "s1", CallID: "c1", Server: "fx", Tool: "echo", Ctx: ctx}
		remove := t.Conn.Track(call)
		cctx := context.WithValue(ctx, RelayCallKey{}, call)
		res, err := t.Conn.CallTool(cctx, t.Session, "echo", args, nil, onProgress)
		t.Conn.CallFailed(err)
		remove()
		return callErr("upstream", res, err)
	}
	sides := []struct {
		name string
		f    func() error
	}{{"direct", directCall}, {"upstream", upstreamCall}}
	for range 50 {
		for _, s := range sides {
			if err := s.f(); err != nil {
				b.Fatalf("warm-up: %v", err)
			}
		}
	}
	for _, s := range sides {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := s.f(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("paired", func(b *testing.B) {
		var (
			took          [2][]time.Duration
			objects, byts [2]uint64
		)
		for b.Loop() {
			for i, s := range sides {
				o0, b0 := allocated()
				t0 := time.Now()
				if err := s.f(); err != nil {
					b.Fatal(err)
				}
				took[i] = append(took[i], time.Since(t0))
				o1, b1 := allocated()
				objects[i] += o1 - o0
				byts[i] += b1 - b0
			}
		}
		n := float64(len(took[0]))
		for i, s := range sides {
			p50, _ := benchpair.Percentiles(took[i])
			b.ReportMetric(float64(objects[i])/n, s.name+"-allocs/call")
			b.ReportMetric(float64(byts[i])/n, s.name+"-B/call")
			b.ReportMetric(float64(p50.Nanoseconds()), s.name+"-p50-ns")
		}
		b.ReportMetric(float64(objects[1])/float64(objects[0]), "allocs-x-direct")
		b.ReportMetric(float64(byts[1])/float64(byts[0]), "B-x-direct")
	})
}

// allocated returns the heap objects and bytes allocated so far in the
// process, as -benchmem counts them (runtime/metrics would be cheaper, but
// it counts small objects only as their spans fill: not per call).
func allocated() (objects, bytes uint64) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Mallocs, m.TotalAlloc
}

func callErr(side string, res *mcp.CallToolResult, err error) error {
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", side, err)
	case res.IsError:
		return fmt.Errorf("%s: a tool error", side)
	}
	return nil
}

// benchConn runs a Conn for the Streamable HTTP server at url, as the host
// configures one (legacy negotiation, the log at info), until the
// benchmark ends, and returns it once it is ready.
func benchConn(b *testing.B, url string) *Conn {
	s := config.Server{Name: "fx", Transport: config.TransportStreamableHTTP, URL: url, Enabled: true,
		DiscoveryTimeout: 20 * time.Second, CallTimeout: time.Minute,
		VersionNegotiation: config.NegotiationLegacy, HTTPProbeTimeout: config.HTTPProbeTimeoutFallback}
	logger := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	c := NewConn(s, &Deps{Logger: logger, Version: "bench", OAuth: &OAuthRef{}}, cache.New(cache.Options{}))
	ctx, cancel := context.WithCancel(context.Background())
	go c.Run(ctx)
	b.Cleanup(func() { cancel(); <-c.done })
	<-c.settled
	if _, _, err := c.Current(); err != nil {
		b.Fatal(err)
	}
	return c
}

// startHTTPFixture runs the wellbehaved fixture as a stateless Streamable
// HTTP server and returns its endpoint (as gateway/bench_test.go does).
func startHTTPFixture(tb testing.TB) string {
	tb.Helper()
	cmd := exec.Command(testbin.Build(tb, "github.com/mcphost/mcphost/testdata/servers/wellbehaved"), "-http", "127.0.0.1:0", "-stateless")
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
