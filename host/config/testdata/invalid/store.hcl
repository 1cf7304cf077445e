store {
  sync = "fsync" # ERROR: Invalid store sync
}

store { # ERROR: Duplicate store block
  sync = "full"
}

server "a" {
  command = "a"
}
