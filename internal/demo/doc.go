// Package demo owns the built-in demo MCP servers that `mcphost demo NAME`
// runs over stdio. There are two. The revenue dashboard ([NewRevenueServer],
// [ServeRevenue]) is the App fixture of the embedded default config and of
// every MCP Apps test (shared/docs/apps.md §16). The notes server
// ([NewNotesServer], [ServeNotes]) keeps notes in its process's memory: the
// example of a stateful server, which the cluster example in deploy/ runs
// with placement = "singleton".
//
// The revenue server advertises the "io.modelcontextprotocol/ui" extension,
// offers the tool show_revenue_dashboard (deterministic figures, a readable
// text summary and structuredContent, linked to its UI by both the nested
// _meta.ui.resourceUri key and the deprecated flat "ui/resourceUri" key) and
// serves the resource ui://revenue-dashboard: one self-contained HTML
// document, embedded from dashboard.html, that speaks the App side of the
// MCP Apps postMessage protocol with vanilla JavaScript.
//
// It sits outside the call pipeline: the host talks to it like any other
// upstream server, through a real process or an in-memory transport.
//
// Variants ([Variants], [NewRevenueServerVariant], [ServeRevenueVariant];
// `mcphost demo revenue -variant NAME`) break one thing each for negative
// tests: a wrong MIME type, an oversized or unavailable resource, a server
// that links its App without advertising the extension, and Views that are
// malicious, spoof messages at other frames, or never initialize.
//
// The package must never import host or any leaf package, never read files,
// environment variables or the network at run time, and its normal View must
// never reference an external URL, use browser storage, eval, or open a
// network connection: it is the reference of what a well-behaved App looks
// like. The malicious and spoofer Views (malicious.html, spoofer.html) break
// these rules on purpose, and only ever run as those variants.
package demo
