server "a" {
  command = "a"
}

plugin "nopath" { # ERROR: Missing required argument
  stages = ["result"]
}

plugin "nostages" { # ERROR: Missing required argument
  path = "redact.wasm"
}

plugin "stages" {
  path   = "redact.wasm"
  stages = ["result", "later"] # ERROR: Invalid plugin stage
}

plugin "dupstage" {
  path   = "redact.wasm"
  stages = ["result", "result"] # ERROR: Duplicate plugin stage
}

plugin "emptystages" {
  path   = "redact.wasm"
  stages = [] # ERROR: No plugin stage
}

plugin "limits" {
  path         = "redact.wasm"
  stages       = ["result"]
  timeout      = "0s" # ERROR: Invalid plugin timeout
  memory_limit = "64 parsecs" # ERROR: Invalid memory limit
  pool_size    = 0 # ERROR: Invalid pool size
  on_error     = "retry" # ERROR: Invalid on_error
}

plugin "more" {
  path         = "redact.wasm"
  stages       = ["display"]
  servers      = ["[a-"] # ERROR: Invalid pattern
  tools        = [] # ERROR: Empty pattern list
  memory_limit = "512KiB" # ERROR: Invalid memory limit
  config       = "pattern" # ERROR: Invalid plugin config
  timeout      = "2m" # ERROR: Invalid plugin timeout
}

plugin "more" { # ERROR: Duplicate plugin name
  path   = "redact.wasm"
  stages = ["result"]
}
