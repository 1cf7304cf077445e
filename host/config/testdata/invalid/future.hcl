server "a" {
  command = "a"
}

policy "no-etc" { # ERROR: Policies are not supported yet
  phase  = "call"
  effect = "deny"
  when   = "tool.name.startsWith('read_')"
}

plugin "redact" { # ERROR: Plugins are not supported yet
  path = "plugins/redact.wasm"
}

policies { # ERROR: Policies are not supported yet
  default = "allow"
}
