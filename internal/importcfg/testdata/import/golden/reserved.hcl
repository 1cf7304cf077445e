# Written by `mcphost import` from:
#   reserved/claude_desktop_config.json (Claude Desktop)
#   reserved/config.toml (Codex)
# Values of env maps and secret-looking headers are not copied: they are
# read with env() when mcphost starts. Each server lists the variables
# to set. Review every command before you run it.

# From reserved/claude_desktop_config.json (Claude Desktop): mcpServers.notes
# Set before starting mcphost:
#   NOTES_TOKEN  value not copied from the source
server "notes" {
  command = "npx"
  args    = ["-y", "notes-mcp"]
  env = {
    NOTES_TOKEN = env("NOTES_TOKEN")
  }
}

# From reserved/config.toml (Codex): mcp_servers.tasks
# Set before starting mcphost:
#   TASKS_TOKEN  passed through by Codex (env_vars)
server "tasks" {
  command = "tasks-server"
  env = {
    TASKS_TOKEN = env("TASKS_TOKEN")
  }
}
