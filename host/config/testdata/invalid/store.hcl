store {
  sync     = "fsync" # ERROR: Invalid store sync
  postgres = "" # ERROR: Empty store.postgres
}

store { # ERROR: Duplicate store block
  sync = "full"
}

server "a" {
  command = "a"
}
