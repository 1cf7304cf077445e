# Written by `mcphost import` from:
#   windsurf/mcp_config.json (Windsurf)
# Values of env maps and secret-looking headers are not copied: they are
# read with env() when mcphost starts. Each server lists the variables
# to set. Review every command before you run it.

# From windsurf/mcp_config.json (Windsurf): mcpServers.github
# Set before starting mcphost:
#   GITHUB_PERSONAL_ACCESS_TOKEN  value not copied from the source
server "github" {
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
