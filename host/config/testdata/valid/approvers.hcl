server "deploy" {
  command = "deploy-mcp"
}

principal "agent" {
  token    = "agent-0123456789abcdef"
  webshell = false
}

principal "carol" {
  token  = "carol-0123456789abcdef"
  groups = ["security"]
}

# The agent's deploys wait for someone of the security group; the agent's
# own token cannot approve them.
policy "security-approves-deploys" {
  phase     = "call"
  effect    = "ask"
  when      = "tool.name == \"deploy\""
  message   = "A deploy needs the security group's approval."
  approvers = ["security"]
}

# Without approvers the caller approves, as before.
policy "confirm-deletes" {
  phase  = "call"
  effect = "ask"
  when   = "tool.annotations.destructiveHint"
}
