// Package oauth signs mcphost in to remote MCP servers on behalf of
// principals (OAuth 2.1, the MCP authorization spec at 2025-11-25 and
// 2026-07-28).
//
// The protocol flow itself — protected resource metadata, authorization
// server metadata with its fallbacks, PKCE, client ID metadata documents,
// dynamic and pre-registered clients, resource indicators, scope selection,
// iss checks — is go-sdk's [auth.AuthorizationCodeHandler] (and, for
// machine-to-machine servers, extauth's client credentials handler). This
// package wraps it and adds what it lacks:
//
//   - a [Broker] of pending sign-ins: the handler's AuthorizationCodeFetcher
//     registers a flow that only the principal who started it follows; its
//     single-use launch URL (/oauth/launch/ID?k=KEY) redirects to the
//     authorization server at once only in the browser that started it
//     (the cookie of the start request, [Flow.BrowserCookie]); any other
//     browser gets a page naming the server and the principal the
//     credential will be stored for, and goes on only when its user
//     confirms from that page (a same-origin POST with the page's token and
//     cookie). /oauth/callback accepts a code only when the state, the flow
//     and the launching browser's cookie match, and says whose credential
//     it stored;
//   - persistence: every [Credential] is stored through a [Store], its
//     secrets sealed with AES-256-GCM by a [Sealer] whose additional data
//     binds each row to its table, server, principal and issuer;
//   - a refresher that sends `resource` on refresh requests, one refresh at
//     a time per credential, rotation persisted before the token is used.
//     It is single flight across replicas of one database too: the refresh
//     runs inside [Store.RefreshCredential], which locks the stored row,
//     reads it again (a replica that finds another's fresh result uses it
//     and asks no authorization server) and writes under the same lock; a
//     refused refresh token deletes the credential only when the row, read
//     again under the lock, still holds that token;
//   - one forced refresh on a 401 before asking anyone, a check that the
//     authorization server is still the one that issued the credential
//     (a changed issuer drops it), and a cap on step-up authorizations;
//   - a [Transport] that puts the credential on every request of a server's
//     HTTP client and turns an unanswerable challenge into an
//     [*AuthRequiredError].
//
// Where it sits: host builds one [Manager] per daemon, gives every remote
// server's HTTP client a [Transport], and mounts [Manager.Handler] on the
// daemon's listener through host/httpapi. A sign-in starts only from a user
// action ([Manager.StartSignIn], or a call whose context says someone can
// answer, see [WithPrompter]).
//
// What it must never do: open a browser; put a token, code, verifier,
// state, client secret, launch key or cookie in a log line, an error, a URL
// other than the authorization server's, or an answer of [Manager.Status];
// send a browser to the authorization server from a launch URL it did not
// start without its user's confirmation;
// store a secret unsealed; present a credential to an authorization server
// other than the one that issued it.
package oauth
