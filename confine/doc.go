// Package confine runs a stdio MCP server with least privilege: it turns
// what the operator granted a server (paths to read and write, a network
// mode, limits) into an exec.Cmd that starts the server contained, and says
// which layers of containment are in force.
//
// On Linux the command is mcphost itself, re-executed as a small helper
// (`mcphost __sandbox-exec`, dispatched by [MaybeHelper] as the first thing
// main does). The parent builds the Landlock ruleset and hands it over as
// a file descriptor; the parent's SysProcAttr puts the helper in its own
// network (and, where needed, user and mount) namespace. The helper then,
// in this order: brings up loopback and hands a listener back for the
// egress proxy, mounts what the server needs, sets rlimits, drops to the
// sandbox uid when mcphost runs as root, sets no_new_privs, applies the
// Landlock ruleset, loads a seccomp filter that refuses unix sockets and
// io_uring, and execs the server. A step that fails ends the helper with
// exit status 125 and one "sandbox: " line on stderr; nothing runs
// half-contained.
//
// Layers the machine cannot enforce are found by [Detect] before a start:
// [Prepare] then refuses (the default) or drops them and says which. Other
// systems get the environment allowlist only, reported as such.
//
// The package is a leaf: it knows nothing of the config or the host, which
// build a [Spec] and serve the egress proxy on the listener it hands back.
package confine
