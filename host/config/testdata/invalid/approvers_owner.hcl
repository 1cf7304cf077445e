server "a" {
  command = "a"
}

# No principals: the owner makes every call and answers its asks.
policy "ask-security" {
  phase     = "call"
  effect    = "ask"
  when      = "true"
  approvers = ["security"] # ERROR: Unknown approver
}
