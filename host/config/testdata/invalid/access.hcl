admins = ["alice", "nobody"] # WARNING: Unknown admin

rate_limit {
  calls_per_second = -1 # ERROR: Invalid calls_per_second
  concurrent_calls = 1.5 # ERROR: Invalid number
}

principal "alice" {
  token    = "alice-0123456789abcdef"
  webshell = "no" # ERROR: Incorrect attribute value type
  rate_limit {
    burst = 0 # ERROR: Invalid burst
  }
  rate_limit { # ERROR: Duplicate rate_limit block
    concurrent_calls = 3
  }
}

principal "bob" {
  token = "bob-0123456789abcdef0"
  rate_limit {
    calls_per_second = 0
    burst            = 5 # WARNING: burst without a rate
    concurrent_calls = -2 # ERROR: Invalid concurrent_calls
  }
}
