package host

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"runtime"
	rtmetrics "runtime/metrics"
	"slices"
	"strings"
	"sync"
	"time"
)

// callBuckets are the upper bounds (seconds) of the call-duration histogram.
var callBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}

// metrics counts what the host does, per server. Names and labels are
// documented in WriteMetrics. Label values are server names (restricted by
// the config loader to letters, digits, "_" and "-") and fixed words, so
// they never need escaping.
type metrics struct {
	mu    sync.Mutex
	calls map[callKey]int64
	hist  map[string]*histogram
}

type callKey struct{ server, status string }

type histogram struct {
	counts []int64 // one per bucket, not cumulative
	count  int64
	sum    float64
}

func (m *metrics) observeCall(server, status string, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.calls == nil {
		m.calls = map[callKey]int64{}
		m.hist = map[string]*histogram{}
	}
	m.calls[callKey{server, status}]++
	h := m.hist[server]
	if h == nil {
		h = &histogram{counts: make([]int64, len(callBuckets))}
		m.hist[server] = h
	}
	s := d.Seconds()
	for i, b := range callBuckets {
		if s <= b {
			h.counts[i]++
			break
		}
	}
	h.count++
	h.sum += s
}

// WriteMetrics writes the host's metrics in the Prometheus text format:
//
//	mcphost_tool_calls_total{server,status}       counter: calls by outcome (ok, tool_error, error, cancelled)
//	mcphost_tool_call_duration_seconds{server}    histogram: call latency
//	mcphost_server_up{server}                     gauge: 1 when ready
//	mcphost_server_restarts_total{server}         counter: reconnects after the first attempt
//	mcphost_server_tools{server}                  gauge: tools listed
//	mcphost_cache_hits_total, _misses_total       counter: host cache lookups
//	mcphost_cache_evictions_total, mcphost_cache_entries
//	mcphost_event_subscribers_dropped_total       counter: event streams ended for falling behind
//	mcphost_cluster_pokes_received_total          counter: pokes heard from other replicas (clustered store)
//	mcphost_cluster_pokes_dropped_total           counter: pokes not sent (queue full, too big, store error)
//	mcphost_cluster_resyncs_total                 counter: resyncs after a lost listen connection (each ended every event stream)
//	mcphost_store_round_trips_total               counter: round trips of the transcript's append path to PostgreSQL (clustered store)
//	go_goroutines                                 gauge: goroutines of the daemon's process
//	go_heap_live_bytes                            gauge: heap marked live by the last garbage collection
func (h *Host) WriteMetrics(w io.Writer) error {
	bw := bufio.NewWriter(w)
	m := &h.metrics
	m.mu.Lock()
	keys := make([]callKey, 0, len(m.calls))
	for k := range m.calls {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b callKey) int {
		return cmp.Or(strings.Compare(a.server, b.server), strings.Compare(a.status, b.status))
	})
	fmt.Fprintln(bw, "# HELP mcphost_tool_calls_total Tool calls by server and outcome.")
	fmt.Fprintln(bw, "# TYPE mcphost_tool_calls_total counter")
	for _, k := range keys {
		fmt.Fprintf(bw, "mcphost_tool_calls_total{server=%q,status=%q} %d\n", k.server, k.status, m.calls[k])
	}
	servers := make([]string, 0, len(m.hist))
	for s := range m.hist {
		servers = append(servers, s)
	}
	slices.Sort(servers)
	fmt.Fprintln(bw, "# HELP mcphost_tool_call_duration_seconds Tool call latency, from the host's view.")
	fmt.Fprintln(bw, "# TYPE mcphost_tool_call_duration_seconds histogram")
	for _, s := range servers {
		hg := m.hist[s]
		var cum int64
		for i, b := range callBuckets {
			cum += hg.counts[i]
			fmt.Fprintf(bw, "mcphost_tool_call_duration_seconds_bucket{server=%q,le=\"%g\"} %d\n", s, b, cum)
		}
		fmt.Fprintf(bw, "mcphost_tool_call_duration_seconds_bucket{server=%q,le=\"+Inf\"} %d\n", s, hg.count)
		fmt.Fprintf(bw, "mcphost_tool_call_duration_seconds_sum{server=%q} %g\n", s, hg.sum)
		fmt.Fprintf(bw, "mcphost_tool_call_duration_seconds_count{server=%q} %d\n", s, hg.count)
	}
	m.mu.Unlock()

	statuses := h.Servers()
	fmt.Fprintln(bw, "# HELP mcphost_server_up Whether the server is ready (1) or not (0).")
	fmt.Fprintln(bw, "# TYPE mcphost_server_up gauge")
	for _, st := range statuses {
		up := 0
		if st.State == StateReady {
			up = 1
		}
		fmt.Fprintf(bw, "mcphost_server_up{server=%q} %d\n", st.Name, up)
	}
	fmt.Fprintln(bw, "# HELP mcphost_server_restarts_total Reconnects after the first attempt.")
	fmt.Fprintln(bw, "# TYPE mcphost_server_restarts_total counter")
	for _, st := range statuses {
		fmt.Fprintf(bw, "mcphost_server_restarts_total{server=%q} %d\n", st.Name, st.Restarts)
	}
	fmt.Fprintln(bw, "# HELP mcphost_server_tools Tools the server lists.")
	fmt.Fprintln(bw, "# TYPE mcphost_server_tools gauge")
	for _, st := range statuses {
		fmt.Fprintf(bw, "mcphost_server_tools{server=%q} %d\n", st.Name, st.Tools)
	}
	cs := h.cache.Stats()
	fmt.Fprintln(bw, "# HELP mcphost_cache_hits_total Lists and reads served from the host cache.")
	fmt.Fprintln(bw, "# TYPE mcphost_cache_hits_total counter")
	fmt.Fprintf(bw, "mcphost_cache_hits_total %d\n", cs.Hits)
	fmt.Fprintln(bw, "# HELP mcphost_cache_misses_total Lists and reads fetched from servers through the host cache.")
	fmt.Fprintln(bw, "# TYPE mcphost_cache_misses_total counter")
	fmt.Fprintf(bw, "mcphost_cache_misses_total %d\n", cs.Misses)
	fmt.Fprintln(bw, "# HELP mcphost_cache_evictions_total Cached reads evicted for space.")
	fmt.Fprintln(bw, "# TYPE mcphost_cache_evictions_total counter")
	fmt.Fprintf(bw, "mcphost_cache_evictions_total %d\n", cs.Evictions)
	fmt.Fprintln(bw, "# HELP mcphost_cache_entries Entries in the host cache.")
	fmt.Fprintln(bw, "# TYPE mcphost_cache_entries gauge")
	fmt.Fprintf(bw, "mcphost_cache_entries %d\n", cs.Entries)
	fmt.Fprintln(bw, "# HELP mcphost_event_subscribers_dropped_total Event streams ended because the client fell behind.")
	fmt.Fprintln(bw, "# TYPE mcphost_event_subscribers_dropped_total counter")
	fmt.Fprintf(bw, "mcphost_event_subscribers_dropped_total %d\n", h.bus.Dropped())
	if fi := h.FanIn(); fi.Clustered {
		fmt.Fprintln(bw, "# HELP mcphost_cluster_pokes_received_total Pokes heard from the other replicas sharing the store.")
		fmt.Fprintln(bw, "# TYPE mcphost_cluster_pokes_received_total counter")
		fmt.Fprintf(bw, "mcphost_cluster_pokes_received_total %d\n", fi.Received)
		fmt.Fprintln(bw, "# HELP mcphost_cluster_pokes_dropped_total Pokes not sent to the other replicas (queue full, too big, store error).")
		fmt.Fprintln(bw, "# TYPE mcphost_cluster_pokes_dropped_total counter")
		fmt.Fprintf(bw, "mcphost_cluster_pokes_dropped_total %d\n", fi.Dropped)
		fmt.Fprintln(bw, "# HELP mcphost_cluster_resyncs_total Resyncs after the connection listening to the other replicas was lost; each ended every event stream.")
		fmt.Fprintln(bw, "# TYPE mcphost_cluster_resyncs_total counter")
		fmt.Fprintf(bw, "mcphost_cluster_resyncs_total %d\n", fi.Resyncs)
	}
	if h.store != nil && h.store.Shared() {
		fmt.Fprintln(bw, "# HELP mcphost_store_round_trips_total Round trips of the transcript's append path to PostgreSQL (one per group commit).")
		fmt.Fprintln(bw, "# TYPE mcphost_store_round_trips_total counter")
		fmt.Fprintf(bw, "mcphost_store_round_trips_total %d\n", h.store.RoundTrips())
	}
	fmt.Fprintln(bw, "# HELP go_goroutines Goroutines of the daemon's process.")
	fmt.Fprintln(bw, "# TYPE go_goroutines gauge")
	fmt.Fprintf(bw, "go_goroutines %d\n", runtime.NumGoroutine())
	live := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}}
	rtmetrics.Read(live)
	if live[0].Value.Kind() == rtmetrics.KindUint64 {
		fmt.Fprintln(bw, "# HELP go_heap_live_bytes Heap memory marked live by the last garbage collection.")
		fmt.Fprintln(bw, "# TYPE go_heap_live_bytes gauge")
		fmt.Fprintf(bw, "go_heap_live_bytes %d\n", live[0].Value.Uint64())
	}
	return bw.Flush()
}
