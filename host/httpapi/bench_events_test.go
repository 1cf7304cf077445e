package httpapi_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/benchpair"
)

// BenchmarkEventStreamMemory is the memory one more open event stream
// (GET /api/v1/events, what each WebShell tab holds) costs, with 10, 100
// and 1,000 open, against a bare net/http handler that holds an event
// stream open and sends nothing (the physical limit). Both sides run in
// this process with their clients, one connection per stream, so each
// figure includes a client's connection; their difference is mcphost's own
// cost. 40 principals share the streams (at most 32 per principal). Nothing
// is timed: run it once.
//
//	go test -run '^$' -bench BenchmarkEventStreamMemory -benchtime 1x -count 3 ./host/httpapi/
func BenchmarkEventStreamMemory(b *testing.B) {
	cfg := &config.Config{}
	var tokens []string
	for i := range 40 {
		tok := fmt.Sprintf("events-bench-token-%02d-0123456789abcdef", i)
		tokens = append(tokens, tok)
		cfg.Principals = append(cfg.Principals, config.Principal{Name: fmt.Sprintf("p%02d", i), Token: tok})
	}
	addr := startBenchAPI(b, cfg)

	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(": open\n\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	b.Cleanup(bare.Close)

	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("streams=%d", n), func(b *testing.B) {
			for b.Loop() {
			}
			ours := streamsHeap(b, "http://"+addr+"/api/v1/events", tokens, n)
			floor := streamsHeap(b, bare.URL, tokens, n)
			b.ReportMetric(ours/1024, "mcphost-KiB/stream")
			b.ReportMetric(floor/1024, "bare-KiB/stream")
			b.ReportMetric((ours-floor)/1024, "own-KiB/stream")
		})
	}
}

// streamsHeap opens n event streams at url, the tokens in turn, waits for
// each to send its first bytes, and returns the live heap each one holds
// (bytes, after a GC); then closes them.
func streamsHeap(b *testing.B, url string, tokens []string, n int) float64 {
	b.Helper()
	tr := &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: -1}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	before := benchpair.LiveHeap()
	var bodies []*http.Response
	defer func() {
		for _, r := range bodies {
			r.Body.Close()
		}
	}()
	for i := range n {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		req.Header.Set("Authorization", "Bearer "+tokens[i%len(tokens)])
		req.Header.Set("Accept", "text/event-stream")
		res, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		bodies = append(bodies, res)
		if res.StatusCode != http.StatusOK {
			b.Fatalf("stream %d at %s: %d", i, url, res.StatusCode)
		}
		if _, err := bufio.NewReaderSize(res.Body, 16).Peek(1); err != nil {
			b.Fatalf("stream %d at %s sent nothing: %v", i, url, err)
		}
	}
	return float64(benchpair.LiveHeap()-before) / float64(n)
}
