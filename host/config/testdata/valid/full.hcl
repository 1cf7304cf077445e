# Every feature of the file format, with values other than the defaults.
listen    = "0.0.0.0:8080"
data_dir  = "state"
log_level = "debug"

server "files" {
  command = "npx"
  args    = ["-y", "@modelcontextprotocol/server-filesystem", "/srv/data"]
  env = {
    NODE_ENV = "production"
    TOKEN    = env("MCPHOST_TEST_TOKEN")
  }
  cwd                 = "work"
  roots               = ["file:///srv/data"]
  version_negotiation = "auto"
  discovery_timeout   = "10s"
  call_timeout        = "1m30s"
  sandbox {
    inherit_env = ["NODE_OPTIONS", "LANG"]
    runtime     = "node"
    read        = ["grants/reference.txt"]
    write       = ["grants/inbox", "grants/./inbox"]
    allow_hosts = ["api.github.com:443", "*.example.com:443", "registry.npmjs.org:443"]
    limits {
      open_files = 1024
      memory     = "1GiB"
      pids       = 256
      cpu        = 3600
    }
  }
}

server "revenue" {
  command   = executable()
  args      = ["demo", "revenue"]
  transport = "stdio"
  enabled   = false
}

server "search" {
  url = "https://search.example.com/mcp"
  headers = {
    Authorization = "Bearer ${env("SEARCH_TOKEN", "no-token-set")}"
    X-Client      = "mcphost"
  }
  version_negotiation = "auto"
  discovery_timeout   = "250ms"
}

server "legacy" {
  url                 = "http://127.0.0.1:3001/sse"
  transport           = "sse"
  version_negotiation = "legacy"
}

# A WebAssembly server run inside mcphost: its sandbox block grants the
# module's preopened directories and the hosts it may reach.
server "echo" {
  wasm = "grants/echo.wasm"
  args = ["--verbose"]
  env  = { MODE = "test" }
  sandbox {
    mode        = "off"
    write       = ["grants/inbox"]
    allow_hosts = ["api.example.com:443"]
    limits {
      memory = 134217728
      cpu    = 60
    }
  }
}

principal "alice" {
  token  = env("MCPHOST_TEST_TOKEN")
  groups = ["analysts", "admins"]
}

principal "bob" {
  token    = file("secrets/bob.token")
  webshell = false
  rate_limit {
    calls_per_second = 0.5
    concurrent_calls = 2
  }
}

# Members of the group "admins" see every server with its process details,
# every principal's figures and /metrics.
admins = ["admins"]

# Commits are fsynced at checkpoints only.
store {
  sync = "normal"
}

watch_config = true
elicitation_timeout = "5m"
approval_timeout    = "90s"

# Every stdio server also gets these variables of mcphost's environment,
# starts with the layers the machine can enforce (warning of the others),
# has no network unless its own block grants hosts, and runs as uid 60000
# when mcphost runs as root.
sandbox {
  inherit_env    = ["LANG", "TZ"]
  mode           = "enforce"
  on_unsupported = "warn"
  network        = "none"
  sandbox_uid    = 60000
}
