package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// results is everything a run measured, written as raw.json.
type results struct {
	Command  string      `json:"command"`
	Started  time.Time   `json:"started"`
	Finished time.Time   `json:"finished"`
	Commit   string      `json:"commit"`
	Go       string      `json:"go"`
	GoSDK    string      `json:"go_sdk"`
	TBX      string      `json:"tbx,omitempty"`
	Machine  machine     `json:"machine"`
	Options  options     `json:"options"`
	Binaries binaries    `json:"binaries"`
	Eras     []eraResult `json:"eras"`
	Errors   []string    `json:"errors,omitempty"`
}

// machine describes where the run ran.
type machine struct {
	CPU        string `json:"cpu"`
	Cores      int    `json:"cores"`
	MemBytes   int64  `json:"mem_bytes"`
	Kernel     string `json:"kernel"`
	LoadBefore string `json:"load_before"`
	LoadAfter  string `json:"load_after"`
}

// eraResult is the run of one protocol version.
type eraResult struct {
	Version    string         `json:"version"`
	Sides      []sideInfo     `json:"sides"`
	Latency    []latencyBatch `json:"latency"`
	Throughput []window       `json:"throughput"`
	Errors     []string       `json:"errors,omitempty"`
}

// failed says whether the run failed anywhere: an error, a side dropped
// for anything but its version, a failed call in a window.
func (res *results) failed() bool {
	if len(res.Errors) > 0 {
		return true
	}
	for _, e := range res.Eras {
		if len(e.Errors) > 0 {
			return true
		}
		for _, s := range e.Sides {
			if s.Failed {
				return true
			}
		}
	}
	return false
}

// measured returns the sides of the era that were measured, in table
// order.
func (e *eraResult) measured() []string {
	var out []string
	for _, s := range e.Sides {
		if s.Dropped == "" {
			out = append(out, s.Name)
		}
	}
	return out
}

// what each side is, for the report.
var sideWhat = map[string]string{
	sideDirect:  "a go-sdk v1.8.0 client to the upstream itself",
	sideRelay:   "a bare go-sdk relay (own process): go-sdk server, StreamableHTTPHandler `Stateless: true`, one go-sdk client session to the upstream",
	sideTBX:     "TBXark/mcp-proxy v" + tbxVersion + " (mark3labs/mcp-go): `type: streamable-http`, mcpServers entry `transportType: streamable-http`, `authTokens` bearer, `logEnabled: false`, endpoint `/up/mcp`",
	sideMcphost: "`mcphost serve`, `/mcp`: principal with bearer token and `rate_limit { calls_per_second = 0 concurrent_calls = 0 }`, `store { sync = \"normal\" }`, `log_level = \"warn\"`, ten call rules (none matching), `version_negotiation` legacy (2025-11-25) or auto (2026-07-28), tool `up__echo`",
}

