// Package benchrules holds the ten policy rules that the host's benchmarks
// and the load tool (cmd/mcphost-load) evaluate on every call: rules of the
// list, call and result phases, none of which matches their calls (an echo
// by a principal outside the "blocked" group), so each rule runs each time;
// r6 denies the blocked group, which the load tool checks. CallHCL is the
// same ten in the call phase, for the gateway bake-off's "ten call rules".
package benchrules

import "strings"

// HCL is the rules as policy blocks.
const HCL = `
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
  phase   = "call"
  effect  = "deny"
  when    = "'blocked' in principal.groups"
  message = "the blocked group may not call tools"
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
`

// CallHCL is HCL with every rule in the call phase: the list rule as it
// is, the two result rules over the arguments instead of the result.
var CallHCL = strings.NewReplacer(
	`phase  = "list"`, `phase  = "call"`,
	`phase  = "result"
  effect = "deny"
  when   = "result.text.contains('PRIVATE KEY')"`, `phase  = "call"
  effect = "deny"
  when   = "has(args.text) && args.text.contains('PRIVATE KEY')"`,
	`phase  = "result"
  effect = "deny"
  when   = "result.isError && tool.name == 'never'"`, `phase  = "call"
  effect = "deny"
  when   = "tool.name == 'never' && principal.name == 'nobody'"`,
).Replace(HCL)
