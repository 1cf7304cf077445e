package store

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// realisticResult is a CallToolResult of about 2 KB: a text block and the
// same data as structuredContent, as a dashboard tool would answer.
func realisticResult(tag string) json.RawMessage {
	type row struct {
		Region  string  `json:"region"`
		Revenue float64 `json:"revenue"`
		Growth  float64 `json:"growth"`
	}
	var rows []row
	var text strings.Builder
	for i := range 21 {
		r := row{Region: fmt.Sprintf("region-%02d", i), Revenue: 1e6 + float64(i)*12345.67, Growth: 0.01 * float64(i)}
		rows = append(rows, r)
		fmt.Fprintf(&text, "%s: %.2f (%+.1f%%)\n", r.Region, r.Revenue, r.Growth*100)
	}
	b, err := json.Marshal(map[string]any{
		"content":           []any{map[string]any{"type": "text", "text": "Revenue " + tag + "\n" + text.String()}},
		"structuredContent": map[string]any{"quarter": "Q3", "currency": "EUR", "rows": rows},
		"isError":           false,
	})
	if err != nil {
		panic(err)
	}
	return b
}

func TestRealisticResultSize(t *testing.T) {
	if n := len(realisticResult("x")); n < 1800 || n > 2300 {
		t.Errorf("realistic result is %d bytes, want about 2 KB", n)
	}
}

// BenchmarkAppendEntry measures acknowledged appends of an entry with a 2 KB
// result under each sync mode ("full": synchronous=FULL, one fsync per
// commit; "normal": synchronous=NORMAL, fsyncs only at checkpoints):
// serially (one entry per commit), and from 4 × GOMAXPROCS goroutines spread
// over 8 sessions, where group commit writes the appends that wait together
// ("entries/commit").
func BenchmarkAppendEntry(b *testing.B) {
	for _, mode := range syncModes {
		b.Run("sync="+mode.String(), func(b *testing.B) { benchmarkAppendEntry(b, mode) })
	}
}

// BenchmarkAppendSmallEntry measures serial appends, sync=normal, of an
// entry of the size a gateway call to an echo tool records (a 43-character
// text, a short trail): what one caller of the gateway waits for. Its
// pages, not its bytes, are most of the commit; the mean includes the
// checkpoints, which no longer run on the appending goroutine
// (checkpoint.go). With sync=normal an append returns once its record is
// in the entry log (entrylog.go): ns/op, p50 and p99 are what a caller
// waits for, while the applier writes the records behind it in groups.
func BenchmarkAppendSmallEntry(b *testing.B) {
	s := mustOpenWith(b, filepath.Join(b.TempDir(), "mcphost.db"), Options{Sync: SyncNormal})
	sess := mustCreate(b, s, "alice", "bench")
	text := strings.Repeat("x", 43)
	args := json.RawMessage(`{"text":"` + text + `"}`)
	result := json.RawMessage(`{"content":[{"type":"text","text":"` + text + `"}]}`)
	trail := json.RawMessage(`[{"stage":"policy","ms":0.01},{"stage":"upstream","ms":0.5}]`)
	var durations []time.Duration
	for b.Loop() {
		e := &Entry{SessionID: sess.ID, CallID: "c_bench", Principal: "alice", Origin: "gateway",
			Server: "up", Tool: "echo", Arguments: args, Status: StatusOK, Result: result,
			Era: "legacy", ProtocolVersion: "2025-11-25", StartedAt: time.Now(), DurationMs: 0.5, Trail: trail}
		start := time.Now()
		if err := s.AppendEntry(b.Context(), e); err != nil {
			b.Fatal(err)
		}
		durations = append(durations, time.Since(start))
	}
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)/2]), "p50-ns/op")
	b.ReportMetric(float64(durations[len(durations)*99/100]), "p99-ns/op")
}

