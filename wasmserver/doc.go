// Package wasmserver runs an MCP server compiled to WebAssembly inside the
// daemon and hands the host an MCP transport to it. A wasm server gets no
// more than its server block grants: the directories it names, its env
// map, its allowed hosts (plugins only); it cannot start processes, and a
// WASI command has no network at all. It is the cheapest strong isolation
// mcphost offers (docs/research/sandbox.md §3.5), for servers built for it.
//
// # Kinds
//
// [Detect] tells the kind from the module's exports, without compiling it:
//
//   - [KindWASICommand]: a WASI preview 1 command (it exports _start), such
//     as a go-sdk server built with GOOS=wasip1 GOARCH=wasm. It runs on
//     wazero in a goroutine; its stdin and stdout are pipes that carry MCP's
//     stdio transport (newline-delimited JSON-RPC), which the host reaches
//     through go-sdk's IOTransport. Its argv is the file's base name and
//     [Spec.Args]; its environment is [Spec.Env] alone; [Spec.Read] and
//     [Spec.Write] are mounted at the same path inside, read-only and
//     read-write. It may only import wasi_snapshot_preview1.
//   - [KindExtismV2] (and [KindExtismV1]): an Extism plugin with hyper-mcp's
//     ABI (exports list_tools and call_tool; v1: describe and call; the ABI
//     is described in abi.go). An in-process go-sdk MCP server lists the
//     plugin's tools, prompts, resources and resource templates once, at
//     start, and serves each with a handler that calls the plugin; the
//     host's sessions reach it over in-memory pipes, as many as it makes.
//     [Spec.Env] is the plugin's Extism config, [Spec.Read] and
//     [Spec.Write] its allowed paths, [Spec.AllowHosts] the hosts of its
//     HTTP requests. hyper-mcp's host functions (extism:host/user) are
//     provided: log and progress notifications reach the client of the
//     call; list-changed notifications are logged; elicitation, sampling
//     and roots fail the call.
//
// Both kinds get a real clock, cryptographic randomness and real sleeps
// (ended at Close), unlike wazero's defaults and mcphost's result plugins:
// a server is a program that stamps times and waits.
//
// # Where it sits
//
// The host detects or is told that a server block is `wasm = "..."`,
// calls [Start] with a [Spec] built from the block, connects its
// mcp.Client to [Server.Transport] where it would have started a process,
// watches [Server.Done] for the server's status, and calls [Server.Close]
// to stop it. The package imports nothing of mcphost's: it takes a plain
// Spec and gives a go-sdk transport. It does not apply the host's
// policies, which see the session like any other server's.
//
// # Limits
//
// Each module's linear memory is capped ([Spec.MemoryLimitPages]: 1 GiB
// for a command, 512 MiB for a plugin by default). A command's stdout
// lines are capped at [MaxLineBytes]: a longer one stops the server, and
// Err says so, since nothing after it can be framed. A plugin's calls take
// turns on one instance (an instance is one guest thread); each call runs
// at most [Spec.CallTimeout] (30 s by default) and any failed call
// replaces the instance. Compiled code is cached in [Spec.CacheDir] when
// set (a Go server compiles in about ten seconds, and loads from the cache
// in about half of one).
//
// Extism's HTTP host function checks the host of the URL it is given
// against the allowed hosts, but follows redirects with Go's default
// client and does not check the addresses a name resolves to: an allowed
// host that redirects elsewhere, or whose name resolves to a private
// address, is reached. Allow only hosts you trust as much as the plugin.
//
// # What it must never do
//
// Grant a module files, environment variables or hosts its Spec does not
// name; pass the daemon's own stdio or environment through (the
// EXTISM_ENABLE_WASI_OUTPUT variable would send plugin output to the
// daemon's stdout: do not set it); share a plugin instance between two
// calls at once; reuse an instance after a failed call; let a module that
// never returns, sleeps or floods its stdout hang Close or grow the
// daemon's memory without bound; import the host or another leaf.
package wasmserver
