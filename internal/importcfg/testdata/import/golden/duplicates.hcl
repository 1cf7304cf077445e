# Written by `mcphost import` from:
#   claude/claude_desktop_config.json (Claude Desktop)
#   windsurf/mcp_config.json (Windsurf)
#   dup/cursor/.cursor/mcp.json (Cursor)
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

# From windsurf/mcp_config.json (Windsurf): mcpServers.github
# Set before starting mcphost:
#   GITHUB_PERSONAL_ACCESS_TOKEN  value not copied from the source
server "github-2" {
  command = "docker"
  args    = ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"]
  env = {
    GITHUB_PERSONAL_ACCESS_TOKEN = env("GITHUB_PERSONAL_ACCESS_TOKEN")
  }
}

# From windsurf/mcp_config.json (Windsurf): mcpServers.zapier
server "zapier" {
  url       = "https://actions.zapier.com/mcp/sk-ak-7Qw3Er5Ty8Ui/sse"
  transport = "sse"
}

# From windsurf/mcp_config.json (Windsurf): mcpServers.talaria
# Set before starting mcphost:
#   TALARIA_MCP_TOKEN  referenced as ${env:TALARIA_MCP_TOKEN}
server "talaria" {
  url = "https://api.newtalaria.com/mcp"
  headers = {
    Authorization = "Bearer ${env("TALARIA_MCP_TOKEN")}"
  }
}

# From windsurf/mcp_config.json (Windsurf): mcpServers.ollama
# Set before starting mcphost:
#   OLLAMA_HOST  value not copied from the source
server "ollama" {
  command = "py"
  args    = ["-m", "mcp_ollama_python"]
  env = {
    OLLAMA_HOST = env("OLLAMA_HOST")
  }
  enabled = false
}

# From dup/cursor/.cursor/mcp.json (Cursor): mcpServers.github
# Set before starting mcphost:
#   GITHUB_TOKEN  referenced as ${env:GITHUB_TOKEN}
server "github-3" {
  command = "npx"
  args    = ["-y", "@modelcontextprotocol/server-github"]
  env = {
    GITHUB_PERSONAL_ACCESS_TOKEN = env("GITHUB_TOKEN")
  }
}

# From dup/cursor/.cursor/mcp.json (Cursor): mcpServers["Git Hub"]
server "Git_Hub" {
  command = "github-mcp-server"
  args    = ["stdio"]
}

# From dup/cursor/.cursor/mcp.json (Cursor): mcpServers["brave.search"]
server "brave_search-2" {
  url = "https://search.example.com/brave/mcp"
}
