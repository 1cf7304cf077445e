server "a" {
  command             = "a"
  version_negotiation = "auto"
  stdio_probe         = "twice" # ERROR: Invalid stdio probe
}

server "b" {
  url         = "http://127.0.0.1:9/mcp"
  stdio_probe = "in_place" # ERROR: Argument only for stdio servers
}

server "c" {
  url                = "http://127.0.0.1:9/mcp"
  http_probe_timeout = "retry" # ERROR: Invalid HTTP probe timeout
}

server "d" {
  command            = "d"
  http_probe_timeout = "error" # ERROR: Argument only for Streamable HTTP servers
}

server "e" {
  url                = "http://127.0.0.1:9/sse"
  transport          = "sse"
  http_probe_timeout = "error" # ERROR: Argument only for Streamable HTTP servers
}
