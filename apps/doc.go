// Package apps holds the MCP Apps host logic of mcphost
// (../shared/docs/apps.md §1–§7, §14): it advertises the
// io.modelcontextprotocol/ui extension ([Advertise], [ServerAdvertises]),
// reads a tool's ui:// link and visibility ([ToolLink]), and after a
// successful call of a linked tool reads and validates the App's HTML and
// builds the display record with its text fallback ([Resolve], [Display]);
// the host adds the called tool's definition ([ToolDefinition],
// [Display.Tool]) for the App's hostContext.toolInfo.tool.
// [Compact] empties a record for compaction and [Validate] re-checks a record
// that display plugins or policies may have changed. For what an App may ask
// the host for (§12), [ToolVisibility] tells whether an App may call a tool,
// [CheckLink] checks a ui/open-link URL and [CheckMessage] a ui/message; the
// host decides whether the request is allowed at all (its App gate).
//
// The package is a leaf: it reads resources through its own [ResourceReader]
// interface, which the host satisfies with its session (and cache), and it
// receives the CSP source allow-list as a function ([Options.ValidSource]). It
// never imports the host or another leaf, and it does no logging: whatever the
// host should log is in the record ([Display.Warning], [Display.Dropped]).
//
// Invariants: the model-visible [mcp.CallToolResult] is never modified (the
// record holds a JSON copy of it), App HTML never appears in a warning or an
// error, and an invalid CSP source is never passed through.
package apps
