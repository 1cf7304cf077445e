log_level = "warn"
data_dir  = "~/mcphost-state"

server "docs" {
  url       = "https://docs.example.com/mcp"
  transport = "streamable_http"
  headers = {
    Authorization = "Bearer ${env("DOCS_TOKEN", "")}"
  }
  call_timeout = "30s"
}

server "old-sse" {
  url       = "https://old.example.com/sse"
  transport = "sse"
  headers   = {}
}

server "disabled_one" {
  url     = "https://disabled.example.com/mcp"
  enabled = false
}
