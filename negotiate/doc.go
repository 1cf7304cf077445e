// Package negotiate decides, per server, which MCP protocol era to speak and
// hands back a connected go-sdk session together with the evidence for that
// choice (../shared/docs/protocol.md §3).
//
// [Connect] is the entry point. In "legacy" mode (the default) it connects
// pinned to 2025-11-25 with no probe and one process, as mcphost always did.
// In "auto" mode it
//
//  1. plans the discovery budget ([PlanProbe], §3.3) and, when the window
//     cannot hold a probe plus the legacy fallback, skips the probe
//     (evidence "budget");
//  2. looks the server configuration up in the era cache ([EraCache],
//     §3.8): a fresh verdict skips the probe and the sibling process;
//  3. probes with server/discover: on a disposable sibling process (stdio,
//     default), on the session process through go-sdk with a capped
//     discover (stdio, stdio_probe = "in_place"), or with a raw net/http POST
//     (Streamable HTTP); SSE (2024-11-05) servers are legacy and never
//     probed;
//  4. classifies the outcome with the pure decision table [Classify]
//     (§3.6): modern, corrective (probe once more), legacy, inconclusive
//     (an HTTP timeout: provisional legacy or an error, §3.7) or fail
//     (auth, transient and network errors are never era evidence);
//  5. connects pinned to the verdict on a new transport within the same
//     window, verifies what go-sdk negotiated (§3.9) — a modern verdict that
//     ends legacy is kept but dropped from the cache; -32022 from a legacy
//     initialize re-probes as modern once — and stores the verdict unless
//     it is one that is never stored.
//
// Every [Result] carries a [Verdict]: era, protocol version, a
// human-readable evidence line ("legacy: probe answered -32601") and a
// stable label ("rpc:-32601") for logs and tests.
//
// What callers must still do (trap T6): go-sdk sends a tools/call's
// Mcp-Param-* headers only for tools listed in the same session, so on
// modern Streamable HTTP sessions list tools right after Connect and after
// every tools/list_changed, before the first tools/call; on -32020, re-list
// and retry once.
//
// The package never imports the host package or another leaf (cache, apps,
// sandbox, plugins, policies); the host passes it whatever it needs through
// [Spec] (commands, HTTP client, go-sdk client, cache, logger).
package negotiate
