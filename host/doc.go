// Package host is mcphost's composition root. It turns a loaded
// [config.Config] into running MCP client sessions and owns everything with a
// lifetime. Its layers are under host/internal (docs/architecture.md):
// upstream supervises each server and is the one way to a caller's session,
// generation is one config's world with the one list filter, pipeline holds
// the stages of an operation, questions the approvals and elicitations,
// events the streams. The host wires them together and runs the stage list
// of the one call pipeline (pipeline.go) that every door runs:
// Call for a session of the WebShell and the API, CallTool for one-shot
// commands; what differs between them (a record or none, how an `ask` is
// answered, how a server's question is answered) is data handed to the
// pipeline, not a copy of its stages.
//
// A server may ask the user something while a call runs (elicit.go): on
// a legacy session an elicitation/create, which the connection attributes
// to the call in flight (upstream/inflight.go); on a
// 2026-07-28 session an input_required round, which the pipeline answers
// itself and retries (rounds.go), except for the gateway, whose clients
// answer their own rounds. Either way the request is checked (a flat
// schema within bounds, an http or https URL), asked through the call's
// door (the broker of pending elicitations for the WebShell and the API,
// the terminal for the CLI) and recorded in the call's trail without a
// secret value. roots/list is answered from the server block's roots;
// sampling is refused (mcphost has no model) and never advertised.
//
// Every server is connected and supervised independently (package
// upstream): a server that fails
// to start, exits, hangs or sends garbage changes its own [ServerStatus] and
// nothing else. Every server is connected through the negotiate package: in
// the legacy era (initialize at protocol version 2025-11-25), or, with
// version_negotiation = "auto", in the era it finds. A remote server with
// an auth block signs in through package oauth (oauth.go): its HTTP client
// carries the credential, a challenge nobody can answer puts it in
// [StateNeedsAuth] or [StateAuthError] (never failed, never restarted), and
// with per-principal tokens each principal gets its own upstream session,
// catalog and cache partition under the server's upstream.Conn.
//
// Everything derived from one config (servers, principals, policies,
// plugins) is one generation, swapped whole by [Host.Reload]: new and
// changed servers are connected before the swap, unchanged ones keep their
// process, and each call runs under the generation it started in.
//
// Leaves (negotiate, cache, apps, sandbox, plugins, policies, oauth) never import
// this package; it wires them together. Only host/httpapi may import gin.
package host
