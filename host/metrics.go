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
//	mcphost_cluster_pokes_refused_total           counter: notifications on the pokes' channel refused (not sealed with the cluster secret, stale or replayed)
//	mcphost_cluster_resyncs_total                 counter: resyncs after a lost listen connection (each ended every event stream)
//	mcphost_store_round_trips_total               counter: round trips of the transcript's append path to PostgreSQL (clustered store)
//	go_goroutines                                 gauge: goroutines of the daemon's process
//	go_heap_live_bytes                            gauge: heap marked live by the last garbage collection
func (h *Host) WriteMetrics(w io.Writer) error {
	bw := bufio.NewWriter(w)
	h.pipe.metrics.write(bw)
	h.writeServerMetrics(bw)
	cs := h.cache.Stats()
	counter(bw, "mcphost_cache_hits_total", "Lists and reads served from the host cache.", cs.Hits)
	counter(bw, "mcphost_cache_misses_total", "Lists and reads fetched from servers through the host cache.", cs.Misses)
	counter(bw, "mcphost_cache_evictions_total", "Cached reads evicted for space.", cs.Evictions)
	gauge(bw, "mcphost_cache_entries", "Entries in the host cache.", cs.Entries)
	counter(bw, "mcphost_event_subscribers_dropped_total", "Event streams ended because the client fell behind.", h.ev.bus.Dropped())
	if fi := h.fanIn(); fi.Clustered {
		counter(bw, "mcphost_cluster_pokes_received_total", "Pokes heard from the other replicas sharing the store.", fi.Received)
		counter(bw, "mcphost_cluster_pokes_dropped_total", "Pokes not sent to the other replicas (queue full, too big, store error).", fi.Dropped)
		counter(bw, "mcphost_cluster_pokes_refused_total", "Notifications on the pokes' channel refused: not sealed with the cluster secret, stale or replayed.", fi.Refused)
		counter(bw, "mcphost_cluster_resyncs_total", "Resyncs after the connection listening to the other replicas was lost; each ended every event stream.", fi.Resyncs)
	}
	if h.store != nil && h.store.Shared() {
		counter(bw, "mcphost_store_round_trips_total", "Round trips of the transcript's append path to PostgreSQL (one per group commit).", h.store.RoundTrips())
	}
	writeRuntimeMetrics(bw)
	return bw.Flush()
}

// write writes the call counters and the call-duration histograms, by
// server (and outcome) in sorted order.
func (m *metrics) write(w io.Writer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := make([]callKey, 0, len(m.calls))
	for k := range m.calls {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b callKey) int {
		return cmp.Or(strings.Compare(a.server, b.server), strings.Compare(a.status, b.status))
	})
	metricHeader(w, "mcphost_tool_calls_total", "counter", "Tool calls by server and outcome.")
	for _, k := range keys {
		fmt.Fprintf(w, "mcphost_tool_calls_total{server=%q,status=%q} %d\n", k.server, k.status, m.calls[k])
	}
	servers := make([]string, 0, len(m.hist))
	for s := range m.hist {
		servers = append(servers, s)
	}
	slices.Sort(servers)
	metricHeader(w, "mcphost_tool_call_duration_seconds", "histogram", "Tool call latency, from the host's view.")
	for _, s := range servers {
		hg := m.hist[s]
		var cum int64
		for i, b := range callBuckets {
			cum += hg.counts[i]
			fmt.Fprintf(w, "mcphost_tool_call_duration_seconds_bucket{server=%q,le=\"%g\"} %d\n", s, b, cum)
		}
		fmt.Fprintf(w, "mcphost_tool_call_duration_seconds_bucket{server=%q,le=\"+Inf\"} %d\n", s, hg.count)
		fmt.Fprintf(w, "mcphost_tool_call_duration_seconds_sum{server=%q} %g\n", s, hg.sum)
		fmt.Fprintf(w, "mcphost_tool_call_duration_seconds_count{server=%q} %d\n", s, hg.count)
	}
}

// writeServerMetrics writes the per-server gauges and counters, one
// series per server in the order Servers gives.
func (h *Host) writeServerMetrics(w io.Writer) {
	statuses := h.Servers()
	perServer(w, "mcphost_server_up", "gauge", "Whether the server is ready (1) or not (0).", statuses, func(st ServerStatus) int {
		if st.State == StateReady {
			return 1
		}
		return 0
	})
	perServer(w, "mcphost_server_restarts_total", "counter", "Reconnects after the first attempt.", statuses,
		func(st ServerStatus) int { return st.Restarts })
	perServer(w, "mcphost_server_tools", "gauge", "Tools the server lists.", statuses,
		func(st ServerStatus) int { return st.Tools })
	var boxed []ServerStatus
	for _, st := range statuses {
		if st.Sandbox != nil {
			boxed = append(boxed, st)
		}
	}
	perServer(w, "mcphost_sandbox_denials_total", "counter", "Connections the egress proxy of a sandboxed stdio server refused.", boxed,
		func(st ServerStatus) int { return int(st.Sandbox.Denied) })
	perServer(w, "mcphost_sandbox_contained", "gauge", "Whether a stdio server runs with every sandbox layer it asks for (1) or not (0).", boxed,
		func(st ServerStatus) int {
			if st.Sandbox.Summary == "unsandboxed" || len(st.Sandbox.Dropped()) > 0 {
				return 0
			}
			return 1
		})
}

// writeRuntimeMetrics writes the Go runtime's gauges: the goroutines and,
// when the runtime reports it, the live heap.
func writeRuntimeMetrics(w io.Writer) {
	gauge(w, "go_goroutines", "Goroutines of the daemon's process.", runtime.NumGoroutine())
	live := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}}
	rtmetrics.Read(live)
	if live[0].Value.Kind() == rtmetrics.KindUint64 {
		gauge(w, "go_heap_live_bytes", "Heap memory marked live by the last garbage collection.", live[0].Value.Uint64())
	}
}

// metricValue is the type of a metric's value; all are written with %d.
type metricValue interface{ ~int | ~int64 | ~uint64 }

// metricHeader writes a metric's HELP and TYPE lines.
func metricHeader(w io.Writer, name, kind, help string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, kind)
}

// counter writes a counter without labels: its HELP, TYPE and value.
func counter[T metricValue](w io.Writer, name, help string, v T) {
	metricHeader(w, name, "counter", help)
	fmt.Fprintf(w, "%s %d\n", name, v)
}

// gauge writes a gauge without labels: its HELP, TYPE and value.
func gauge[T metricValue](w io.Writer, name, help string, v T) {
	metricHeader(w, name, "gauge", help)
	fmt.Fprintf(w, "%s %d\n", name, v)
}

// perServer writes a metric of the given kind with one series per server
// of statuses, labelled server, whose value is v of its status.
func perServer(w io.Writer, name, kind, help string, statuses []ServerStatus, v func(ServerStatus) int) {
	metricHeader(w, name, kind, help)
	for _, st := range statuses {
		fmt.Fprintf(w, "%s{server=%q} %d\n", name, st.Name, v(st))
	}
}
