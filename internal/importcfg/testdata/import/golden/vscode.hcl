# Written by `mcphost import` from:
#   vscode/project/.vscode/mcp.json (VS Code)
# Values of env maps and secret-looking headers are not copied: they are
# read with env() when mcphost starts. Each server lists the variables
# to set. Review every command before you run it.

# From vscode/project/.vscode/mcp.json (VS Code): servers.perplexity
# Set before starting mcphost:
#   PERPLEXITY_API_KEY  was VS Code input "perplexity-key": Perplexity API Key (a password)
server "perplexity" {
  command = "npx"
  args    = ["-y", "server-perplexity-ask"]
  env = {
    PERPLEXITY_API_KEY = env("PERPLEXITY_API_KEY")
  }
}

# From vscode/project/.vscode/mcp.json (VS Code): servers.github
# Set before starting mcphost:
#   GITHUB_TOKEN  VS Code input "github_token": GitHub Personal Access Token (a password)
server "github" {
  url = "https://api.githubcopilot.com/mcp/"
  headers = {
    Authorization = "Bearer ${env("GITHUB_TOKEN")}"
  }
}

# From vscode/project/.vscode/mcp.json (VS Code): servers.legacy
server "legacy" {
  url       = "http://localhost:8931/sse"
  transport = "sse"
}

# From vscode/project/.vscode/mcp.json (VS Code): servers.fetch
# Set before starting mcphost:
#   FETCH_USER_AGENT  from envFile vscode/project/.env
#   FETCH_PROXY       from envFile vscode/project/.env
server "fetch" {
  command = "uvx"
  args    = ["mcp-server-fetch", "--config", "$TESTDATA/vscode/project/fetch.toml"]
  env = {
    FETCH_USER_AGENT = env("FETCH_USER_AGENT")
    FETCH_PROXY      = env("FETCH_PROXY")
  }
}

# From vscode/project/.vscode/mcp.json (VS Code): servers.myServer
server "myServer" {
  command = "npx"
  args    = ["-y", "@example/mcp-server"]
}
