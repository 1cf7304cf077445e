# elicitation_timeout: a duration within [1s, 1h].
elicitation_timeout = "5h" # ERROR: Invalid elicitation_timeout

server "a" {
  command = "a"
}
