# minimal.hcl: the smallest useful mcphost configuration.
#
#   mcphost validate examples/hcl/minimal.hcl
#   mcphost serve -config examples/hcl/minimal.hcl
#
# It runs the demo server built into mcphost. Every top-level attribute is
# left at its default:
#
#   listen    = "127.0.0.1:7777"   host:port of the API and the WebShell
#   data_dir  = "~/.local/state/mcphost" (or $XDG_STATE_HOME/mcphost)
#   log_level = "info"             "debug" | "info" | "warn" | "error"

# A server block declares one MCP server. Its name is how tools are addressed
# (SERVER.TOOL), so it starts with a letter and holds only letters, digits,
# "_" and "-": no dots.
server "revenue" {
  # command makes this a stdio server: mcphost starts the program and speaks
  # MCP over its stdin and stdout. executable() is the path of the running
  # mcphost binary, so this works without mcphost on PATH.
  command = executable()

  # args are passed to the command as they are; there is no shell.
  args = ["demo", "revenue"]
}
