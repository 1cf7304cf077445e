package host

import (
	"context"

	"github.com/mcphost/mcphost/host/internal/events"
	"github.com/mcphost/mcphost/host/internal/generation"
)

// Event types published to subscribers (the API's /api/v1/events stream).
const (
	eventServer      = "server"       // Data: ServerStatus (redacted for non-admins)
	eventCallStarted = "call_started" // Data: CallStarted
	eventProgress    = "progress"     // Data: CallProgress
	eventEntry       = "entry"        // Data: *store.Entry
	eventConfig      = "config"       // Data: ReloadResult; the servers and tools may have changed
)

// Event is one published event. Principal is empty for events every
// subscriber may see (server status, config) and names the owner for call
// events.
type Event = events.Event

// CallStarted is the data of an EventCallStarted.
type CallStarted struct {
	CallID    string `json:"callId"`
	SessionID string `json:"sessionId"`
	Server    string `json:"server"`
	Tool      string `json:"tool"`
}

// CallProgress is the data of an EventProgress.
type callProgress struct {
	CallID    string `json:"callId"`
	SessionID string `json:"sessionId"`
	Progress
}

// Bounds on event streams (Options.MaxSubscribers and
// MaxSubscribersPerPrincipal): each one holds a goroutine, a buffer and a
// connection, so a client opening them in a loop must hit a limit.
const (
	defaultMaxSubscribers             = 1024
	defaultMaxSubscribersPerPrincipal = 32
)

// TooManySubscribersError is returned by Subscribe beyond the bounds on
// event streams (the API answers 429).
type TooManySubscribersError = events.TooManySubscribersError

// ErrRevoked is returned by Subscribe for a caller whose credential a
// reload revoked after it authenticated.
var ErrRevoked = events.ErrRevoked

// publish sends ev to every subscriber that may see it (a server's status
// as each caller may see it), encoded once per form. A subscriber too slow
// to take it is dropped (its stream ends), never waited for.
func (h *Host) publish(ev Event) {
	if ev.Type == eventServer || ev.Type == eventConfig {
		h.ev.watchers.Poke()
	}
	var view events.View
	if st, ok := ev.Data.(ServerStatus); ok {
		// Event publishing has no request context; a list rule is bounded
		// by its cost limit.
		view = func(c Caller) (any, bool) { return h.gen().StatusFor(c, st) }
	}
	h.ev.bus.Publish(ev, view)
}

// Subscribe returns a channel of the events c may see and a function that
// ends the subscription. The channel is closed when the subscriber falls
// too far behind, when a reload revokes c's credential (see
// [Host.StillValid]), or when the host closes. Beyond the bounds on open
// streams it fails with a *TooManySubscribersError.
func (h *Host) Subscribe(c Caller) (<-chan Event, func(), error) {
	return h.ev.bus.Subscribe(c, func(c Caller) bool { return h.gen().Principals.StillValid(c) })
}

// revoke ends the streams whose caller g no longer authenticates as the
// same caller (a rotated or removed token, changed groups or admin rights),
// after a reload. It returns how many it ended.
func (h *Host) revoke(g *generation.Gen) int { return h.ev.bus.Revoke(g.Principals.StillValid) }

// WatchChanges returns a channel that receives a value after a server's
// status or catalog changed or the config was reloaded (changes that come
// while one is pending are coalesced into it), and a function that stops
// the watch. It is for in-process doors that mirror the catalogs (the
// gateway); it has none of the limits of Subscribe.
func (h *Host) WatchChanges() (<-chan struct{}, func()) { return h.ev.watchers.Watch() }

// WatchResourceUpdates calls fn with the server and URI of every
// resources/updated notification a server sends (for the resources the
// gateway's clients subscribed to, see SubscribeResource) until stop is
// called, with the context of the server's session. fn runs on that
// session and must not block.
func (h *Host) WatchResourceUpdates(fn func(ctx context.Context, server, uri string)) (stop func()) {
	return h.ev.resourceWatch.Add(fn)
}
