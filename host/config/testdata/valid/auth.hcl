server "linear" {
  url = "https://mcp.linear.example/mcp"
  auth {}
}

server "github" {
  url = "https://api.github.example/mcp"
  auth {
    client_id     = "Iv1.0123"
    client_secret = env("HOME")
    client_issuer = "https://github.example/login/oauth"
    scopes        = ["repo", "read:org"]
    tokens        = "shared"
    admins        = ["ops"]
  }
}

server "machine" {
  url = "https://m2m.example/mcp"
  auth {
    type          = "client_credentials"
    client_id     = "svc"
    client_secret = env("HOME")
  }
}

server "cimd" {
  url = "https://cimd.example/mcp"
  auth {
    client_metadata_url = "https://mcphost.example/client.json"
  }
}
