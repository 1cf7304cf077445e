// Package negotiate decides, per server, which MCP protocol era to speak and
// hands back a connected session together with the evidence for that choice.
//
// It will own (see ../shared/docs/protocol.md §3): the `legacy` and `auto`
// modes of `version_negotiation`, the discovery budget arithmetic, the stdio
// sibling and in-place probes, the raw HTTP probe, the pure classification of
// probe answers, and the era cache.
//
// Today mcphost connects every server in legacy mode (initialize at
// 2025-11-25, no probe); the host package does that directly and this package
// holds no code yet.
//
// It must never import the host package or another leaf (cache, apps, sandbox,
// plugins, policies); the host passes it whatever it needs.
package negotiate
