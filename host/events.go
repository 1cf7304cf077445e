package host

import (
	"sync"
	"sync/atomic"
)

// Event types published to subscribers (the API's /api/v1/events stream).
const (
	EventServer      = "server"       // Data: ServerStatus
	EventCallStarted = "call_started" // Data: CallStarted
	EventProgress    = "progress"     // Data: CallProgress
	EventEntry       = "entry"        // Data: *store.Entry
	EventConfig      = "config"       // Data: ReloadResult; the servers and tools may have changed
)

// Event is one published event. Principal is empty for events every
// subscriber may see (server status) and names the owner for call events.
type Event struct {
	Type      string
	Principal string
	Data      any
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

// bus fans events out to subscribers without ever blocking a publisher.
type bus struct {
	mu      sync.Mutex
	subs    map[*subscriber]struct{}
	dropped atomic.Int64
}

type subscriber struct {
	principal string
	ch        chan Event
	closed    bool
}

func (b *bus) publish(ev Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		if ev.Principal != "" && ev.Principal != s.principal {
			continue
		}
		select {
		case s.ch <- ev:
		default:
			// Too slow: end its stream rather than lose events silently.
			delete(b.subs, s)
			s.closed = true
			close(s.ch)
			b.dropped.Add(1)
		}
	}
}

// Subscribe returns a channel of the events principal may see and a
// function that ends the subscription. The channel is closed when the
// subscriber falls too far behind or the host closes.
func (h *Host) Subscribe(principal string) (<-chan Event, func()) {
	s := &subscriber{principal: principal, ch: make(chan Event, subscriberBuffer)}
	b := &h.bus
	b.mu.Lock()
	if b.subs == nil {
		b.subs = map[*subscriber]struct{}{}
	}
	if h.closing.Load() {
		s.closed = true
		close(s.ch)
	} else {
		b.subs[s] = struct{}{}
	}
	b.mu.Unlock()
	return s.ch, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if !s.closed {
			delete(b.subs, s)
			s.closed = true
			close(s.ch)
		}
	}
}

// closeSubscribers ends every subscription (at shutdown).
func (b *bus) closeAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		delete(b.subs, s)
		s.closed = true
		close(s.ch)
	}
}
