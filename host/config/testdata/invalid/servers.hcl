# Server names, transports and duplicates.
server "one" {
  command = "one"
}

server "one" { # ERROR: Duplicate server name
  command = "another"
}

server "both" {
  command = "x"
  url     = "https://x.example.com/mcp" # ERROR: Conflicting transports
}

server "both_reversed" {
  url     = "https://x.example.com/mcp"
  command = "x" # ERROR: Conflicting transports
}

server "neither" { # ERROR: Missing transport
  args = ["x"]
}

server "tools.search" { # ERROR: Invalid server name
  command = "x"
}

server "9lives" { # ERROR: Invalid server name
  command = "x"
}

server "empty_command" {
  command = "" # ERROR: Empty command
}

server "null_is_unset" { # ERROR: Missing transport
  command = null
}
