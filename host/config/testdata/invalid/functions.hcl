# env(), file() and executable(), and calls that are not allowed.
data_dir = env("MCPHOST_UNSET_DIR") # ERROR: Environment variable not set

server "a" {
  command = executable()
  env = {
    WITH_DEFAULT = env("MCPHOST_UNSET", "fallback")
    FROM_ENV     = env("MCPHOST_TEST_TOKEN")
    NO_DEFAULT   = env("MCPHOST_UNSET") # ERROR: Environment variable not set
    INTERPOLATED = "x-${env("MCPHOST_ALSO_UNSET")}" # ERROR: Environment variable not set
  }
  cwd = file("missing.txt") # ERROR: File not found
}

server "b" {
  command = upper("b") # ERROR: Call to unknown function
  args    = [home] # ERROR: Variables not allowed
}

server "c" {
  command = env("A", "b", "c") # ERROR: Invalid function argument
  args    = [env()] # ERROR: Not enough function arguments
}

principal "p" {
  token = env("MCPHOST_TOKEN_UNSET") # ERROR: Environment variable not set
}
