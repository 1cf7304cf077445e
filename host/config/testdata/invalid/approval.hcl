# approval_timeout: a duration within [1s, 24h].
approval_timeout = "48h" # ERROR: Invalid approval_timeout

server "a" {
  command = "a"
}