func benchmarkAppendEntry(b *testing.B, mode Sync) {
	result := realisticResult("Q3")
	entry := func(sessionID, principal string) *Entry {
		return &Entry{
			SessionID: sessionID, CallID: "c_bench", Principal: principal, Origin: "api",
			Server: "revenue", Tool: "show_revenue_dashboard", Arguments: json.RawMessage(`{"quarter":"Q3"}`),
			Status: StatusOK, Result: result, Era: "legacy", ProtocolVersion: "2025-11-25",
			StartedAt: time.Now(), DurationMs: 12.5,
		}
	}
	openStore := func(b *testing.B) *Store {
		s := mustOpenWith(b, filepath.Join(b.TempDir(), "mcphost.db"), Options{Sync: mode})
		s.now = fakeClock()
		return s
	}

	b.Run("serial", func(b *testing.B) {
		s := openStore(b)
		sess := mustCreate(b, s, "alice", "bench")
		var durations []time.Duration
		for b.Loop() {
			e := entry(sess.ID, "alice")
			start := time.Now()
			if err := s.AppendEntry(b.Context(), e); err != nil {
				b.Fatal(err)
			}
			durations = append(durations, time.Since(start))
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "entries/s")
		slices.Sort(durations)
		b.ReportMetric(float64(durations[len(durations)/2]), "p50-ns/op")
		b.ReportMetric(float64(durations[len(durations)*99/100]), "p99-ns/op")
	})

	b.Run("parallel", func(b *testing.B) {
		s := openStore(b)
		var sessions []Session
		for i := range 8 {
			sessions = append(sessions, mustCreate(b, s, "alice", fmt.Sprint("bench ", i)))
		}
		var next atomic.Int64
		b.SetParallelism(4)
		groups, grouped := s.commit.groups.Load(), s.commit.grouped.Load()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			sess := sessions[int(next.Add(1))%len(sessions)]
			for pb.Next() {
				if err := s.AppendEntry(b.Context(), entry(sess.ID, "alice")); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "entries/s")
		b.ReportMetric(float64(s.commit.grouped.Load()-grouped)/float64(s.commit.groups.Load()-groups), "entries/commit")
	})
}

// BenchmarkAppendBackends compares the backends: 8 writers append at once
// (each to its own session), with sync=full. It reports the latency of an
// acknowledged append (p50, p99), the throughput, the entries per commit
// and, on PostgreSQL, the round trips per append (one per group).
//
//	go test -run '^$' -bench AppendBackends -benchtime 3000x ./host/store/
func BenchmarkAppendBackends(b *testing.B) {
	const writers = 8
	result := realisticResult("Q3")
	for _, bk := range backends(b) {
		b.Run(bk.name, func(b *testing.B) {
			s, _ := bk.open(b)
			var sessions []Session
			for i := range writers {
				sessions = append(sessions, mustCreate(b, s, "alice", fmt.Sprint("bench ", i)))
			}
			var (
				next      atomic.Int64
				mu        sync.Mutex
				durations []time.Duration
				wg        sync.WaitGroup
			)
			trips, groups, grouped := s.RoundTrips(), s.commit.groups.Load(), s.commit.grouped.Load()
			b.ResetTimer()
			for w := range writers {
				wg.Go(func() {
					var mine []time.Duration
					for next.Add(1) <= int64(b.N) {
						e := &Entry{SessionID: sessions[w].ID, CallID: "c_bench", Principal: "alice", Origin: "api",
							Server: "revenue", Tool: "show_revenue_dashboard", Arguments: json.RawMessage(`{"quarter":"Q3"}`),
							Status: StatusOK, Result: result, Era: "legacy", ProtocolVersion: "2025-11-25",
							StartedAt: time.Now(), DurationMs: 12.5}
						start := time.Now()
						if err := s.AppendEntry(b.Context(), e); err != nil {
							b.Error(err)
							return
						}
						mine = append(mine, time.Since(start))
					}
					mu.Lock()
					durations = append(durations, mine...)
					mu.Unlock()
				})
			}
			wg.Wait()
			b.StopTimer()
			if len(durations) == 0 {
				return
			}
			slices.Sort(durations)
			b.ReportMetric(float64(len(durations))/b.Elapsed().Seconds(), "entries/s")
			b.ReportMetric(float64(durations[len(durations)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(durations[len(durations)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64(s.commit.grouped.Load()-grouped)/float64(s.commit.groups.Load()-groups), "entries/commit")
			if bk.name == "postgres" {
				b.ReportMetric(float64(s.RoundTrips()-trips)/float64(len(durations)), "round-trips/append")
			}
		})
	}
}
