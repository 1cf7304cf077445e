// Package upstream is one configured server as the host reaches it. A
// Conn supervises the server: it connects with the right protocol era,
// fetches and caches the catalog, watches the session and reconnects with
// backoff. It keeps the server's other sessions too: a per-principal OAuth
// server's children, a per_client server's sessions for gateway clients,
// and a singleton server's placement and relay to the replica that holds
// it. Conn.Target is the one way to a principal's session; CallTool makes
// the upstream call with its progress, its log messages and a legacy
// server's elicitations attributed to it. Status, catalog and a stdio
// server's sandbox (Box) are here as well.
//
// It sits above the transports and below the generations and the
// pipeline; what it needs of the host (settings, the store, callbacks for
// status, log messages and elicitations) comes in Deps. It must never
// decide for a caller: what a caller may see or do is the pipeline's and
// the policies'; and it never starts a stdio server but through its Box.
package upstream
