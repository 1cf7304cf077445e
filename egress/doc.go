// Package egress is the network door of a contained stdio server: an HTTP
// proxy that a sandboxed server reaches from inside its own network
// namespace, which lets a connection through only to the hosts and ports
// its `allow_hosts` grants, and says of every refusal which server asked,
// for which host and port, and why.
//
// A [Rule] is one entry of `allow_hosts` ("api.github.com:443",
// "*.example.com:443", "203.0.113.7:8443"); [ParseRule] is the one parser
// of them, used by the config loader for its diagnostics and by the proxy.
//
// # The proxy
//
// A server whose sandbox says `network = "proxy"` runs in a network
// namespace with only lo. A helper inside it listens on 127.0.0.1:3128 and
// hands the listener to mcphost, which serves a [Proxy] on it with
// [Proxy.Serve]; the server gets HTTP_PROXY, HTTPS_PROXY and ALL_PROXY
// pointing there. The proxy is the server's only way out, and there is one
// per server, so a denial names its server exactly.
//
// The proxy serves two kinds of request, one per connection:
//
//   - CONNECT host:port, for TLS and any TCP tunnel: answered "200
//     Connection Established", then spliced both ways, half-closes passed
//     on;
//   - plain HTTP in absolute form (GET http://host[:port]/path): forwarded
//     in origin form without hop-by-hop headers and the proxy's own
//     credentials, bodies streamed both ways, answered "Connection: close".
//
// Anything else is a 400. A request goes through when a [Rule] grants its
// host and port, and, for a name, when no address it resolves to is one of
// the machine's own or its networks' (loopback, unspecified, link-local
// with the cloud metadata address, private, shared, multicast, reserved)
// unless an address rule grants that very address. The name is resolved
// once and a checked address is dialled, never the name again, so a DNS
// answer cannot change between the check and the connection.
//
// A refusal by the policy is a 403 with "X-Proxy-Error:
// blocked-by-mcphost-sandbox" ([ErrorBlocked]) and a text that tells an
// agent not to retry around it and an operator how to grant it. It is
// logged at Warn as "sandbox denied" (server, kind=egress, host, port,
// reason), counted ([Proxy.Counts]), kept among the last 20
// ([Proxy.Denials]) for the server's card, and passed to
// [Proxy.OnDenied] for metrics. A granted host that does not resolve or
// answer is a 502 with [ErrorUnreachable], and a plain-HTTP answer that
// cannot be passed on a 502 with [ErrorUpstream]; neither is a denial.
//
// The client is the sandboxed server and is treated as hostile: the size
// of a request's header, the time to send it, the connections open at
// once and the idleness of a connection are bounded (fields of [Proxy]);
// a malformed request is a 400 and a close; a client that stalls or goes
// away is closed without an answer. Serve closes every connection when its
// listener closes and returns only when their goroutines have ended.
//
// The package must never let a connection through that no rule grants,
// dial a name it has checked (only the checked address), buffer a body
// whole, or leave a goroutine behind a closed listener. It imports nothing
// of mcphost's: the host wires a [Proxy] to a server's listener, its
// metrics and its card.
package egress
