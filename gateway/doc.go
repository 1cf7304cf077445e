// Package gateway serves mcphost as an MCP server to MCP clients and agents
// (architecture.md, "The doors"; research/gateway-and-scale.md §1).
//
// Endpoints, on the daemon's listener:
//
//	/mcp                     every server the gateway fronts, tools named SERVER__TOOL
//	/mcp/servers/NAME        one server, its own tool names and resource URIs
//	/mcp/endpoints/NAME      an `endpoint "NAME"` block: a subset, named like /mcp
//
// Both protocol eras are served on one URL: a request whose
// MCP-Protocol-Version is 2026-07-28 or later goes to a stateless go-sdk
// handler, anything else (initialize, Mcp-Session-Id traffic, the GET
// stream) to a stateful one, both in front of the same *mcp.Server.
//
// Every request carries a principal's bearer token (or the owner's); the
// gateway never forwards it upstream. The gateway owns the MCP server side
// only; every answer comes from the host (host.GatewayFilter,
// host.GatewayCall, …), so visibility, policies, plugins and the transcript
// are the host's pipeline, the same one the WebShell and the CLI run. A
// receiving middleware answers the lists (per caller: view.go) and
// completions; tools/call, prompts/get and resources/read go through
// go-sdk's handling of the entries the gateway registers (so 2026-07-28
// results carry their resultType) into handlers that ask the host, except
// a tools/call that can get nothing back but its answer: the gateway
// decodes it, runs the same handler and writes the answer itself
// (fastcall.go), and keeps legacy sessions' idle time (idle.go). The
// catalogs are mirrored into the *mcp.Server (AddTool, RemoveTools, …) by
// diffing on every change, which is how go-sdk sends list_changed to
// legacy sessions and listen streams without ever an empty window.
//
// An `ask` rule is put to a client that can elicit: on a legacy session by
// asking it, to a 2026-07-28 client in an input_required round of the
// gateway's own (approval.go); otherwise the WebShell answers. A server's
// log message reaches the client of the call it belongs to (the host
// decides whose it is: host/serverlog.go), at the level the client asked
// for; one that belongs to no call reaches the clients with a call running
// on the server only when its block says log_messages = "all".
//
// A server that needs input within a request (an input_required answer,
// SEP-2322) is relayed: to a 2026-07-28 client as it came, with the
// server's requestState sealed by the gateway (bound to the principal, the
// endpoint and the tool, prompt or resource; input.go) and the client's
// capabilities passed to the server; to a legacy client by asking it on
// its session and retrying, round after round. Resource subscriptions are
// made on the server's session once per URI (the host counts them) and
// its updates passed on; a server's list_changed reaches the clients even
// when the list came out the same.
//
// Nothing sent to a client waits for it (stream.go): go-sdk writes each
// request's answer into a stream of the gateway's, a bounded queue that a
// goroutine of the stream's writes to the connection, so a client that
// stops reading never holds up a server's notifications to the others. A
// full queue drops notifications (counted: Gateway.WriteMetrics); a write
// that makes no progress for 30 s ends the stream.
//
// What callers hold open is bounded and revocable (held.go). A request
// that may open a 2025-11-25 session counts against its principal's
// rate_limit and takes one of max_sessions_per_principal places of the
// principal and max_sessions of the daemon, 429 beyond; the place is freed
// when the session ends. Every request in flight and every session is held
// under the credential it came with, and a reload that revokes that
// credential ends them. The token is checked before the path, and
// /mcp/servers/NAME of a server the caller may not see is no endpoint, so
// a hidden server answers as a missing one.
//
// Replicas (Options.Cluster, package cluster): in cluster mode a legacy
// session's id is "<replica>.<random>", and a front handler before the era
// dispatch forwards a request for another replica's session to that
// replica (streams included), once its bearer token has verified here (a
// request that does not authenticate is 401 on the replica it reached,
// its body unread, nothing forwarded); an owner that is gone, or whose
// heartbeat is stale, is 404, so the client starts a new session. 2026-07-28 requests are never forwarded. Every
// replica seals requestState with the same key (Options.SealKey, derived
// from the cluster's shared secret), so a client's next round may land on
// any of them. On a single node none of this runs and session ids are
// go-sdk's own. While the daemon drains, a 2026-07-28 tools/call is
// answered 503 before its body is read (a load balancer retries it
// elsewhere); a legacy session's new calls get the pipeline's refusal.
//
// The stdio bridge (Bridge) relays JSON-RPC between stdin/stdout and a
// running daemon's /mcp, raw, so stdio-only clients share the daemon's warm
// connections, policies and transcript.
package gateway
