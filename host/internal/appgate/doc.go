// Package appgate decides what an MCP App may ask through the WebShell
// (apps.md §12): each kind of request (a tool call, a link, a message, a
// display mode, an App tool, a resource read, a download, context for the
// model) is refused unless its server's switch is on, and all but a tool
// call then go through the `app` phase of the policies with origin "app"
// (a tool call runs the `call` phase in the pipeline like any call). It
// keeps the per-App limits too: tool calls running at once, and a token
// bucket for messages and link requests; and it compacts the Apps' display
// records a store keeps past their age or size bounds (Compactor).
//
// It sits above pipeline (it runs the policy run of the app phase),
// generation, upstream and identity. It must never let a request through
// whose switch is off, whatever a policy says, and never talk to the App
// itself: the WebShell makes every request on the App's behalf.
package appgate
