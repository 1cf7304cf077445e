# remote.hcl: servers that mcphost connects to over HTTP.
#
# A server with `url` is a remote server. It cannot also have `command`, and
# the stdio-only arguments (args, env, cwd) are errors here.

# A Streamable HTTP server, the current MCP transport.
server "search" {
  # url is an absolute http or https URL.
  url = "https://search.example.com/mcp"

  # transport is "streamable_http" (the default for url) or "sse".
  transport = "streamable_http"

  # headers are sent with every HTTP request to this server. Values are
  # never logged. env("NAME", "default") falls back to the default when the
  # variable is unset, so this file validates on a machine without it.
  headers = {
    Authorization = "Bearer ${env("SEARCH_TOKEN", "")}"
    X-Team        = "analytics"
  }

  # "auto" probes for the versions the server supports before initializing.
  version_negotiation = "auto"
  discovery_timeout   = "10s"
  call_timeout        = "60s"
}

# An older server that still speaks the 2024-11-05 HTTP+SSE transport.
# That transport is always legacy: version_negotiation = "auto" is an error.
server "legacy_wiki" {
  url       = "http://127.0.0.1:3001/sse"
  transport = "sse"
}
