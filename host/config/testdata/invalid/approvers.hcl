server "a" {
  command = "a"
}

principal "alice" {
  token  = "alice-0123456789abcdef"
  groups = ["security"]
}

principal "bob" {
  token = "bob-0123456789abcdefgh"
}

policy "deny-with-approvers" {
  phase     = "call"
  effect    = "deny"
  when      = "true"
  approvers = ["security"] # ERROR: Approvers without ask
}

policy "nobody-approves" {
  phase     = "call"
  effect    = "ask"
  when      = "true"
  approvers = [] # ERROR: Empty approvers
}

policy "typo" {
  phase  = "call"
  effect = "ask"
  when   = "true"
  approvers = [
    "bob",
    "securty", # ERROR: Unknown approver
  ]
}

policy "twice" {
  phase  = "call"
  effect = "ask"
  when   = "true"
  approvers = [
    "security",
    "security", # ERROR: Duplicate approver
  ]
}

policy "not-a-list" {
  phase     = "call"
  effect    = "ask"
  when      = "true"
  approvers = "security" # ERROR: Incorrect attribute value type
}
