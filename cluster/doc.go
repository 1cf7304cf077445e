// Package cluster owns what makes one mcphost daemon a replica among others
// behind a load balancer (research/gateway-and-scale.md §3.1, §3.3): its
// replica id, its entry in the shared directory of replicas (a heartbeat,
// the draining mark, leaving on shutdown), the lookup of another replica's
// internal address, the shared secret of the hops between replicas, and the
// front handler that forwards a legacy gateway session's requests to the
// replica that owns the session.
//
// # Where it sits
//
// A leaf: it imports nothing of mcphost's. The directory is the store's
// (a `replicas` table on SQLite or PostgreSQL); this package declares the
// three methods it needs as [Directory] and cmd/mcphost passes an adapter.
// The gateway wraps its /mcp handler in [Node.Handler]; the host knows only
// the replica id (for its messages and /readyz).
//
// # Single node and cluster
//
// Every daemon has an id ([ResolveID]: the -replica-id flag, then
// MCPHOST_REPLICA_ID, else the host name and a random suffix). A [Node]
// without a directory is a single node: it heartbeats nothing, forwards
// nothing, and the gateway keeps go-sdk's own session ids, so a daemon on
// SQLite behaves as it always did. With a directory ([Node.Clustered]) the
// gateway's legacy sessions get ids "<replica>.<random>" ([Node.SessionID])
// and [Node.Handler] routes by that prefix.
//
// # Hops
//
// A request one replica makes to another (a forwarded one, a singleton
// relay's) carries [HeaderHop] (the sender's id), [HeaderHopAuth] (a proof
// for this one request: an HMAC under a key derived from the shared secret
// of the sender, the target replica, the method, the request URI, a time,
// a nonce and the body's hash) and, when it is made for a principal,
// [HeaderHopPrincipal], which the proof covers. The receiver refuses, 403,
// a proof that does not verify, one outside [HopWindow] of its clock and
// one whose nonce it has seen (a replay); a valid proof for another
// replica is 404 (the sender's directory has an old address). It never
// forwards a request that came as a hop (a loop is impossible: the second
// replica answers 404 instead). The client's Authorization header goes
// through unchanged: the owner authenticates the principal itself, and
// the door in front of [Node.Handler] has authenticated it before, so an
// unauthenticated request is never forwarded. [Node.HopOnly] is the front
// of what only replicas may call.
//
// # Stale rows
//
// A replica's row is forwarded to while its heartbeat is at most
// [StaleAfter] beats late (a replica that could not write it while the
// database was away keeps its sessions); after that its sessions are 404
// and every replica's heartbeat deletes the row, so an address a crashed
// replica had (and the cluster may have handed to someone else) is
// forgotten.
//
// # What it must never do
//
//   - Forward 2026-07-28 traffic: it is stateless and any replica serves it.
//   - Forward a request twice, or trust a hop header it cannot verify, or
//     one it has accepted before.
//   - Forward to a stale row, or forward a request its door has not
//     authenticated.
//   - Hang on an owner that does not answer: dialing is bounded, a refused
//     connection (the owner's process is gone, and its sessions with it) is
//     404, any other failure 502.
//   - Log the secret, a session id's random part or any header value.
package cluster
