package negotiate

import "time"

// The discovery budget of protocol.md §3.3. One absolute deadline, start + D,
// bounds the whole connect; the probe gets a child deadline, start + P, with
//
//	P = min(ProbeCap, D − Headroom − G)
//
// where G is SiblingReapGrace for the stdio sibling probe and 0 otherwise.
// When P < ProbeMin the probe is skipped and the server is treated as legacy:
// the window cannot hold both the probe and the legacy fallback, and the
// fallback is the step that must fit.
const (
	// Headroom (H) is kept for spawning the session process and the
	// initialize (or discover) round trip after the probe.
	Headroom = time.Second
	// SiblingReapGrace (G) is how long reaping the sibling probe process may
	// take: G/2 after closing its stdin, G/2 after SIGTERM, then SIGKILL.
	SiblingReapGrace = 500 * time.Millisecond
	// ProbeCap (Pcap) caps the probe however large the window is.
	ProbeCap = 5 * time.Second
	// ProbeMin (Pmin) is the shortest probe worth running.
	ProbeMin = 100 * time.Millisecond
)

// The clamp the config loader applies to discovery_timeout. Connect applies
// it again, defensively.
const (
	MinDiscoveryTimeout = 100 * time.Millisecond
	MaxDiscoveryTimeout = 300 * time.Second
)

// PlanProbe is the pure budget arithmetic of §3.3: P = min(5s, D − 1s − G)
// with G = 500ms for the stdio sibling probe (sibling true) and 0 otherwise
// (stdio in-place, Streamable HTTP); skip is true when P < 100ms. probe is
// the computed P even when skip is true (it may then be zero or negative),
// so callers can log it.
//
// Worked examples (sibling / in-place or HTTP): D = 30s ⇒ 5s / 5s;
// 5s ⇒ 3.5s / 4s; 3s ⇒ 1.5s / 2s; 1.5s ⇒ skip (0) / 0.5s;
// 1.2s ⇒ skip (−0.3s) / 0.2s; 100ms ⇒ skip / skip.
func PlanProbe(d time.Duration, sibling bool) (probe time.Duration, skip bool) {
	g := time.Duration(0)
	if sibling {
		g = SiblingReapGrace
	}
	probe = min(ProbeCap, d-Headroom-g)
	return probe, probe < ProbeMin
}

// clampWindow applies the discovery_timeout clamp.
func clampWindow(d time.Duration) time.Duration {
	return min(max(d, MinDiscoveryTimeout), MaxDiscoveryTimeout)
}
