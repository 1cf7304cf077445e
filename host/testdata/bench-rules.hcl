# Ten rules of the call and result phases for the benchmarks; none matches
# their calls, so every rule runs on every call.
policy "r1" {
  phase  = "list"
  effect = "deny"
  when   = "tool.name.startsWith('admin_') && !('admins' in principal.groups)"
}
policy "r2" {
  phase  = "call"
  effect = "deny"
  when   = "server == 'prod' && origin == 'app'"
}
policy "r3" {
  phase  = "call"
  effect = "deny"
  when   = "has(args.path) && args.path.startsWith('/etc')"
}
policy "r4" {
  phase  = "call"
  effect = "deny"
  when   = "!tool.annotations.readOnlyHint && principal.name == 'guest'"
}
policy "r5" {
  phase  = "call"
  effect = "deny"
  when   = "has(args.text) && size(args.text) > 100000"
}
policy "r6" {
  phase  = "call"
  effect = "deny"
  when   = "'blocked' in principal.groups"
}
policy "r7" {
  phase  = "call"
  effect = "deny"
  when   = "era == 'modern' && tool.name == 'drop_table'"
}
policy "r8" {
  phase  = "call"
  effect = "deny"
  when   = "has(args.url) && args.url.startsWith('http://')"
}
policy "r9" {
  phase  = "result"
  effect = "deny"
  when   = "result.text.contains('PRIVATE KEY')"
}
policy "r10" {
  phase  = "result"
  effect = "deny"
  when   = "result.isError && tool.name == 'never'"
}
