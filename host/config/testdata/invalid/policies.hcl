server "a" {
  command = "a"
}

policies {
  default = "maybe" # ERROR: Invalid policy default
}

policies { # ERROR: Duplicate policies block
  default = "deny"
}

policy "no-phase" { # ERROR: Missing required argument
  effect = "deny"
  when   = "true"
}

policy "bad-phase" {
  phase  = "later" # ERROR: Invalid policy phase
  effect = "deny"
  when   = "true"
}

policy "bad-effect" {
  phase  = "call"
  effect = "block" # ERROR: Invalid policy effect
  when   = "true"
}

policy "ask-list" {
  phase  = "list"
  effect = "ask" # ERROR: Effect ask needs the call phase
  when   = "true"
}

policy "empty" {
  phase  = "call"
  effect = "deny"
  when   = "  " # ERROR: Empty policy expression
}

policy "no-etc" {
  phase  = "call"
  effect = "deny"
  when   = "true"
}

policy "no-etc" { # ERROR: Duplicate policy name
  phase  = "call"
  effect = "deny"
  when   = "true"
}

policy "9lives" { # ERROR: Invalid policy name
  phase  = "call"
  effect = "deny"
  when   = "true"
}

policy "ops-wrong-phase" {
  phase  = "list"
  ops    = ["resources/read"] # ERROR: Invalid policy operation
  effect = "deny"
  when   = "true"
}

policy "ops-unknown" {
  phase  = "call"
  ops    = ["resources/write"] # ERROR: Invalid policy operation
  effect = "deny"
  when   = "true"
}

policy "ops-empty" {
  phase  = "call"
  ops    = [] # ERROR: Empty policy operations
  effect = "deny"
  when   = "true"
}

policy "ops-twice" {
  phase  = "call"
  ops    = ["prompts/get", "prompts/get"] # ERROR: Duplicate policy operation
  effect = "deny"
  when   = "true"
}
