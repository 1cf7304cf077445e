server "a" {
  command = "a"
  args    = ["x",
} # ERROR: Invalid expression
