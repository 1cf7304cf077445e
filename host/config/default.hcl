# The configuration mcphost uses when it is started without a file.
#
# listen and data_dir keep their defaults:
#   listen   = "127.0.0.1:7777"
#   data_dir = "$XDG_STATE_HOME/mcphost", else "~/.local/state/mcphost"

# The demo server built into this binary: a show_revenue_dashboard tool with
# an MCP App. executable() is the path of the running mcphost, so PATH does
# not matter.
server "revenue" {
  command = executable()
  args    = ["demo", "revenue"]
}

# An example policy: a person approves, once, in the WebShell every call of
# a tool that says it may destroy data. The demo's tool is read-only, so it
# never asks; servers you add inherit the rule. mcphost policy eval tests
# rules on an input file before you deploy them.
policy "approve-destructive" {
  phase   = "call"
  effect  = "ask"
  when    = "tool.annotations.destructiveHint && !tool.annotations.readOnlyHint"
  message = "This tool may change or delete data. Run it?"
}
