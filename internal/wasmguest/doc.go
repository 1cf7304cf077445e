// Package wasmguest holds what mcphost's two hosts of WebAssembly guests
// share, so that each piece exists once: plugins (the result plugins of
// the pipeline's result and display stages) and wasmserver (MCP servers
// compiled to wasm, run inside the daemon). Both are leaves, which may not
// import each other, so what they share lives here.
//
// It owns:
//
//   - the linear memory allocator ([WithMemoryAllocator]): wazero grows a
//     memory to exactly the size asked, while a Go guest's heap grows
//     512 KiB at a time, so each step copied the whole memory again; this
//     allocator at least doubles the capacity instead (RATIONALE.md, "Two
//     wazero v1.12.0 details");
//   - the token bucket over a guest's log lines ([LogLimiter], [LogBurst],
//     [LogPerSecond]), so that a guest cannot flood the daemon's log.
//
// A caller makes one [LogLimiter] per guest it logs for, and passes the
// context from [WithMemoryAllocator] to wazero when it instantiates a
// module. The package keeps no state of its own between guests.
//
// It must never:
//   - import the host or any other mcphost package (deps_test.go holds it
//     to that), since the leaves import it;
//   - grant a guest anything, or decide what a guest may do: files,
//     environment, hosts, memory limits and timeouts are the callers';
//   - back a shared memory: growing moves the bytes to a new slice;
//   - write a log line itself: [LogLimiter.Allow] only says whether the
//     caller may, and the caller renders and bounds the line.
package wasmguest
