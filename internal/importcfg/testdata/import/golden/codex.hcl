# Written by `mcphost import` from:
#   codex/config.toml (Codex)
# Values of env maps and secret-looking headers are not copied: they are
# read with env() when mcphost starts. Each server lists the variables
# to set. Review every command before you run it.

# From codex/config.toml (Codex): mcp_servers.docs
# Set before starting mcphost:
#   API_KEY   value not copied from the source
#   API_KEY2  passed through by Codex (env_vars)
server "docs" {
  command = "docs-server"
  args    = ["--port", "4000"]
  env = {
    API_KEY  = env("API_KEY")
    API_KEY2 = env("API_KEY2")
  }
  cwd          = "/Users/alice/code/my-server"
  call_timeout = "30s"
}

# From codex/config.toml (Codex): mcp_servers.figma
# Set before starting mcphost:
#   FIGMA_TEAM_ID      the value of the X-Figma-Team header
#   FIGMA_OAUTH_TOKEN  the bearer token (bearer_token_env_var)
server "figma" {
  url = "https://mcp.figma.com/mcp"
  headers = {
    X-Figma-Region = "us-east-1"
    X-Figma-Team   = env("FIGMA_TEAM_ID")
    Authorization  = "Bearer ${env("FIGMA_OAUTH_TOKEN")}"
  }
}

# From codex/config.toml (Codex): mcp_servers.playwright
server "playwright" {
  command = "npx"
  args    = ["@playwright/mcp@latest"]
  enabled = false
}

# From codex/config.toml (Codex): mcp_servers.sentry
server "sentry" {
  url          = "https://mcp.sentry.dev/mcp"
  call_timeout = "2500ms"
}
