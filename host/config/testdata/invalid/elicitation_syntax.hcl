elicitation_timeout = "soon" # ERROR: Invalid duration

server "a" {
  command = "a"
}
