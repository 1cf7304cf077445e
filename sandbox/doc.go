// Package sandbox will own the MCP App sandbox proxy: the static
// /mcp-app-sandbox page and its http.Handler, the Content-Security-Policy built
// only from validated sources, and the origin rules (../shared/docs/apps.md).
//
// It holds no code yet. It must never serve session data or credentials, never
// import gin (only host/httpapi does), the host package or another leaf.
package sandbox
