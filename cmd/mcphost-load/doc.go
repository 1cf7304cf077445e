// Command mcphost-load measures the mcphost daemon under load and over
// time, on loopback only, with bounded counts and durations. It is the
// "Load and soak" part of BENCHMARKS.md.
//
// It assembles the daemon in its own process exactly as `mcphost serve`
// does (cmd/mcphost/serve.go: store.OpenWith, host.New with restarts on and
// the plugin cache in data_dir, httpapi.New, Host.Start, Host.Serve on
// 127.0.0.1:0), from a generated HCL file (OUT/config.hcl), so that heap,
// goroutines and file descriptors can be read from the runtime and
// /proc/self, and the daemon's child processes from /proc. The load goes
// through the daemon's real HTTP front: with -door gateway (the default)
// MCP clients of /mcp, as agents use mcphost, with -door api the JSON API
// the WebShell uses. Everything else runs as separate processes:
// the fixture servers, built from source with the go command.
//
// # Phases
//
//  1. Start-up. -servers servers (default 50) take five kinds in turn:
//     stdio legacy (testdata/servers/wellbehaved, version_negotiation =
//     "legacy"), stdio auto (wellbehaved, "auto": a sibling probe, then the
//     modern era), HTTP legacy (wellbehaved -http, stateful Streamable
//     HTTP), HTTP auto (wellbehaved -http -stateless, stateless Streamable
//     HTTP, which offers 2026-07-28) and stdio modern-only
//     (testdata/servers/modernonly, "auto"). The tool starts the HTTP
//     fixtures first (they are remote services), then the daemon, and
//     reports the time until every server is ready and in the era its kind
//     must reach. With -warm-start (the default) the daemon starts twice
//     on one data_dir: cold (empty era cache, plugin compiled) and warm
//     (verdicts and compiled plugin cached); the rest runs on the warm one.
//     Before it, the start-up curve (-startup-curve, default 10, 50 and
//     200): a daemon of that many stdio servers (the three stdio kinds in
//     turn), each size in a data_dir of its own, cold and then warm, with
//     the time until all are ready, the live heap and resident memory per
//     idle server (the cold daemon, all ready, after a GC), and the same
//     check that each daemon left nothing behind.
//  2. Sanity. The ten policy rules are on (rule r6 must deny the "blocked"
//     principal) and the result plugin runs (redact must replace a secret
//     in an echo result), through the API and, with -door gateway, through
//     the gateway in both eras (the denial is an error result with the
//     rule's message).
//  3. Load. Workers call echo through the door, each worker as one of
//     -principals principals: through the gateway each with a go-sdk client
//     of its own (named mcphost-load-wN; even workers 2025-11-25 sessions,
//     odd workers 2026-07-28), through the API each in a session of its
//     own (POST /api/v1/sessions/{id}/calls); in turn over the first
//     -targets servers (every kind from 5 on), with
//     the ten rules and the plugin active. The physical limit is measured
//     in the same run: a go-sdk client connected straight to a twin of each
//     target (its own stdio process or HTTP fixture, pinned to the era the
//     daemon negotiated). For each concurrency step (-steps), -rounds
//     rounds of one direct window and one host window of -step-time each,
//     the order swapped every round so that drift hits both sides. Both
//     sides are warmed up with 50 calls per target first. Reported per
//     step and side: calls/s, p50, p99, and the host's ratios to direct;
//     and the knee, the first step whose median latency grew by a larger
//     factor than its throughput.
//  4. Soak. -soak-concurrency workers call at -soak-rate calls/s in total
//     for -soak (default 10 minutes), and every -sample the tool reads the
//     heap (in use, and live as of the last GC), RSS, goroutines, open file
//     descriptors (/proc/self/fd) and the daemon's child processes (direct
//     children of this process in /proc, minus the processes the tool
//     started itself), plus calls/s, p50 and p99 of the interval. Each
//     sample is taken between calls: running calls finish first and new
//     ones wait while it reads. Before the clock starts, bursts of
//     simultaneous calls open the connections a steady soak uses (one per
//     worker to the API, two per remote server from the daemon), so that a
//     pool filling up late is not read as growth. After warm-up (-soak-warmup, default a
//     fifth of -soak), the median of the first quarter of the samples is
//     compared with the median of the last quarter. The run fails when
//     goroutines grow by more than max(5, 2%), file descriptors by more
//     than max(4, 2%), child processes or zombies at all, the live heap by
//     more than max(50%, 32 MiB), when any call fails, or when a server
//     restarts. The least-squares slope per hour is reported beside each.
//  5. Transcript. Every acknowledged call must be in the transcript.
//     Through the API (a 200, or the 403 of a policy denial, both with a
//     recorded entry): per session, the count of GET /api/v1/sessions and
//     the entries read back page by page with GET …/entries must both
//     equal the calls acknowledged. Through the gateway (a result without
//     isError): each call's text starts with a number of its own
//     ("call-N "), and the entries of the sessions the gateway titled
//     after the worker's client are read back: every acknowledged number
//     must be there once, and nothing else (no duplicate, no call that was
//     never answered).
//  6. Shutdown. After each daemon shuts down no child process may remain,
//     and file descriptors and goroutines must be back to their count
//     before the first daemon started (after the last one, the HTTP
//     fixtures are stopped first).
//
// # The cluster run (-cluster)
//
// The same gateway load and soak through two replicas: a PostgreSQL of the
// tool's own (internal/pgserver: Debian's binaries, as the postgres user
// under root), the HTTP fixtures (shared by both replicas, as a cluster's
// remote servers are), two `mcphost serve` processes built from this
// checkout (replica ids a and b, each its own data_dir, one config with
// store.postgres and public_urls naming the balancer), and a round-robin
// balancer in this process (internal/roundrobin) that health-checks
// /readyz every 250 ms and sends each request to the next replica in
// rotation, with no stickiness: a 2025-11-25 session lands on either
// replica and the other forwards to its owner. -cluster sets -servers 10
// -targets 5 and leaves out the start-up phases unless given.
//
//   - Load: the concurrency curve through the balancer against the direct
//     twins, with, per call, the CPU time of the replicas (each with its
//     stdio servers, from /proc), of PostgreSQL (the postmaster and its
//     backends) and the replicas' round trips to PostgreSQL
//     (mcphost_store_round_trips_total of their /metrics). On a small
//     machine everything shares the CPUs; the CPU per call is what scales
//     the figures to more cores (calls/s per core = 10^6 / µs per call).
//   - Soak: with -faults (the default), replica b is killed with SIGKILL to
//     its process group at 40% of the soak, stays down -fault-down (3 s)
//     and is started again with the same id and data_dir on a new port
//     (the balancer's targets updated, as an endpoint update does); at 65%
//     PostgreSQL is stopped as a crash would stop it (pg_ctl -m immediate)
//     and started again after -fault-down. A call may fail only within a
//     fault's window: from the fault until the replica is back in rotation
//     or PostgreSQL accepts connections, and 5 s of grace after. Each
//     fault's failed calls and the first sample after it with none are
//     reported, and the run fails on a call failed outside every window, on
//     a 2025-11-25 session of replica a answered 404 (a fault elsewhere must
//     not end the sessions of a replica that runs), on
//     the killed replica's stdio servers still running 10 s after it died,
//     and when the last quarter's throughput is below 90% of the first's.
//     The growth verdicts are replica a's (the one never killed): its
//     goroutines and live heap from /metrics, its file descriptors, RSS and
//     child processes from /proc. A 2025-11-25 client whose session died
//     with replica b connects again, maybe to a: the goroutine tolerance
//     grows by 4 for each session a owns at the end beyond the start (the
//     clients' session ids name their owner).
//   - Transcript: every acknowledged call is read back through the
//     balancer, from the shared store; a call the client never heard
//     answered may be recorded (a fault cut its answer), none may be
//     recorded twice, none acknowledged may be missing.
//   - Shutdown: SIGTERM to both replicas; none of their processes may
//     remain.
//
// # Output
//
// A human summary on stdout and in OUT/summary.txt (with FAIL lines saying
// what failed), and in OUT: results.json (every figure, the options, the
// machine, the commit), load.csv (the curve: per step and side, all calls
// and per kind), soak.csv (one row per sample), command.txt (the command
// to repeat the run), config.hcl (the daemon's config; the tokens are
// random per run), daemon-cold.log and daemon-warm.log (the daemon's JSON
// logs; the cluster run's replicas log to replica-a.log and replica-b.log),
// before-*.txt and after-*.txt (goroutine stacks and open file
// descriptors at the lifecycle checks) and bin/ (the fixtures). The
// daemon's data_dir is removed unless -keep-data. Progress goes to stderr
// through log/slog. The exit status is 0 when every check passed, 1 when
// one failed, 2 for a usage error.
//
// # Commands
//
// Run from the repository root (the tool builds its fixtures with the go
// command; -bin-dir names prebuilt ones instead):
//
//	go run ./cmd/mcphost-load -out /tmp/mcphost-load                 # the full run, about 14 minutes
//	go run ./cmd/mcphost-load -short -out /tmp/mcphost-load-short    # every phase, about 40 s
//	go run ./cmd/mcphost-load -soak 0 -out /tmp/mcphost-load-curve   # start-up and the load curve only
//	go run ./cmd/mcphost-load -steps '' -soak 1h -out /tmp/mcphost-soak  # a longer soak, no curve
//	go run ./cmd/mcphost-load -cluster -out /tmp/mcphost-cluster      # two replicas on PostgreSQL, with faults, about 13 minutes
//	go run ./cmd/mcphost-load -cluster -short -out /tmp/mcphost-cluster-short  # the same in about a minute
//	go test -run 'TestSmoke|TestClusterSmoke' ./cmd/mcphost-load     # the smoke tests CI runs
//
// -profile writes a CPU profile of the soak (soak-cpu.pprof) and a heap
// profile at its end (soak-heap.pprof) to OUT. -plugin-timeout sets the
// plugin block's timeout (default mcphost's 250ms, which includes waiting
// for a free instance: on a starved CPU a call can fail there, and the run
// then fails, as any failed call does). -store-sync normal runs the single
// daemon with `store { sync = "normal" }` (appends acknowledged from the
// entry log; the default is full). `go run ./cmd/mcphost-load -h`
// lists every flag.
//
// # Limits
//
// Linux only for the /proc counts (elsewhere they are -1 and their checks
// are skipped). The load generator and the direct clients share the
// daemon's process and CPUs, like BenchmarkAPICall's client does; on a
// small machine that lowers every throughput figure, the direct side's
// too. The tool never binds anything but 127.0.0.1:0, never reads tokens
// from the environment, and stops every process it started, also on
// SIGINT; the fixtures it starts die with it (Pdeathsig).
package main
