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
  app_resource_max_bytes = 99999999 # ERROR: App resource size too large
}

server "d" {
  command                = "d"
  app_resource_max_bytes = "16MiB" # fine: the most an App may be
}

server "e" {
  command                = "e"
  app_resource_max_bytes = "16385KiB" # ERROR: App resource size too large
}

server "f" {
  command                = "f"
  app_resource_max_bytes = "a lot" # ERROR: Invalid size
}
