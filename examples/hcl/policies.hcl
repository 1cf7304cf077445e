# policies.hcl: who may see, call and render what, as CEL rules.
#
# A policy block is one rule of one phase:
#   list    which tools a principal sees (GET /api/v1/tools, the CLI, the
#           WebShell); a hidden tool cannot be called either
#   call    before the call reaches the server; adds `args`
#   result  before the result is shown; adds `args` and `result`
#   app     before an MCP App renders; adds `app` (its CSP and permissions)
#
# Rules of a phase run in file order and the first whose `when` is true
# decides; when none matches, `policies { default }` decides. Every rule sees
# server, era ("modern" | "legacy"), origin ("user" | "app" | "api" |
# "gateway"), client (name, version), principal (name, groups), tool.name,
# tool.title and tool.annotations (readOnlyHint, destructiveHint,
# idempotentHint, openWorldHint, MCP's defaults when a server omits them).
#
# A rule that fails to evaluate (a missing key, a wrong type, too costly)
# denies, whatever its effect, and says why. Write has(args.path) before
# args.path when a call may leave the argument out.
#
# Try a rule before deploying it:
#   mcphost policy eval -config examples/hcl/policies.hcl -phase call input.json

server "files" {
  command = "npx"
  args    = ["-y", "@modelcontextprotocol/server-filesystem", "/srv/data"]
}

server "revenue" {
  command = executable()
  args    = ["demo", "revenue"]
}

principal "alice" {
  token  = env("ALICE_TOKEN", "placeholder-alice-token-replace-me")
  groups = ["writers", "analysts"]
}

principal "bob" {
  token  = env("BOB_TOKEN", "placeholder-bob-token-replace-me")
  groups = ["analysts"]
}

policies {
  # What happens when no rule of a phase matches: "allow" (the default) or
  # "deny".
  default = "allow"
}

# Only writers see (and so may call) tools that are not read-only.
policy "read-only-unless-writer" {
  phase   = "list"
  effect  = "deny"
  when    = "!tool.annotations.readOnlyHint && !('writers' in principal.groups)"
  message = "Only the writers group may use tools that change things."
}

# No writes outside /srv/data, and no way around it with "..".
policy "writes-stay-in-srv-data" {
  phase   = "call"
  effect  = "deny"
  when    = <<-CEL
    server == "files" &&
    tool.name in ["write_file", "edit_file", "create_directory"] &&
    (!has(args.path) || !args.path.startsWith("/srv/data/") || args.path.contains(".."))
  CEL
  message = "Files may only be written under /srv/data."
}

# An App may not call tools that destroy things on its own.
policy "no-destructive-calls-from-apps" {
  phase   = "call"
  effect  = "deny"
  when    = "origin == 'app' && tool.annotations.destructiveHint && !tool.annotations.readOnlyHint"
  message = "Apps may not call destructive tools."
}

# A person approves every destructive call, once, in the WebShell.
policy "approve-destructive" {
  phase   = "call"
  effect  = "ask"
  when    = "tool.annotations.destructiveHint && !tool.annotations.readOnlyHint"
  message = "This tool can delete or overwrite data. Run it?"
}

# Withhold results that carry something that looks like a private key:
# result.text is the text content and the text of embedded resources,
# result.structuredText the structured content as JSON.
policy "no-private-keys" {
  phase   = "result"
  effect  = "deny"
  when    = <<-CEL
    [result.text, result.structuredText].exists(t,
      t.contains('-----BEGIN') && t.contains('PRIVATE KEY-----'))
  CEL
  message = "The result looked like it contained a private key, so it was withheld."
}

# An App may only reach the network at hosts on this allow-list.
policy "app-csp-allow-list" {
  phase   = "app"
  effect  = "deny"
  when    = <<-CEL
    !app.csp.connectDomains.all(d, d in ["https://api.example.com"]) ||
    !app.csp.resourceDomains.all(d, d in ["https://cdn.example.com"]) ||
    size(app.csp.frameDomains) > 0
  CEL
  message = "This App wants to reach hosts outside the allow-list, so it is shown as text."
}
