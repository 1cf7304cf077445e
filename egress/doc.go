// Package egress is the network door of a contained stdio server: an HTTP
// proxy that a sandboxed server reaches from inside its own network
// namespace, which lets a connection through only to the hosts and ports
// its `allow_hosts` grants, and says of every refusal which server asked,
// for which host and port, and why.
//
// A [Rule] is one entry of `allow_hosts` ("api.github.com:443",
// "*.example.com:443", "203.0.113.7:8443"); [ParseRule] is the one parser
// of them, used by the config loader for its diagnostics and by the proxy.
package egress
