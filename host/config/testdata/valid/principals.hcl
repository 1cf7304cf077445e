listen = "[::1]:0"

server "everything" {
  command = "npx"
  args    = ["-y", "@modelcontextprotocol/server-everything"]
}

principal "alice" {
  token  = env("MCPHOST_TEST_TOKEN")
  groups = ["analysts"]
}

principal "ci" {
  token  = "ci-0123456789abcdef"
  groups = []
}

principal "root@example.com" {
  token = env("UNSET_ROOT_TOKEN", "root-0123456789abcdef")
}
