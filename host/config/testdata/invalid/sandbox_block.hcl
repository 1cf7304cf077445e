# The whole sandbox block: values, placement and grants.
sandbox {
  mode           = "strict"   # ERROR: Invalid sandbox mode
  on_unsupported = "ignore"   # ERROR: Invalid on_unsupported
  network        = "lan"      # ERROR: Invalid network
  sandbox_uid    = 0          # ERROR: Invalid sandbox_uid
  read           = ["/srv"]   # ERROR: Argument only in a server's sandbox block
  runtime        = "node"     # ERROR: Argument only in a server's sandbox block
  limits {                    # ERROR: Block only in a server's sandbox block
    pids = 10
  }
}

server "notes" {
  command = "notes-mcp"
  sandbox {
    sandbox_uid = 1000                            # ERROR: Argument only in the top-level sandbox block
    runtime     = "ruby"                          # ERROR: Invalid runtime
    read        = ["/nonexistent/mcphost-test/x"] # ERROR: Path not found
    write       = ["/"]                           # ERROR: Grant reaches a protected path
    allow_hosts = [
      "api.github.com:443",
      "api.github.com",                           # ERROR: Invalid allow_hosts entry
    ]
    limits {
      open_files = 0       # ERROR: Invalid open_files limit
      memory     = "16MiB" # ERROR: Invalid memory limit
      pids       = 0.5     # ERROR: Invalid pids limit
      cpu        = 0       # ERROR: Invalid cpu limit
    }
    limits { # ERROR: Duplicate limits block
    }
  }
}

server "offline" {
  command = "x"
  sandbox {
    network     = "none" # ERROR: Contradictory network
    allow_hosts = ["api.github.com:443"]
  }
}

server "module" {
  command = "x"
  wasm    = "server.wasm" # ERROR: Conflicting transports
}
