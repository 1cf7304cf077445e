# Written by `mcphost import` from:
#   misc/team-mcp.json (Cursor)
# Values of env maps and secret-looking headers are not copied: they are
# read with env() when mcphost starts. Each server lists the variables
# to set. Review every command before you run it.

# From misc/team-mcp.json (Cursor): mcpServers.search
# Set before starting mcphost:
#   SEARCH_X_API_KEY  the value of the X-API-Key header
server "search" {
  url = "https://search.example.com/mcp"
  headers = {
    X-API-Key       = env("SEARCH_X_API_KEY")
    Accept-Language = "en"
  }
}
