# Written by `mcphost import` from:
#   cursor/project/.cursor/mcp.json (Cursor)
# Values of env maps and secret-looking headers are not copied: they are
# read with env() when mcphost starts. Each server lists the variables
# to set. Review every command before you run it.

# From cursor/project/.cursor/mcp.json (Cursor): mcpServers.linear
server "linear" {
  url       = "https://mcp.linear.app/sse"
  transport = "sse"
}

# From cursor/project/.cursor/mcp.json (Cursor): mcpServers.userjot
# Set before starting mcphost:
#   USERJOT_API_TOKEN  referenced as ${env:USERJOT_API_TOKEN}
server "userjot" {
  url = "https://api.userjot.com/v1/mcp"
  headers = {
    Authorization = "Bearer ${env("USERJOT_API_TOKEN")}"
  }
}

# From cursor/project/.cursor/mcp.json (Cursor): mcpServers.docs
# Set before starting mcphost:
#   DOCS_API_KEY  referenced as ${env:DOCS_API_KEY}
#   DOCS_REGION   value not copied from the source
#   DOCS_TOKEN    from envFile cursor/project/.env
#   LOG_LEVEL     from envFile cursor/project/.env
server "docs" {
  command = "node"
  args    = ["$TESTDATA/cursor/project/tools/docs-server.js", "--cache", "${env("HOME")}/.cache/docs"]
  env = {
    API_KEY     = env("DOCS_API_KEY")
    DOCS_REGION = env("DOCS_REGION")
    DOCS_TOKEN  = env("DOCS_TOKEN")
    LOG_LEVEL   = env("LOG_LEVEL")
  }
}

# From cursor/project/.cursor/mcp.json (Cursor): mcpServers.figma
server "figma" {
  url = "http://127.0.0.1:3845/mcp"
}
