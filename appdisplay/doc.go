// Package appdisplay holds the types of an MCP App's display record that
// more than one leaf works on: the CSP sources an App declared, which apps
// resolves and validates, display plugins may narrow, the app phase of the
// policies reads and the sandbox turns into the proxy page's
// Content-Security-Policy. It is types only, imports nothing of mcphost's,
// and every leaf may import it (architecture.md: a tiny shared types
// package, for exactly this). The leaves name it under their own names
// (apps.CSP, plugins.CSP, policies.CSP, sandbox.CSP are aliases), so the
// host passes one value through every stage without converting it.
package appdisplay
