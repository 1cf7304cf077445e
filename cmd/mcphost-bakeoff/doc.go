// Command mcphost-bakeoff times mcphost's /mcp gateway next to the MCP
// proxies it is compared with, in one run, on loopback only: the core of
// the harness behind ../shared/docs/research/bakeoff.md (issue 33, "The
// peer in the benchmark"), kept as a project tool.
//
// # Sides
//
// Every side serves one small tool of one shared upstream over Streamable
// HTTP: testdata/servers/wellbehaved -http 127.0.0.1:0 -stateless (go-sdk's
// stateless mode, both eras), tool echo with a 43-character text.
//
//   - direct: a go-sdk client to the upstream itself.
//   - relay: a bare go-sdk relay in a process of its own: a go-sdk server
//     (StreamableHTTPHandler, Stateless: true) whose one tool forwards each
//     call through one go-sdk client session to the upstream. It is this
//     program's hidden subcommand `relay -upstream URL -listen ADDR
//     -version V`, which prints its endpoint on stdout.
//   - tbx: TBXark/mcp-proxy v0.43.2, built by the run from the Go module
//     proxy in a scratch module of its own (go mod init, go get
//     …@v0.43.2, go build; none of its code or requirements reaches this
//     module), or taken from -tbx PATH. One streamable-http server in
//     front of a streamable-http upstream, a bearer token, no per-request
//     log. It answers 2025-06-18, which the 2025-11-25 run accepts (nothing
//     in a tools/call differs) and the 2026-07-28 run drops.
//   - mcphost: `go build ./cmd/mcphost`, then `mcphost serve` with a
//     generated configuration (OUT/mcphost-ERA.hcl): one principal with a
//     bearer token and no rate or concurrency bound, store sync "normal",
//     log level warn, the gateway, one server block to the upstream
//     (version_negotiation "legacy" for 2025-11-25, "auto" for 2026-07-28)
//     and ten call-phase policy rules that match nothing, so each runs on
//     every call. Its data_dir is a temporary directory.
//
// Each proxy runs in a process group of its own, started afresh for each
// era and stopped by its group's id at the end of it. Before measuring,
// each side must list the tool, answer one call with the text it was sent
// and have negotiated the era's version (the client always pins
// ClientSessionOptions.ProtocolVersion); a side that negotiated another
// version is dropped with its reason in the report, a side that failed
// otherwise is dropped too and fails the run.
//
// # Measures
//
// For each era (-era 2025-11-25, 2026-07-28 or both):
//
//  1. Latency at one caller: -warmup rounds (50), then -batches (5)
//     batches of -rounds (400) rounds; each round calls every side once,
//     the starting side rotating. Per batch each side's p50 and p99; the
//     report gives the median over the batches with the [min–max] range,
//     and the ratios to the relay and to TBXark taken per batch.
//  2. Throughput at each of -callers (8 and 32) concurrent callers: each
//     side alone for a -window (5s), its callers (one go-sdk session and
//     one http.Transport each) connected and warmed before the window; the
//     order of the sides rotates per repetition (-reps, 3). Calls/s, the
//     proxy process's CPU (utime+stime from /proc/PID/stat before and
//     after, the proxy alone, not the upstream) per 1,000 calls, and its
//     peak RSS (VmHWM after a reset through /proc/PID/clear_refs; VmRSS at
//     the window's end when the reset fails). Direct has no proxy process.
//
// Every call is bounded (-call-timeout, 30s), every start (60s) and the
// whole run (-deadline, 30m); every count is a flag.
//
// # Output
//
// Progress lines on stderr (log/slog). In -out DIR: report.md (ratios
// first, then absolute figures, the sides, the machine, the versions, the
// commit and the command line; also printed on stdout), raw.json (every
// batch's and window's figures and the options), the generated
// configurations, logs/ (each process's output) and bin/ (the programs
// built). The exit status is 0 when every side passed its checks and no
// call failed, 1 otherwise (the report is still written), 2 for a usage
// error.
//
// # Commands
//
// Run from the repository root (it builds mcphost and the upstream with
// the go command; -bin-dir names prebuilt ones):
//
//	go run ./cmd/mcphost-bakeoff -out /tmp/bakeoff                  # everything, about 5 minutes
//	go run ./cmd/mcphost-bakeoff -tbx "" -era 2025-11-25 -out /tmp/b  # without TBXark, one era
//	go run ./cmd/mcphost-bakeoff -tbx ~/bin/mcp-proxy -out /tmp/b   # a prebuilt TBXark
//
// The timings are as noisy as the machine: run it on a quiet one, and
// compare ratios rather than absolute times. The load generator shares
// the CPUs with the proxies and the upstream.
package main
