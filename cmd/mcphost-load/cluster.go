package main

import (
	"strconv"
	"strings"
)

// clusterResult is what the cluster run measured beyond the load curve,
// the soak and the transcript.
type clusterResult struct {
	Replicas []string     `json:"replicas"`
	Balancer string       `json:"balancer"`
	Postgres string       `json:"postgres"`
	Faults   []faultEvent `json:"faults,omitempty"`
	// FailuresOutside is the soak's failed calls outside every fault
	// window (and its grace): must be 0.
	FailuresOutside int64    `json:"failuresOutside"`
	FirstOutside    []string `json:"firstOutside,omitempty"`
	// LiveSessionsLost is the 2025-11-25 sessions of replica a (never
	// killed) that a call found gone (404): must be 0, a fault of replica
	// b or of PostgreSQL must not end the sessions of a replica that runs.
	LiveSessionsLost int `json:"liveSessionsLost"`
	// Orphans is the processes of the killed replica (its stdio servers)
	// still running 10 s after it died: must be 0.
	Orphans int `json:"orphans"`
	// Recovered: the soak's throughput and latency in its last quarter,
	// after every fault, beside its first quarter after warm-up.
	BeforeThroughput float64 `json:"beforeThroughput"`
	AfterThroughput  float64 `json:"afterThroughput"`
	BeforeP50Ms      float64 `json:"beforeP50Ms"`
	AfterP50Ms       float64 `json:"afterP50Ms"`
}

// faultEvent is one fault of the soak.
type faultEvent struct {
	What string `json:"what"`
	// Seconds since the soak's clock started: the fault, the end of the
	// outage (the replica back in the balancer's rotation, PostgreSQL
	// accepting connections again) and the first sample after it with no
	// failed call (-1: none).
	AtS        float64 `json:"atS"`
	EndS       float64 `json:"endS"`
	RecoveredS float64 `json:"recoveredS"`
	// Failed is the calls that failed within the fault's window and grace.
	Failed int64    `json:"failed"`
	Errors []string `json:"firstErrors,omitempty"`
}

// replicaCounters is one reading of one replica's process.
type replicaCounters struct {
	ID         string `json:"id"`
	PID        int    `json:"pid"`
	RSS        int64  `json:"rssBytes"`
	FDs        int    `json:"fds"`
	Children   int    `json:"children"`
	Zombies    int    `json:"zombies"`
	Goroutines int    `json:"goroutines"`     // go_goroutines of its /metrics
	HeapLive   int64  `json:"heapLiveBytes"`  // go_heap_live_bytes
	RoundTrips int64  `json:"roundTrips"`     // mcphost_store_round_trips_total
	CPUms      int64  `json:"cpuMs"`          // the process and its children
	Up         bool   `json:"up"`             // /metrics answered
	InRotation bool   `json:"inRotation"`     // the balancer sends to it
	ServersUp  int    `json:"serversUp"`      // mcphost_server_up summed
	Restarts   int    `json:"serverRestarts"` // mcphost_server_restarts_total summed
}

// metricLine splits a Prometheus text line into its name (with labels) and
// value; comments and malformed lines are not ok.
func metricLine(line string) (string, float64, bool) {
	if line == "" || line[0] == '#' {
		return "", 0, false
	}
	i := strings.LastIndexByte(line, ' ')
	if i < 0 {
		return "", 0, false
	}
	v, err := strconv.ParseFloat(line[i+1:], 64)
	return line[:i], v, err == nil
}
