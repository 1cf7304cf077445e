server "a" {
  command                = "a"
  apps                   = "sometimes" # ERROR: Invalid apps setting
  app_resource_max_bytes = 0 # WARNING: App resource size clamped
  app_resource_timeout   = "10ms" # WARNING: App resource timeout clamped
}

server "b" {
  command                = "b"
  app_resource_max_bytes = 1.5 # ERROR: Invalid number
  app_resource_timeout   = "soon" # ERROR: Invalid duration
}

server "c" {
  command                = "c"
  app_resource_max_bytes = 99999999 # WARNING: App resource size clamped
}
