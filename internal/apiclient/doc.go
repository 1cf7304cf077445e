// Package apiclient is the one Go client of mcphost's JSON API
// (docs/api.md): the CLI's client commands, `mcphost auth` and `mcphost
// reload` (cmd/mcphost) and the load tool (cmd/mcphost-load) talk to a
// daemon through it.
//
// It owns the wire: the base URL and the routes under it, the bearer
// token, JSON bodies, the bound on quick requests, and the error shape. A
// [Client] is one principal at one daemon ([New]); [Client.WithToken]
// gives another principal on the same connections. Each route the commands
// use is a method ([Client.Servers], [Client.Call], [Client.ReadResource],
// …), and [Client.Do] sends any other request. An answer other than 2xx is
// an *[Error] carrying the API's status, code and message (and the policy
// rule of a refusal); a request with no answer wraps [ErrNoAnswer].
//
// The client sits outside the daemon, in front of its doors: a request it
// sends is authenticated and runs the daemon's pipeline like any other.
//
// It must never:
//   - import the host or anything under host/: it sees the daemon through
//     the wire only, so answers whose Go type is the host's are decoded into
//     the caller's value, and deps_test.go keeps it from importing any
//     mcphost package;
//   - put the token anywhere but the Authorization header: not in a URL,
//     an error or a log;
//   - retry a request (a tool call is not idempotent), or find a daemon:
//     the base URL is the caller's (the CLI reads data_dir/daemon.url);
//   - decide presentation: exit codes, terminal escaping and wording are
//     the command's; the strings in an *Error are the daemon's, unescaped.
package apiclient
