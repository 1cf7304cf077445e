sandbox {
  inherit_env = ["LANG", "MCPHOST_SECRET_KEY"] # ERROR: Reserved environment variable
}

sandbox { # ERROR: Duplicate sandbox block
  inherit_env = ["TZ"]
}

server "notes" {
  command = "notes-mcp"
  env = {
    NOTES_DIR          = "/srv/notes"
    MCPHOST_CLUSTER_SECRET = "x" # ERROR: Reserved environment variable
    "MCPHOST_TOKEN"    = env("MCPHOST_TEST_TOKEN") # ERROR: Reserved environment variable
    "A=B"              = "c" # ERROR: Invalid environment variable name
  }
  sandbox {
    inherit_env = [
      "AWS_*", # ERROR: Invalid environment variable name
      "", # ERROR: Invalid environment variable name
      "MCPHOST_DATA_DIR", # ERROR: Reserved environment variable
      "TZ",
    ]
    filesystem = "strict" # ERROR: Unsupported argument
  }
  sandbox { # ERROR: Duplicate sandbox block
  }
}

server "remote" {
  url = "https://mcp.example.com/mcp"
  sandbox { # ERROR: Block only for stdio servers
    inherit_env = ["TZ"]
  }
}
