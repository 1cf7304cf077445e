package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// Event types published to subscribers (the API's /api/v1/events stream).
const (
	EventServer      = "server"       // Data: ServerStatus (redacted for non-admins)
	EventCallStarted = "call_started" // Data: CallStarted
	EventProgress    = "progress"     // Data: CallProgress
	EventEntry       = "entry"        // Data: *store.Entry
	EventConfig      = "config"       // Data: ReloadResult; the servers and tools may have changed
)

// Event is one published event. Principal is empty for events every
// subscriber may see (server status, config) and names the owner for call
// events.
type Event struct {
	Type      string
	Principal string
	Data      any
	// JSON is Data encoded for this subscriber. It is encoded once per
	// event for every subscriber that sees the same form (a server event
	// has one form for admins and one per other principal: see
	// [Host.ServersFor]).
	JSON json.RawMessage
}

// CallStarted is the data of an EventCallStarted.
type CallStarted struct {
	CallID    string `json:"callId"`
	SessionID string `json:"sessionId"`
	Server    string `json:"server"`
	Tool      string `json:"tool"`
}

// CallProgress is the data of an EventProgress.
type CallProgress struct {
	CallID    string `json:"callId"`
	SessionID string `json:"sessionId"`
	Progress
}

// subscriberBuffer is how many events a slow subscriber may lag behind
// before it is dropped; a dropped subscriber's channel is closed, so the
// client reconnects and reloads instead of silently missing entries.
const subscriberBuffer = 256

// Bounds on event streams (Options.MaxSubscribers and
// MaxSubscribersPerPrincipal): each one holds a goroutine, a buffer and a
// connection, so a client opening them in a loop must hit a limit.
const (
	defaultMaxSubscribers             = 1024
	DefaultMaxSubscribersPerPrincipal = 32
)

// TooManySubscribersError is returned by Subscribe beyond the bounds on
// event streams (the API answers 429).
type TooManySubscribersError struct {
	Limit        int
	PerPrincipal bool
}

func (e *TooManySubscribersError) Error() string {
	if e.PerPrincipal {
		return fmt.Sprintf("too many event streams open for this principal (at most %d); close one first", e.Limit)
	}
	return fmt.Sprintf("too many event streams open on this daemon (at most %d); try again later", e.Limit)
}

// ErrRevoked is returned by Subscribe for a caller whose credential a
// reload revoked after it authenticated.
var ErrRevoked = errors.New("the credential no longer authenticates")

// bus fans events out to subscribers without ever blocking a publisher.
type bus struct {
	mu          sync.Mutex
	subs        map[*subscriber]struct{}
	byPrincipal map[string]int
	dropped     atomic.Int64
	encodeErrs  atomic.Int64
}

type subscriber struct {
	caller Caller
	ch     chan Event
	closed bool
}

// end closes s's channel and forgets it. b.mu is held.
func (b *bus) end(s *subscriber) {
	if s.closed {
		return
	}
	delete(b.subs, s)
	if b.byPrincipal[s.caller.Name]--; b.byPrincipal[s.caller.Name] <= 0 {
		delete(b.byPrincipal, s.caller.Name)
	}
	s.closed = true
	close(s.ch)
}

// eventForms encodes one event's forms lazily, each at most once.
type eventForms struct {
	h    *Host
	ev   Event
	full json.RawMessage
	done bool
	// per non-admin principal, for server events: whether it may see the
	// server, and its redacted form.
	views map[string]json.RawMessage
}

func (f *eventForms) encode(v any) json.RawMessage {
	data, err := json.Marshal(v)
	if err != nil {
		f.h.bus.encodeErrs.Add(1)
		f.h.opts.Logger.Warn("encoding an event", "type", f.ev.Type, "err", err)
		return nil
	}
	return data
}

// forCaller returns the event's encoding for c, or nil when c must not
// see it.
func (f *eventForms) forCaller(c Caller) json.RawMessage {
	if f.ev.Principal != "" && f.ev.Principal != c.Name {
		return nil
	}
	st, isServer := f.ev.Data.(ServerStatus)
	if !isServer || c.Admin {
		if !f.done {
			f.full, f.done = f.encode(f.ev.Data), true
		}
		return f.full
	}
	if data, ok := f.views[c.Name]; ok {
		return data
	}
	var data json.RawMessage
	if view, ok := f.h.gen().statusFor(c, st); ok {
		data = f.encode(view)
	}
	if f.views == nil {
		f.views = map[string]json.RawMessage{}
	}
	f.views[c.Name] = data
	return data
}