// report renders the markdown report.
func report(res *results) string {
	var b strings.Builder
	o := res.Options
	fmt.Fprintf(&b, "# mcphost bake-off: `/mcp` next to a bare go-sdk relay and TBXark/mcp-proxy\n\n")
	fmt.Fprintf(&b, "Run %s – %s UTC (%s), mcphost at `%s`. All sides call `tools/call` of one tool (`echo`, a %d-character text) of one shared upstream "+
		"(testdata/servers/wellbehaved `-http 127.0.0.1:0 -stateless`, go-sdk v1.8.0) over Streamable HTTP on loopback, alternately "+
		"(latency) or in rotating windows (throughput), so that noise hits every side alike. Ratios first, then absolute figures; "+
		"each is the median over batches or repetitions with [min–max] in brackets, ratios taken per batch or repetition.\n\n",
		res.Started.UTC().Format("2006-01-02 15:04:05"), res.Finished.UTC().Format("15:04:05"),
		res.Finished.Sub(res.Started).Round(time.Second), res.Commit, len(echoText))
	fmt.Fprintf(&b, "Command (from the repository root):\n\n```sh\n%s\n```\n\n", res.Command)
	if res.failed() {
		b.WriteString("**The run had problems; see \"Problems\" at the end.**\n\n")
	}

	b.WriteString("## Sides\n\n| side | what runs |")
	for _, e := range res.Eras {
		fmt.Fprintf(&b, " %s |", e.Version)
	}
	b.WriteString("\n|---|---|")
	for range res.Eras {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, name := range o.Sides {
		fmt.Fprintf(&b, "| %s | %s |", name, sideWhat[name])
		for _, e := range res.Eras {
			i := slices.IndexFunc(e.Sides, func(s sideInfo) bool { return s.Name == name })
			switch {
			case i < 0:
				b.WriteString(" — |")
			case e.Sides[i].Dropped != "":
				fmt.Fprintf(&b, " dropped: %s |", mdEscape(e.Sides[i].Dropped))
			default:
				fmt.Fprintf(&b, " negotiated %s |", e.Sides[i].Negotiated)
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")

	for i := range res.Eras {
		latencySection(&b, &res.Eras[i], o, eraLabel(i, len(res.Eras)))
	}
	for i := range res.Eras {
		throughputSection(&b, &res.Eras[i], o, eraLabel(i, len(res.Eras)))
	}

	b.WriteString("## Machine and versions\n\n| what | value |\n|---|---|\n")
	m := res.Machine
	fmt.Fprintf(&b, "| CPU | %s, %d cores |\n", orDash(m.CPU), m.Cores)
	if m.MemBytes > 0 {
		fmt.Fprintf(&b, "| memory | %.1f GiB |\n", float64(m.MemBytes)/(1<<30))
	}
	fmt.Fprintf(&b, "| kernel | Linux %s |\n", orDash(m.Kernel))
	fmt.Fprintf(&b, "| load average before / after | %s / %s |\n", orDash(m.LoadBefore), orDash(m.LoadAfter))
	fmt.Fprintf(&b, "| mcphost | `%s` |\n", res.Commit)
	fmt.Fprintf(&b, "| Go (this tool, mcphost, relay, upstream) | %s |\n", res.Go)
	fmt.Fprintf(&b, "| go-sdk (client, relay, upstream) | %s |\n", res.GoSDK)
	if res.TBX != "" {
		fmt.Fprintf(&b, "| TBXark/mcp-proxy | %s |\n", res.TBX)
	}
	b.WriteString("\nThe load generator shares the CPUs with the proxies and the upstream: calls/s are what this machine gives, " +
		"CPU per call is the proxy process's own (utime+stime from /proc/PID/stat, not the upstream's).\n")

	var problems []string
	problems = append(problems, res.Errors...)
	for _, e := range res.Eras {
		for _, s := range e.Sides {
			if s.Failed {
				problems = append(problems, fmt.Sprintf("%s: %s dropped: %s", e.Version, s.Name, s.Dropped))
			}
		}
		for _, err := range e.Errors {
			problems = append(problems, e.Version+": "+err)
		}
	}
	if len(problems) > 0 {
		b.WriteString("\n## Problems\n\n")
		for _, p := range problems {
			fmt.Fprintf(&b, "- %s\n", mdEscape(p))
		}
	}
	return b.String()
}

// latencySection writes an era's latency tables.
func latencySection(b *strings.Builder, e *eraResult, o options, label string) {
	if len(e.Latency) == 0 {
		return
	}
	sides := e.measured()
	fmt.Fprintf(b, "## 1%s. Latency of one `tools/call`, one caller, %s\n\n", label, e.Version)
	fmt.Fprintf(b, "%d warm-up rounds, then %d batches of %d rounds; each round calls every side once, the starting side rotating. "+
		"Per batch each side's p50 and p99 and their ratios to the relay's and TBXark's of the same batch.\n\n", o.Warmup, len(e.Latency), o.Rounds)
	col := func(pick func(latencyBatch) map[string]float64, name string) []float64 {
		out := make([]float64, len(e.Latency))
		for i, lb := range e.Latency {
			out[i] = pick(lb)[name]
		}
		return out
	}
	p50 := func(lb latencyBatch) map[string]float64 { return lb.P50 }
	p99 := func(lb latencyBatch) map[string]float64 { return lb.P99 }
	refs := references(sides)
	if len(refs) > 0 {
		b.WriteString("| side |")
		for _, ref := range refs {
			fmt.Fprintf(b, " p50 × %s | p99 × %s |", ref, ref)
		}
		b.WriteString("\n|---|" + strings.Repeat("---|", 2*len(refs)) + "\n")
		for _, s := range sides {
			fmt.Fprintf(b, "| %s |", s)
			for _, ref := range refs {
				fmt.Fprintf(b, " %s | %s |", fmtSpread(spreadOf(ratios(col(p50, s), col(p50, ref))), 2),
					fmtSpread(spreadOf(ratios(col(p99, s), col(p99, ref))), 2))
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	b.WriteString("| side | p50 ms | p99 ms |\n|---|---|---|\n")
	for _, s := range sides {
		fmt.Fprintf(b, "| %s | %s | %s |\n", s, fmtSpread(spreadOf(col(p50, s)), 3), fmtSpread(spreadOf(col(p99, s)), 2))
	}
	b.WriteString("\n")
}

// throughputSection writes an era's throughput tables.
func throughputSection(b *strings.Builder, e *eraResult, o options, label string) {
	if len(e.Throughput) == 0 {
		return
	}
	sides := e.measured()
	fmt.Fprintf(b, "## 2%s. Throughput, CPU per call and memory, %s\n\n", label, e.Version)
	fmt.Fprintf(b, "Each side alone for %v with N callers (one session and one http.Transport each, connected and warmed before the window), "+
		"the order of the sides rotating per repetition (%d). CPU is the proxy process's per 1,000 calls (direct has none); peak RSS its VmHWM "+
		"in the window, reset through clear_refs before it. Ratios per repetition.\n\n", o.Window, o.Reps)
	// perRep returns f of side s's windows with n callers, by repetition.
	perRep := func(s string, n int, f func(window) float64) []float64 {
		out := make([]float64, o.Reps)
		for _, w := range e.Throughput {
			if w.Side == s && w.Callers == n && w.Rep >= 1 && w.Rep <= o.Reps {
				out[w.Rep-1] = f(w)
			}
		}
		return out
	}
	cps := func(w window) float64 { return w.callsPerSecond() }
	cpu := func(w window) float64 { return w.cpuPer1k() }
	rss := func(w window) float64 { return float64(w.PeakRSS) / (1 << 20) }
	refs := references(sides)
	if len(refs) > 0 {
		b.WriteString("| side |")
		for _, n := range o.Callers {
			for _, ref := range refs {
				fmt.Fprintf(b, " %d callers: calls/s × %s | CPU/call × %s |", n, ref, ref)
			}
		}
		b.WriteString("\n|---|" + strings.Repeat("---|", 2*len(refs)*len(o.Callers)) + "\n")
		for _, s := range sides {
			fmt.Fprintf(b, "| %s |", s)
			for _, n := range o.Callers {
				for _, ref := range refs {
					fmt.Fprintf(b, " %s | %s |", fmtSpread(spreadOf(ratios(perRep(s, n, cps), perRep(ref, n, cps))), 2),
						fmtSpread(spreadOf(ratios(perRep(s, n, cpu), perRep(ref, n, cpu))), 2))
				}
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	b.WriteString("| side |")
	for _, n := range o.Callers {
		fmt.Fprintf(b, " %d callers: calls/s | CPU s / 1k calls | peak RSS MiB |", n)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", 3*len(o.Callers)) + "\n")
	for _, s := range sides {
		fmt.Fprintf(b, "| %s |", s)
		for _, n := range o.Callers {
			fmt.Fprintf(b, " %s | %s | %s |", fmtSpread(spreadOf(perRep(s, n, cps)), 0), fmtSpread(spreadOf(perRep(s, n, cpu)), 2),
				fmtSpread(spreadOf(perRep(s, n, rss)), 0))
		}
		b.WriteString("\n")
	}
	var notes []string
	for _, w := range e.Throughput {
		if w.RSSKind == "VmRSS" && !slices.Contains(notes, w.Side) {
			notes = append(notes, w.Side)
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(b, "\nPeak RSS of %s is VmRSS at the end of the window: clear_refs could not reset VmHWM.\n", strings.Join(notes, ", "))
	}
	b.WriteString("\n")
}

// eraLabel is the letter of era i of n in section numbers ("a", "b"), or
// "" for a run of one era.
func eraLabel(i, n int) string {
	if n < 2 {
		return ""
	}
	return string(rune('a' + i))
}

// references are the sides ratios are taken to: the relay and TBXark,
// those of them that were measured.
func references(sides []string) []string {
	var out []string
	for _, ref := range []string{sideRelay, sideTBX} {
		if slices.Contains(sides, ref) {
			out = append(out, ref)
		}
	}
	return out
}

// fmtSpread writes a spread as "median [min–max]" with prec decimals,
// the median alone when there is one value or the range is nil at that
// precision, and "—" when nothing was measured.
func fmtSpread(s spread, prec int) string {
	if s.N == 0 {
		return "—"
	}
	med := fmt.Sprintf("%.*f", prec, s.Median)
	lo, hi := fmt.Sprintf("%.*f", prec, s.Min), fmt.Sprintf("%.*f", prec, s.Max)
	if s.N == 1 || lo == hi {
		return med
	}
	return fmt.Sprintf("%s [%s–%s]", med, lo, hi)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// mdEscape keeps a message inside one table cell or list item.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
