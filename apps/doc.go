// Package apps will own the MCP Apps host logic: advertising the
// io.modelcontextprotocol/ui extension, keeping ui:// links on tools, reading
// and validating an App's HTML after a successful call, building the display
// record with its text fallback, and compaction (../shared/docs/apps.md).
//
// It holds no code yet. When it needs to read a resource it will declare a
// small interface of its own that the host satisfies; it must never import the
// host package or another leaf.
package apps
