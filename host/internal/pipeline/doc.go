// Package pipeline holds the stages every operation a door asks of a
// server goes through, apart from their order: the per-principal rate
// limit (Limiter), the arguments' checks, the policy run of each phase
// (Policy: `call`, `result`, `app`, with the display and result plugins)
// and its trail and audit records, and the stage spans.
//
// The host's stage list (host/pipeline.go for a tool call,
// host/operations.go for the other operations) calls them in order; that
// list moves here next. It sits above generation, upstream and identity.
// It must never reach a server but through the target it is given, and
// never answer an `ask` itself: a person answers it through a door.
package pipeline
