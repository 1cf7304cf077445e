server "bad_url" {
  url = "ftp://files.example.com/mcp" # ERROR: Invalid URL
}

server "no_host" {
  url = "https:///mcp" # ERROR: Invalid URL
}

server "relative" {
  url = "/mcp" # ERROR: Invalid URL
}

server "bad_transport" {
  url       = "https://x.example.com/mcp"
  transport = "websocket" # ERROR: Invalid transport
}

server "stdio_url" {
  url       = "https://x.example.com/mcp"
  transport = "stdio" # ERROR: Invalid transport
}

server "auto_sse" {
  url                 = "https://x.example.com/sse"
  transport           = "sse"
  version_negotiation = "auto" # ERROR: Version negotiation not available
}

server "bad_negotiation" {
  url                 = "https://x.example.com/mcp"
  version_negotiation = "always" # ERROR: Invalid version negotiation
}

server "stdio_attrs_on_url" {
  url  = "https://x.example.com/mcp"
  args = ["x"]           # ERROR: Argument only for stdio servers
  env  = { A = "b" }     # ERROR: Argument only for stdio servers
  cwd  = "/tmp"          # ERROR: Argument only for stdio servers
}

server "remote_attrs_on_command" {
  command   = "x"
  transport = "sse"                  # ERROR: Argument only for remote servers
  headers   = { Authorization = "" } # ERROR: Argument only for remote servers
}
