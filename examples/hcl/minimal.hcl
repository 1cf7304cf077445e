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

  # apps decides which MCP Apps (interactive HTML a tool links with a ui://
  # resource) are kept for display: "auto" (the default: servers that
  # advertise the io.modelcontextprotocol/ui extension, or that serve the
  # resource with the exact App MIME type), "advertised" (only the former)
  # or "off". The model-visible tool result never changes either way.
  apps = "auto"

  # The App's HTML is read with its own deadline and size cap; a failure
  # leaves the ordinary text result with a warning.
  app_resource_max_bytes = 1048576 # or "4MiB"; at most "16MiB"
  app_resource_timeout   = "10s"   # clamped to 100ms .. 120s

  # What this server's Apps may ask the WebShell for. Each is false (denied,
  # "denied by host policy") unless set here: calling this server's own tools
  # (not those whose _meta.ui.visibility leaves out "app"), opening an
  # http(s) link after the user confirms it, and adding a message to the
  # transcript, shown as the App's and never as the user's.
  app_tool_calls = true
  app_open_links = false
  app_messages   = false
  # Leaving the inline frame (fullscreen overlay, picture-in-picture) and
  # offering tools of the App's own to the user in the WebShell.
  app_display_modes = false
  app_tools         = false
  # Reading this server's resources, and offering files to save (each after
  # the user confirms, under a sanitised name, at most 10 MiB).
  app_resources = false
  app_downloads = false
  # Context for the model (ui/update-model-context), kept with the entry.
  app_model_context = false
}
