server "stdio_auth" {
  command = "mcphost"
  auth { # ERROR: Auth on a stdio server
  }
}

server "two_auth" {
  url = "https://x.example.com/mcp"
  auth {}
  auth {} # ERROR: Duplicate auth block
}

server "bad_type" {
  url = "https://x.example.com/mcp"
  auth {
    type = "password" # ERROR: Invalid auth type
  }
}

server "bad_tokens" {
  url = "https://x.example.com/mcp"
  auth {
    tokens = "everyone" # ERROR: Invalid tokens
  }
}

server "secret_only" {
  url = "https://x.example.com/mcp"
  auth {
    client_secret = "s3cret" # ERROR: Client secret without client_id
  }
}

server "both_clients" {
  url = "https://x.example.com/mcp"
  auth {
    client_id           = "abc"
    client_metadata_url = "https://example.com/client.json" # ERROR: Conflicting client registrations
  }
}

server "bad_cimd" {
  url = "https://x.example.com/mcp"
  auth {
    client_metadata_url = "http://example.com/client.json" # ERROR: Invalid client metadata URL
  }
}

server "bad_issuer" {
  url = "https://x.example.com/mcp"
  auth {
    client_id     = "abc"
    client_issuer = "not a url" # ERROR: Invalid client issuer
  }
}

server "cc_missing" {
  url = "https://x.example.com/mcp"
  auth { # ERROR: Missing client credentials
    type      = "client_credentials"
    client_id = "machine"
  }
}

server "header_and_auth" {
  url     = "https://x.example.com/mcp"
  headers = { Authorization = "Bearer x" }
  auth { # ERROR: Conflicting authorization
  }
}

server "empty_id" {
  url = "https://x.example.com/mcp"
  auth {
    client_id = "" # ERROR: Empty client_id
  }
}
