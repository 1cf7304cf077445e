// Package plugins runs operator-supplied WebAssembly plugins that rewrite tool
// results and App display records. Plugins use the Extism plugin ABI (bytes
// in, bytes out, a string config map, an error message), so authors write
// them with any Extism PDK; the host is github.com/extism/go-sdk on wazero,
// which this package configures itself. It is the only package that imports
// extism.
//
// # Where it sits
//
// The host builds one [Runtime] per process (it owns the compilation cache,
// in memory and on disk), loads each config generation's `plugin` blocks
// with [Runtime.Load] into a [Set], and swaps sets on reload ([Set.Close]
// waits for calls in flight). In the call pipeline, [Set.RunResult] runs
// after the upstream call and before the result is recorded or shown;
// [Set.RunDisplay] runs on an App's display record before it renders.
// [Set.Run] serves `mcphost plugin run`. The package imports neither the
// host nor another leaf: the sandbox's CSP source check comes in as
// [Options.ValidSource], a tool's output-schema check as
// [ResultInput.ValidateStructured].
//
// # The contract
//
// A plugin exports one function per stage, without parameters, returning an
// i32 (0 for success):
//
//   - Stage "result" calls on_result. Input:
//     {"server", "tool", "arguments", "principal": {"name", "groups"},
//     "result": <CallToolResult>}. Output: {"result": <CallToolResult>}, or
//     empty output for "unchanged".
//   - Stage "display" calls on_display. Input: the same plus "display":
//     {"type": "mcp_app", "resourceUri", "html", "csp": {"connectDomains",
//     "resourceDomains", "frameDomains", "baseUriDomains"}, "permissions",
//     "fallbackText"}; "result" is the final model-visible result, read-only.
//     Output: {"display": {...}}, or empty.
//
// A plugin fails by returning non-zero, with a message set through its PDK
// (pdk.SetError in Go). Plugins of a stage run in config order; each sees
// the previous one's output. The Extism config map is the block's `config`.
//
// Every output is checked ([ValidateResultOutput], [ValidateDisplayOutput]):
// at most 2 MiB ([MaxIOBytes]; a display stage's 34 MiB,
// [MaxDisplayIOBytes]) before decoding, valid UTF-8, strict JSON (no
// duplicate keys, nesting at most 128), no unknown keys; a result must be a
// well-formed CallToolResult with content items of known types, may set
// isError but never clear it, and keeps structuredContent valid against the
// tool's output schema; a display record keeps its type and resourceUri,
// carries at most 16 MiB of html ([MaxHTMLBytes], the largest App a server
// may serve), and may only remove CSP sources and permissions, never add
// one. An invalid output is a plugin error.
//
// # Limits
//
// A plugin gets nothing by default: no files (no preopened directory), no
// network (no allowed hosts, so Extism's HTTP call refuses every request),
// no environment variables or arguments, a fake clock and deterministic
// randomness (wazero's defaults), no Extism variables (MaxVarBytes 0).
// Its stdout and stderr go to a 4 KiB buffer per call; the first line of it
// is added to the error of a trap. Its log lines go to the Logger,
// rate-limited per plugin, at or above the level set by [SetLogLevel]
// (process-wide in the SDK; off until main calls it). NewRuntime warns when
// EXTISM_ENABLE_WASI_OUTPUT is set, because the SDK then sends guest output
// to the daemon's own stdout and stderr.
//
// Each call has the plugin's timeout ([Spec.Timeout], default 250ms),
// waiting for an instance included; a guest that runs past it is stopped
// (the runtime is compiled with close-on-context-done). Each instance's
// linear memory is capped ([Spec.MemoryLimit], default 64 MiB); a module
// that declares more than its limit fails to load. Input and output are
// capped at 2 MiB.
//
// # Pool
//
// Each plugin is compiled once per load (in parallel, through the shared
// cache, so a reload or restart finds it compiled) and gets a bounded pool
// of [Spec.PoolSize] instances (default 4). An instance serves one call at a
// time. Load makes one instance, which must pass its warm-up (see [Set]),
// so a broken plugin fails at load with a [LoadError]; the rest of the pool
// fills in the background. Making an instance (instantiating the module,
// which runs its start function, then the warm-up calls) has one deadline:
// four times the timeout, at least 10s. A call waits for a free instance under its
// timeout. A clean call returns the instance to the pool; any error, trap,
// timeout, cancellation or invalid output closes it, and a replacement is
// made in the background. An instance is also replaced after [RecycleAfter]
// calls, because a Go guest that never yields never gives memory back.
//
// # Failure handling
//
// A failed plugin is reported as an [Error] naming it, and recorded in the
// [Outcome] trail. With on_error = "fail" (the default) [Set.RunResult]
// returns no result at all: the caller must fail the call rather than show
// the unprocessed result, since a failed redaction must not leak. At the
// display stage the App must not render. With on_error = "skip" the input
// passes on unchanged and the Outcome records the error.
//
// # What it must never do
//
// Grant a plugin files, network, environment, arguments or a real clock;
// share an instance between goroutines; reuse an instance after a trap;
// compile per call; close the compilation cache while a plugin is open
// ([Runtime.Close] closes its sets first); import the host or another leaf.
package plugins
