# Several problems in one file are all reported at once.
listen = "127.0.0.1:7777"

server "search.v2" { # ERROR: Invalid server name
  url                 = "https://search.example.com/mcp"
  headers             = { Authorization = "Bearer ${env("SEARCH_TOKEN")}" } # ERROR: Environment variable not set
  discovery_timeout   = "5m30s" # WARNING: Discovery timeout clamped
  call_timeout        = "soon"  # ERROR: Invalid duration
}

server "files" {
  command = "npx"
  url     = "https://files.example.com/mcp" # ERROR: Conflicting transports
}

server "files" { # ERROR: Duplicate server name
  command = "npx"
  timeout = "10s" # ERROR: Unsupported argument
}

principal "alice" {
  token = "short" # ERROR: Token too short
}

plugin "redact" { # ERROR: Missing required argument
  path = "redact.wasm"
}
