# Unknown attributes and blocks, and values of the wrong type.
listen  = "127.0.0.1:7777"
colour  = "blue" # ERROR: Unsupported argument
logging {        # ERROR: Unsupported block type
  level = "debug"
}

server "a" {
  command = "a"
  argv    = ["x"]  # ERROR: Unsupported argument
  args    = "x"    # ERROR: Incorrect attribute value type
  env     = ["x"]  # ERROR: Incorrect attribute value type
  enabled = "maybe" # ERROR: Incorrect attribute value type
  call_timeout = 10 # ERROR: Invalid duration
  nested {}        # ERROR: Unsupported block type
}

server "b" {
  url     = ["https://b.example.com/mcp"] # ERROR: Incorrect attribute value type
  headers = { X-One = ["a"] }            # ERROR: Incorrect attribute value type
}

server "c" {
  command = "c"
  args    = ["ok", null] # ERROR: Invalid null value
}

principal "p" {
  token  = "p-0123456789abcdef"
  groups = "analysts" # ERROR: Incorrect attribute value type
}
