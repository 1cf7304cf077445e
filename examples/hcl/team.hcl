# team.hcl: several people and a CI job sharing one mcphost.
#
# A principal is a bearer token with a name and groups. Every API call
# carries a token; mcphost maps it to its principal, and policies decide by
# name and group (see policies.hcl). Tokens are credentials: keep them out of
# this file with env() or file(), make them at least 16 characters (for
# example `openssl rand -hex 32`), and give every principal its own.
#
# The second argument of env() is a default, used when the variable is not
# set. The placeholders below only let this example validate on a fresh
# checkout (with a warning): `mcphost serve` refuses them, since anyone can
# read them. Set the variables, and in a real config drop the defaults, so
# that a missing variable is an error.

listen = "127.0.0.1:7777"

server "revenue" {
  command = executable()
  args    = ["demo", "revenue"]
}

principal "alice" {
  # token is required. Two principals with the same token are an error.
  token = env("ALICE_TOKEN", "placeholder-alice-token-replace-me")

  # groups are free-form names for policies to match on.
  groups = ["analysts", "admins"]
}

principal "bob" {
  token  = env("BOB_TOKEN", "placeholder-bob-token-replace-me")
  groups = ["analysts"]
}

# A principal without groups.
principal "ci" {
  token = env("CI_TOKEN", "placeholder-ci-token-replace-me")
}
