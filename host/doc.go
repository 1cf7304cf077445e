// Package host is mcphost's composition root. It turns a loaded
// [config.Config] into running MCP client sessions and owns everything with a
// lifetime: server processes and connections, their supervision and restart,
// the registry of every server's tools, prompts, resources and resource
// templates, and the tool-call path (progress, cancellation, per-server call
// timeouts).
//
// Every server is connected and supervised independently: a server that fails
// to start, exits, hangs or sends garbage changes its own [ServerStatus] and
// nothing else. A server is connected in the legacy era (initialize at
// protocol version 2025-11-25) or, with version_negotiation = "auto", in the
// era the negotiate package finds.
//
// Everything derived from one config (servers, principals, policies,
// plugins) is one generation, swapped whole by [Host.Reload]: new and
// changed servers are connected before the swap, unchanged ones keep their
// process, and each call runs under the generation it started in.
//
// Leaves (negotiate, cache, apps, sandbox, plugins, policies) never import
// this package; it wires them together. Only host/httpapi may import gin.
package host
