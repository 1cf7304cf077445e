// Package sandbox owns the MCP App sandbox proxy (../shared/docs/apps.md §8,
// §9): the static page served at [Path], its http.Handler, the
// Content-Security-Policy built from validated sources, and the rules for
// the hostOrigin that may frame it.
//
// # Where it sits
//
// An MCP App is server-supplied HTML and is treated as hostile code. The
// WebShell shows it in two nested iframes, both sandboxed without
// allow-same-origin: the outer one loads this proxy page, under the other
// loopback name than the WebShell's (127.0.0.1 ⇄ localhost), or, for a
// WebShell opened at a public URL, under the host name of its own the
// config gives the sandbox (apps_sandbox_url), and the proxy
// creates the inner srcdoc iframe holding the App. The proxy relays
// JSON-RPC messages between the WebShell and the App, identifying senders by
// event.source because every opaque frame's origin is "null" (§13). The App
// inherits the proxy's CSP, so the header built here is what confines the
// App's network, frames and base URI.
//
// host/httpapi mounts [Handler] on GET and HEAD [Path] before bearer
// authentication (the page is public by design) and supplies
// Options.AllowedHostOrigin, which knows the daemon's port. The apps package
// validates the same sources when it builds a display record; this package
// validates them again because the query comes from the browser.
//
// # What it exports
//
//   - [ValidSource]: the source allow-list of §8.2 (scheme, optional "*.",
//     ASCII host, optional port), checked byte by byte without case folding.
//   - [LocalSource]: whether a valid source names this machine (localhost,
//     *.localhost, 127.0.0.0/8 and 0.0.0.0 in every IPv4 spelling browsers
//     accept); the host drops those from an App's CSP unless the App's server
//     is itself on loopback.
//   - [HostNetwork]: where the host of a source or a URL is: loopback, a
//     private or link-local block, a cloud metadata address, or public
//     (names are not resolved); the host drops private and link-local
//     sources unless the server's own address is in the same block.
//   - [CSP] and [Header]: the policy of §8.3, with no 'self',
//     'unsafe-eval' or blob:, a sandbox directive, and frame-ancestors limited
//     to the host origin. [HeaderWith] and [Grants]: the same with
//     'unsafe-eval' and data: in script-src, for a server whose operator allowed it
//     (app_csp_unsafe_eval); never at an App's own request.
//   - [Handler] and [Options]: the route of §8.1–8.5.
//
// # What it must never do
//
//   - Serve session data, tokens or any per-request or per-user content: the
//     body is one embedded constant (proxy.html), identical for every request.
//   - Put unvalidated input into a header or the HTML. net/http does not
//     validate header values (';' and ',' pass, CR/LF become spaces), so
//     validation is the only defence against directive injection; the
//     header builder also drops anything that fails validation.
//   - Fold case with Unicode rules (strings.ToLower, regexp (?i),
//     strings.EqualFold): U+212A and U+017F fold to ASCII letters.
//   - Add 'self' to the policy: the App would reach the daemon under the
//     proxy's loopback name.
//   - Set Access-Control-Allow-Origin.
//   - Import gin (only host/httpapi does), the host package or another leaf.
package sandbox