// publish sends ev to every subscriber that may see it, encoded once per
// form. A subscriber too slow to take it is dropped (its stream ends),
// never waited for.
func (h *Host) publish(ev Event) {
	if ev.Type == EventServer || ev.Type == EventConfig {
		h.watchers.poke()
	}
	b := &h.bus
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.subs) == 0 {
		return
	}
	forms := eventForms{h: h, ev: ev}
	for s := range b.subs {
		data := forms.forCaller(s.caller)
		if data == nil {
			continue
		}
		out := ev
		out.JSON = data
		select {
		case s.ch <- out:
		default:
			// Too slow: end its stream rather than lose events silently.
			b.end(s)
			b.dropped.Add(1)
		}
	}
}

// Subscribe returns a channel of the events c may see and a function that
// ends the subscription. The channel is closed when the subscriber falls
// too far behind, when a reload revokes c's credential (see
// [Host.StillValid]), or when the host closes. Beyond the bounds on open
// streams it fails with a *TooManySubscribersError.
func (h *Host) Subscribe(c Caller) (<-chan Event, func(), error) {
	s := &subscriber{caller: c, ch: make(chan Event, subscriberBuffer)}
	b := &h.bus
	b.mu.Lock()
	if b.subs == nil {
		b.subs = map[*subscriber]struct{}{}
		b.byPrincipal = map[string]int{}
	}
	switch {
	case !h.gen().principals.StillValid(c):
		// A reload revoked c between its authentication and now; revoke
		// takes b.mu too, so no stream slips in after it has run.
		b.mu.Unlock()
		return nil, nil, ErrRevoked
	case b.byPrincipal[c.Name] >= h.opts.MaxSubscribersPerPrincipal:
		b.mu.Unlock()
		return nil, nil, &TooManySubscribersError{Limit: h.opts.MaxSubscribersPerPrincipal, PerPrincipal: true}
	case len(b.subs) >= h.opts.MaxSubscribers:
		b.mu.Unlock()
		return nil, nil, &TooManySubscribersError{Limit: h.opts.MaxSubscribers}
	}
	if h.closing.Load() {
		s.closed = true
		close(s.ch)
	} else {
		b.subs[s] = struct{}{}
		b.byPrincipal[c.Name]++
	}
	b.mu.Unlock()
	return s.ch, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.end(s)
	}, nil
}

// revoke ends the streams whose caller g no longer authenticates as the
// same caller (a rotated or removed token, changed groups or admin rights),
// after a reload. It returns how many it ended.
func (h *Host) revoke(g *generation) int {
	b := &h.bus
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for s := range b.subs {
		if !g.principals.StillValid(s.caller) {
			b.end(s)
			n++
		}
	}
	return n
}

// closeAll ends every subscription (at shutdown).
func (b *bus) closeAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		b.end(s)
	}
}

// watchers are the in-process listeners of WatchChanges.
type watchers struct {
	mu  sync.Mutex
	chs map[chan struct{}]struct{}
}

func (w *watchers) poke() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ch := range w.chs {
		select {
		case ch <- struct{}{}:
		default: // a change is already pending; the listener reads the state anew
		}
	}
}

// WatchChanges returns a channel that receives a value after a server's
// status or catalog changed or the config was reloaded (changes that come
// while one is pending are coalesced into it), and a function that stops
// the watch. It is for in-process doors that mirror the catalogs (the
// gateway); it has none of the limits of Subscribe.
func (h *Host) WatchChanges() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.watchers.mu.Lock()
	if h.watchers.chs == nil {
		h.watchers.chs = map[chan struct{}]struct{}{}
	}
	h.watchers.chs[ch] = struct{}{}
	h.watchers.mu.Unlock()
	return ch, func() {
		h.watchers.mu.Lock()
		delete(h.watchers.chs, ch)
		h.watchers.mu.Unlock()
	}
}

// listeners are in-process callbacks the host calls with what its servers
// send (WatchResourceUpdates, WatchLogs); a callback must not block.
type listeners[F any] struct {
	mu   sync.Mutex
	next int
	fns  map[int]F
}

// add registers fn until the returned stop is called.
func (l *listeners[F]) add(fn F) (stop func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fns == nil {
		l.fns = map[int]F{}
	}
	id := l.next
	l.next++
	l.fns[id] = fn
	return func() {
		l.mu.Lock()
		delete(l.fns, id)
		l.mu.Unlock()
	}
}

// each returns the callbacks registered now, to call outside the lock.
func (l *listeners[F]) each() []F {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]F, 0, len(l.fns))
	for _, fn := range l.fns {
		out = append(out, fn)
	}
	return out
}

// WatchResourceUpdates calls fn with the server and URI of every
// resources/updated notification a server sends (for the resources the
// gateway's clients subscribed to, see GatewaySubscribe) until stop is
// called, with the context of the server's session. fn runs on that
// session and must not block.
func (h *Host) WatchResourceUpdates(fn func(ctx context.Context, server, uri string)) (stop func()) {
	return h.resourceWatch.add(fn)
}
