# Written by `mcphost import` from:
#   misc/servers.json (VS Code)
#   misc/team-mcp.json (Claude Desktop)
# Values of env maps and secret-looking headers are not copied: they are
# read with env() when mcphost starts. Each server lists the variables
# to set. Review every command before you run it.

# From misc/servers.json (VS Code): servers.time
server "time" {
  command = "uvx"
  args    = ["mcp-server-time", "--local-timezone=Europe/Paris"]
}

# From misc/team-mcp.json (Claude Desktop): mcpServers.search
# Set before starting mcphost:
#   SEARCH_X_API_KEY  the value of the X-API-Key header
server "search" {
  url = "https://search.example.com/mcp"
  headers = {
    X-API-Key       = env("SEARCH_X_API_KEY")
    Accept-Language = "en"
  }
}
