server "a" {
  command = "a"
}

policy "syntax" {
  phase  = "call"
  effect = "deny"
  when   = "tool.name == 'x' &&" # ERROR: Syntax error in policy
}

policy "unknown-variable" {
  phase  = "call"
  effect = "deny"
  when   = "user.name == 'x'" # ERROR: Undeclared variable in policy
}

policy "args-in-list" {
  phase  = "list"
  effect = "deny"
  when   = "has(args.path)" # ERROR: Undeclared variable in policy
}

policy "not-boolean" {
  phase  = "call"
  effect = "deny"
  when   = "args.enabled" # ERROR: Policy condition is not boolean
}

policy "misspelt-field" {
  phase  = "call"
  effect = "deny"
  when   = "tool.nmae == 'x'" # ERROR: Unknown field in policy
}
