# Written by `mcphost import` from:
#   claude-code/project/.mcp.json (Claude Code)
# Values of env maps and secret-looking headers are not copied: they are
# read with env() when mcphost starts. Each server lists the variables
# to set. Review every command before you run it.

# From claude-code/project/.mcp.json (Claude Code): mcpServers.playwright
server "playwright" {
  command = "npx"
  args    = ["@playwright/mcp@latest"]
}

# From claude-code/project/.mcp.json (Claude Code): mcpServers.api-server
# Set before starting mcphost:
#   API_BASE_URL  referenced as ${API_BASE_URL:-...} (optional: it has a default)
#   API_KEY       referenced as ${API_KEY}
server "api-server" {
  url       = "${env("API_BASE_URL", "https://api.example.com")}/mcp/sse"
  transport = "sse"
  headers = {
    Authorization = "Bearer ${env("API_KEY")}"
  }
}

# From claude-code/project/.mcp.json (Claude Code): mcpServers.notion
server "notion" {
  url = "https://mcp.notion.com/mcp"
}

# From claude-code/project/.mcp.json (Claude Code): mcpServers.my-tool
# Set before starting mcphost:
#   PROJECT_ROOT  referenced as ${PROJECT_ROOT}
#   DEBUG         referenced as ${DEBUG:-...} (optional: it has a default)
#   DATABASE_URL  value not copied from the source
server "my-tool" {
  command = "node"
  args    = ["./my-mcp-server.js", "--root", env("PROJECT_ROOT")]
  env = {
    DEBUG        = env("DEBUG", "false")
    DATABASE_URL = env("DATABASE_URL")
  }
}

# From claude-code/project/.mcp.json (Claude Code): mcpServers.stripe
# Set before starting mcphost:
#   STRIPE_AUTHORIZATION  the Authorization header's credential, after "Bearer"
server "stripe" {
  url = "https://mcp.stripe.com"
  headers = {
    Authorization  = "Bearer ${env("STRIPE_AUTHORIZATION")}"
    Stripe-Version = "2024-06-20"
  }
}
