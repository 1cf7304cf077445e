server "a" {
  command           = "a"
  discovery_timeout = "10" # ERROR: Invalid duration
  call_timeout      = "ten minutes" # ERROR: Invalid duration
}

server "b" {
  command           = "b"
  discovery_timeout = "10ms" # WARNING: Discovery timeout clamped
  call_timeout      = "0s" # ERROR: Invalid call timeout
}

server "c" {
  command           = "c"
  discovery_timeout = "1h" # WARNING: Discovery timeout clamped
  call_timeout      = "-5s" # ERROR: Invalid call timeout
}

server "d" {
  command           = "d"
  discovery_timeout = "100ms"
  call_timeout      = "1ns"
}

server "e" {
  command           = "e"
  discovery_timeout = "300s"
}
