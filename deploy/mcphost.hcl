# The configuration every replica of the cluster reads, unchanged: the same
# file is mounted in every container (Compose), every pod (the Kubernetes
# ConfigMap), and is what deploy/local-cluster.sh starts by hand. What
# differs between replicas comes from flags and the environment
# (-replica-id, MCPHOST_ADVERTISE_URL), never from this file.

# Every replica listens on all interfaces inside its container; the load
# balancer and the other replicas reach it there. MCPHOST_LISTEN overrides it
# (local-cluster.sh runs two replicas on one machine).
listen   = env("MCPHOST_LISTEN", "0.0.0.0:7777")
data_dir = env("MCPHOST_DATA_DIR", "/var/lib/mcphost")

# The one shared database: transcripts, sessions, audit log, era cache,
# OAuth credentials and the directory of replicas.
store {
  postgres = env("DATABASE_URL")
}

# The names and origins the WebShell and the API are reached at through the
# load balancer (its Host header and the browser's Origin).
public_urls = [env("MCPHOST_PUBLIC_URL", "http://localhost:8080")]

# Behind a host name that is not a loopback one, MCP Apps need a second host
# name for their sandbox, reaching the same replicas (see docs/replicas.md,
# "MCP Apps behind a balancer"); empty, as in the local setup, for none.
apps_sandbox_url = env("MCPHOST_APPS_SANDBOX_URL", "")

gateway {
  enabled = true
}

# The demo server, built into the binary. A stdio server runs once per
# replica (pipes cannot be shared); stateless tools do not mind.
server "revenue" {
  command = executable()
  args    = ["demo", "revenue"]
}

# A stateful demo server: its notes live in its process's memory, so two
# processes would keep two lists. placement = "singleton" runs it on one
# replica, the holder of its lock in PostgreSQL; the other replicas pass
# its calls there. When that replica stops or dies, another takes the lock
# within seconds and starts a fresh process (what the old one kept in
# memory is gone).
server "notes" {
  command   = executable()
  args      = ["demo", "notes"]
  placement = "singleton"
}

# Principals in these groups (or with these names) are admins: they see
# every server with its details, and /metrics.
admins = ["admins"]

principal "alice" {
  token  = env("ALICE_TOKEN")
  groups = ["admins"]
}
