// Package identity says who is calling: the principals of a config (and
// the daemon's generated owner), their credentials, the caller a request
// authenticates as, with the origin its kind of credential implies, and
// each principal's rate limit. It is the bottom layer of the host: every
// other layer speaks of callers in its words, and it imports none of them.
//
// It keeps digests of credentials, never the credentials, and compares
// them in constant time. It must never take an origin from what a client
// says: the origin is the credential's.
package identity
