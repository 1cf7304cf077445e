# Written by `mcphost import` from:
#   claude/claude_desktop_config.json (Claude Desktop)
# Values of env maps and secret-looking headers are not copied: they are
# read with env() when mcphost starts. Each server lists the variables
# to set. Review every command before you run it.

# From claude/claude_desktop_config.json (Claude Desktop): mcpServers.filesystem
server "filesystem" {
  command = "npx"
  args    = ["-y", "@modelcontextprotocol/server-filesystem", "/Users/alice/Desktop", "/Users/alice/Downloads"]
}

# From claude/claude_desktop_config.json (Claude Desktop): mcpServers.github
# Set before starting mcphost:
#   GITHUB_PERSONAL_ACCESS_TOKEN  value not copied from the source
server "github" {
  command = "npx"
  args    = ["-y", "@modelcontextprotocol/server-github"]
  env = {
    GITHUB_PERSONAL_ACCESS_TOKEN = env("GITHUB_PERSONAL_ACCESS_TOKEN")
  }
}

# From claude/claude_desktop_config.json (Claude Desktop): mcpServers["brave.search"]
# Set before starting mcphost:
#   BRAVE_API_KEY  value not copied from the source
server "brave_search" {
  command = "npx"
  args    = ["-y", "@modelcontextprotocol/server-brave-search"]
  env = {
    BRAVE_API_KEY = env("BRAVE_API_KEY")
  }
}

# From claude/claude_desktop_config.json (Claude Desktop): mcpServers.sqlite
server "sqlite" {
  command = "uvx"
  args    = ["mcp-server-sqlite", "--db-path", "/Users/alice/test.db"]
  enabled = false
}
