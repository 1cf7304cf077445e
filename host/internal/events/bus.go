package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/mcphost/mcphost/host/internal/identity"
)

// Event is one published event. Principal is empty for events every
// subscriber may see (server status, config) and names the owner for call
// events.
type Event struct {
	Type      string
	Principal string
	Data      any
	// JSON is Data encoded for this subscriber. It is encoded once per
	// event for every subscriber that sees the same form.
	JSON json.RawMessage
}

// SubscriberBuffer is how many events a slow subscriber may lag behind
// before it is dropped; a dropped subscriber's channel is closed, so the
// client reconnects and reloads instead of silently missing entries.
const SubscriberBuffer = 256

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

// View says how caller c may see an event's data: v is what it sees,
// ok false when it may not see it at all. A View is asked once per
// principal and event.
type View func(c identity.Caller) (v any, ok bool)

// Bus fans events out to subscribers without ever blocking a publisher.
// Set the exported fields before the first Subscribe.
type Bus struct {
	Logger *slog.Logger
	// Max bounds the open streams, MaxPerPrincipal one principal's: each
	// holds a goroutine, a buffer and a connection, so a client opening
	// them in a loop must hit a limit.
	Max, MaxPerPrincipal int

	mu          sync.Mutex
	subs        map[*subscriber]struct{}
	byPrincipal map[string]int
	closed      bool
	dropped     atomic.Int64
	encodeErrs  atomic.Int64
}

type subscriber struct {
	caller identity.Caller
	ch     chan Event
	closed bool
}

// end closes s's channel and forgets it. b.mu is held.
func (b *Bus) end(s *subscriber) {
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

// Publish sends ev to every subscriber that may see it, encoded once per
// form: admins and callers who may see ev as it is share one encoding;
// when view is set, any other caller sees what view gives its principal.
// A subscriber too slow to take it is dropped (its stream ends), never
// waited for.
func (b *Bus) Publish(ev Event, view View) {
	b.publish(ev, view, false)
}

// PublishEach is Publish with a view that decides for admins too: for
// events whose form depends on who receives them (an approval says
// whether its subscriber may answer it), or that an admin does not see
// by right.
func (b *Bus) PublishEach(ev Event, view View) {
	b.publish(ev, view, true)
}

func (b *Bus) publish(ev Event, view View, each bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.subs) == 0 {
		return
	}
	forms := forms{b: b, ev: ev, view: view, each: each}
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

// forms encodes one event's forms lazily, each at most once.
type forms struct {
	b     *Bus
	ev    Event
	view  View
	each  bool // the view decides for admins too
	full  json.RawMessage
	done  bool
	views map[string]json.RawMessage // per non-admin principal
}

func (f *forms) encode(v any) json.RawMessage {
	data, err := json.Marshal(v)
	if err != nil {
		f.b.encodeErrs.Add(1)
		if f.b.Logger != nil {
			f.b.Logger.Warn("encoding an event", "type", f.ev.Type, "err", err)
		}
		return nil
	}
	return data
}

// forCaller returns the event's encoding for c, or nil when c must not
// see it.
func (f *forms) forCaller(c identity.Caller) json.RawMessage {
	if f.ev.Principal != "" && f.ev.Principal != c.Name {
		return nil
	}
	if f.view == nil || (c.Admin && !f.each) {
		if !f.done {
			f.full, f.done = f.encode(f.ev.Data), true
		}
		return f.full
	}
	if data, ok := f.views[c.Name]; ok {
		return data
	}
	var data json.RawMessage
	if v, ok := f.view(c); ok {
		data = f.encode(v)
	}
	if f.views == nil {
		f.views = map[string]json.RawMessage{}
	}
	f.views[c.Name] = data
	return data
}

// Subscribe returns a channel of the events c may see and a function that
// ends the subscription. valid says whether c's credential still
// authenticates (checked under the bus's lock, so no stream slips in
// after a Revoke has run). The channel is closed when the subscriber falls
// too far behind, when Revoke ends it, or when the bus closes. Beyond the
// bounds on open streams it fails with a *TooManySubscribersError.
func (b *Bus) Subscribe(c identity.Caller, valid func(identity.Caller) bool) (<-chan Event, func(), error) {
	s := &subscriber{caller: c, ch: make(chan Event, SubscriberBuffer)}
	b.mu.Lock()
	if b.subs == nil {
		b.subs = map[*subscriber]struct{}{}
		b.byPrincipal = map[string]int{}
	}
	switch {
	case !valid(c):
		b.mu.Unlock()
		return nil, nil, ErrRevoked
	case b.byPrincipal[c.Name] >= b.MaxPerPrincipal:
		b.mu.Unlock()
		return nil, nil, &TooManySubscribersError{Limit: b.MaxPerPrincipal, PerPrincipal: true}
	case len(b.subs) >= b.Max:
		b.mu.Unlock()
		return nil, nil, &TooManySubscribersError{Limit: b.Max}
	}
	if b.closed {
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

// Revoke ends the streams whose caller valid no longer accepts (a rotated
// or removed token, changed groups or admin rights, after a reload). It
// returns how many it ended.
func (b *Bus) Revoke(valid func(identity.Caller) bool) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for s := range b.subs {
		if !valid(s.caller) {
			b.end(s)
			n++
		}
	}
	return n
}

// EndAll ends every subscription (the bus goes on), and returns how many.
func (b *Bus) EndAll() int { return b.Revoke(func(identity.Caller) bool { return false }) }

// Close ends every subscription; later ones get a closed channel.
func (b *Bus) Close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.EndAll()
}

// Dropped counts the subscribers ended for falling behind.
func (b *Bus) Dropped() int64 { return b.dropped.Load() }
