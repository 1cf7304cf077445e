# stdio.hcl: servers that mcphost runs as local processes.
#
# A server with `command` is a stdio server. mcphost starts it, talks MCP
# over its stdin and stdout, and stops it on shutdown. `mcphost validate`
# checks the file without starting anything, so the programs below need not
# be installed to validate it.

# listen is the host:port of the HTTP API and the WebShell. Keep it on
# loopback unless a proxy in front of mcphost handles TLS. Port 0 picks a
# free port.
listen = "127.0.0.1:7777"

# data_dir holds the database (sessions, transcript, era cache). "~/"
# expands to the home directory; a relative path is relative to this file's
# directory.
data_dir = "~/.local/state/mcphost"

# store holds the settings of that database. sync decides when a commit
# reaches the disk:
#   "full" (default)  every commit is fsynced before the call is answered:
#                     an acknowledged entry survives kill -9 and a power loss
#   "normal"          fsync only at checkpoints: faster appends; every
#                     acknowledged entry still survives kill -9 of mcphost,
#                     but a power loss or an OS crash can lose the last ones
# It is read at start-up; a reload does not change it.
store {
  sync = "full"
}

# log_level is one of "debug", "info" (the default), "warn" or "error".
log_level = "info"

# watch_config = true makes `mcphost serve -config FILE` reload FILE when it
# changes, exactly as SIGHUP and `mcphost reload` do: the file is checked
# every second and reloaded once it has been still for half a second. A
# file with errors is reported once and the running config stays in force.
# Default false.
watch_config = false

# sandbox says what every stdio server gets of the machine; a server's own
# sandbox block overrides it setting by setting. Its environment: a server
# never gets mcphost's whole environment, only HOME, LOGNAME, PATH, SHELL,
# TERM and USER (those that are set), the names in inherit_env here and in
# its own sandbox block, and its env. Names starting with MCPHOST_ are never
# passed; listing one is an error. By default (mode = "enforce") a server
# has no network (network = "none") and runs only with every layer its
# block asks for (on_unsupported = "refuse").
sandbox {
  inherit_env = ["LANG", "TZ"]
}

# The reference filesystem server, run with npx.
server "files" {
  # command is a program name looked up in PATH, or a path.
  command = "npx"

  # args are passed as they are; there is no shell, so no quoting or globs.
  args = ["-y", "@modelcontextprotocol/server-filesystem", "/srv/shared"]

  # cwd is the working directory of the process. A relative path is relative
  # to this file's directory. Default: the directory mcphost runs in.
  cwd = "."

  # env is this process's own, on top of the variables it inherits.
  env = {
    NODE_ENV = "production"
  }

  # This server also gets NODE_OPTIONS and two npm settings from mcphost's
  # environment, besides LANG and TZ from the top-level block. Names only,
  # no patterns: every variable a server gets is written down. runtime =
  # "node" lets npx reach registry.npmjs.org:443 (and nothing else) through
  # mcphost's egress proxy.
  sandbox {
    inherit_env = ["NODE_OPTIONS", "npm_config_registry", "npm_config_cache"]
    runtime     = "node"
  }

  # roots are the directories the server may work in, as absolute file://
  # URIs, answered to its roots/list (the filesystem server uses them in
  # place of, or besides, its command-line directories). None by default,
  # and then mcphost does not advertise roots. A reload that changes only
  # the roots keeps the process and sends roots/list_changed.
  roots = ["file:///srv/shared"]

  # call_timeout bounds one tools/call, as a duration string ("10s", "1m30s",
  # "250ms"). It must be greater than zero. Default "10m".
  call_timeout = "2m"

  # A server that fails is restarted, the waits doubling from 500ms up to
  # restart_backoff_max (default "5m"); after max_restarts failed restarts
  # in a row it stays failed (default 0: keep trying).
  restart_backoff_max = "1m"
  max_restarts        = 20
}

# A Python server run with uv, with a secret from mcphost's environment.
server "github" {
  command = "uvx"
  args    = ["mcp-server-github"]

  # env("NAME") reads a variable of the mcphost process; loading fails with
  # "Environment variable not set" when it is missing. env("NAME", "default")
  # uses the default instead.
  env = {
    GITHUB_TOKEN = env("GITHUB_TOKEN", "")
    LOG_LEVEL    = env("GITHUB_MCP_LOG_LEVEL", "warning")
  }

  # version_negotiation picks how mcphost agrees on a protocol version:
  #   "legacy" (default)  initialize at the current version, no probe
  #   "auto"              probe with server/discover first, then fall back
  version_negotiation = "auto"

  # discovery_timeout is the budget for that probe. Values outside
  # [100ms, 300s] are clamped, with a warning. Default "30s".
  discovery_timeout = "5s"
}

# A server kept to what it needs: it may read /usr/share, write /var/tmp and
# reach one API. Paths must exist when the file is loaded; "~/" is the home
# directory and a relative path is relative to this file. No grant may
# reach mcphost's own files (data_dir, this file, files read with file()).
# allow_hosts makes the network "proxy": only those hosts, through
# mcphost's egress proxy. limits bound its process (none by default).
server "reference" {
  command = "reference-mcp"
  sandbox {
    read        = ["/usr/share"]
    write       = ["/var/tmp"]
    allow_hosts = ["api.github.com:443"]
    limits {
      open_files = 256
      memory     = "512MiB"
    }
  }
}

# A server kept in the file but not started: enabled defaults to true.
server "scratch" {
  command = "./bin/scratch-server"
  args    = ["--stdio"]
  enabled = false
}
