# Roots: absolute file URIs only, each listed once.
server "roots_ok" {
  command = "x"
  roots   = ["file:///srv/data", "file://localhost/home/me"]
}

server "roots_bad" {
  command = "x"
  roots = [
    "https://example.com/repo", # ERROR: Invalid root
    "file:relative/path",       # ERROR: Invalid root
    "file://server/share",      # ERROR: Invalid root
    "file:///srv/a?x=1",        # ERROR: Invalid root
    "/srv/plain/path",          # ERROR: Invalid root
    "file:///srv/data",
    "file:///srv/data",         # ERROR: Duplicate root
  ]
}

server "roots_type" {
  command = "x"
  roots   = "file:///srv/data" # ERROR: Incorrect attribute value type
}
