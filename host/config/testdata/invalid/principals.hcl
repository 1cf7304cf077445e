principal "alice" {
  token = "alice-0123456789abcdef"
}

principal "alice" { # ERROR: Duplicate principal name
  token = "alice-other-0123456789"
}

principal "short" {
  token = "hunter2" # ERROR: Token too short
}

principal "empty" {
  token = "" # ERROR: Token too short
}

principal "copycat" {
  token = "alice-0123456789abcdef" # ERROR: Duplicate token
}

principal "missing" { # ERROR: Missing required argument
  groups = ["x"]
}

principal "" { # ERROR: Invalid principal name
  token = "nameless-0123456789"
}
