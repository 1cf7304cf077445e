// Package events carries what happens in the host to whoever listens: the
// event streams of the API and the WebShell (a bounded [Bus] of
// subscribers, each seeing only what its caller may see), the in-process
// watchers of changes ([Watchers]) and the callbacks of what servers send
// ([Listeners]).
//
// It sits above identity and below the pipeline, which publishes. It
// decides nothing about visibility itself: a publisher passes how each
// caller may see an event. It must never block a publisher: a subscriber
// too slow to take an event has its stream ended, so its client reloads
// instead of silently missing events.
package events
