// Package httpapi is mcphost's HTTP surface: the JSON API under /api/v1, the
// server-sent event stream, /metrics, /healthz, the embedded WebShell, and
// the OAuth sign-in routes /oauth/launch/ID and /oauth/callback (before
// authentication: the flow and the browser's binding cookie guard them; the
// Host check stays) with the sign-in API (oauth.go). It is the only package that imports gin.
//
// Handlers decode the request, call one [host.Host] method with a
// context.Context and plain values, and encode the answer; a *gin.Context
// never leaves this package and no domain logic lives here. The principal
// found by authentication travels in the request's context.
//
// It must never log a token, a header value or a query string (a launch
// URL's key and a callback's code and state are in query strings), never send a
// wildcard CORS header, and never serve the API to a request whose Host is
// not one of the daemon's own names (DNS rebinding) or whose Origin is
// foreign or "null". The http.Server that runs the handler belongs to host.
package httpapi
