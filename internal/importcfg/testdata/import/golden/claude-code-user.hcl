# Written by `mcphost import` from:
#   claude-code/home/.claude.json (Claude Code)
# Values of env maps and secret-looking headers are not copied: they are
# read with env() when mcphost starts. Each server lists the variables
# to set. Review every command before you run it.

# From claude-code/home/.claude.json (Claude Code): mcpServers.context7
# Set before starting mcphost:
#   CONTEXT7_API_KEY  the value of the CONTEXT7_API_KEY header
server "context7" {
  url = "https://mcp.context7.com/mcp"
  headers = {
    CONTEXT7_API_KEY = env("CONTEXT7_API_KEY")
  }
}

# From claude-code/home/.claude.json (Claude Code): mcpServers.memory
server "memory" {
  command = "npx"
  args    = ["-y", "@modelcontextprotocol/server-memory"]
}

# From claude-code/home/.claude.json (Claude Code): projects["/home/alice/src/shop"].mcpServers.postgres
server "postgres" {
  command = "npx"
  args    = ["-y", "@modelcontextprotocol/server-postgres", "postgresql://localhost/shop"]
}

# From claude-code/home/.claude.json (Claude Code): projects["/home/alice/src/blog"].mcpServers.memory
# Set before starting mcphost:
#   MEMORY_FILE_PATH  value not copied from the source
server "memory-2" {
  command = "npx"
  args    = ["-y", "@modelcontextprotocol/server-memory"]
  env = {
    MEMORY_FILE_PATH = env("MEMORY_FILE_PATH")
  }
}
