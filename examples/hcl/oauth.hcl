# oauth.hcl: remote servers that ask for OAuth 2.1 (most hosted MCP servers).
#
# A server with an auth block signs in through mcphost: the redirect comes
# back to the daemon's own listener (/oauth/callback), tokens are sealed in
# the database (AES-256-GCM; the key is $MCPHOST_SECRET_KEY or
# data_dir/secret.key), refreshed with the server's resource indicator, and
# never shown. Nothing opens a browser: sign in with `mcphost auth login
# SERVER` or the Sign in button on the server's card in the WebShell.

# The usual case: mcphost discovers the authorization server, registers
# itself (or uses a client ID metadata document the server accepts) and each
# principal signs in for itself.
server "linear" {
  url = "https://mcp.linear.example/mcp"
  auth {}
}

# A client registered with the authorization server beforehand, one sign-in
# shared by every principal and managed by the ops group.
server "github" {
  url = "https://api.github.example/mcp"
  auth {
    client_id     = "Iv1.0123456789abcdef"
    client_secret = env("GITHUB_MCP_CLIENT_SECRET", "")
    # The pre-registered client is shown to this authorization server only.
    client_issuer = "https://github.example/login/oauth"
    scopes        = ["repo", "read:org"]
    tokens        = "shared"
    admins        = ["ops"]
  }
}

# Machine to machine: the client credentials grant, no user involved.
server "billing" {
  url = "https://billing.example/mcp"
  auth {
    type          = "client_credentials"
    client_id     = "mcphost-billing"
    client_secret = env("BILLING_CLIENT_SECRET", "")
  }
}
