# gateway.hcl: mcphost as one MCP server for your MCP clients and agents.
#
# `mcphost serve -config gateway.hcl` serves, next to the WebShell:
#
#   http://127.0.0.1:7777/mcp                  every server below, tools named SERVER__TOOL
#   http://127.0.0.1:7777/mcp/servers/revenue  one server, with its own tool names
#   http://127.0.0.1:7777/mcp/endpoints/demo   the servers of the endpoint "demo"
#
# Each client sends a principal's token as "Authorization: Bearer TOKEN";
# `mcphost gateway config cursor -config gateway.hcl` prints the snippet.
# Calls from clients have origin "gateway" and show in the WebShell, one
# session per client connection.

listen = "127.0.0.1:7777"

server "revenue" {
  command = executable()
  args    = ["demo", "revenue"]

  # Each 2025-11-25 MCP client of the gateway gets its own upstream session
  # (here: its own process) for its calls, so what the server asks during a
  # call (elicitation, sampling) reaches that client. At most this many,
  # and at most a quarter of them (here 2) for the clients of one principal
  # unless max_client_sessions_per_principal says otherwise; a call that
  # finds every session it may take busy waits for one.
  session_mode        = "per_client"
  max_client_sessions = 8
}

principal "agent" {
  token  = env("AGENT_TOKEN", "placeholder-agent-token-replace-me")
  groups = ["agents"]
}

gateway {
  # enabled = false turns /mcp off (the default is on).
  enabled = true

  # The servers /mcp fronts; leave it out for every server.
  servers = ["revenue"]

  # An idle 2025-11-25 MCP session ends after this; 2026-07-28 clients
  # have no sessions.
  session_timeout = "30m"

  # At most this many 2025-11-25 sessions open at once, per principal and
  # in all; past either a new session is refused with 429. `initialize`
  # also counts against the principal's rate_limit.
  max_sessions_per_principal = 64
  max_sessions               = 4096

  # More aggregate endpoints over a subset of the servers.
  endpoint "demo" {
    servers = ["revenue"]
  }
}

# Rules can tell MCP clients apart by what they call themselves.
policy "no-region-filter-for-agents" {
  phase   = "call"
  effect  = "deny"
  when    = "origin == 'gateway' && has(args.region) && client.name != 'claude-code'"
  message = "Agents see all regions; ask for the whole quarter."
}
