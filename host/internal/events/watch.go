package events

import "sync"

// Watchers are the in-process listeners of changes: each holds a channel
// of one pending change.
type Watchers struct {
	mu  sync.Mutex
	chs map[chan struct{}]struct{}
}

// Poke tells every watcher that something changed; a change that comes
// while one is pending is coalesced into it.
func (w *Watchers) Poke() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ch := range w.chs {
		select {
		case ch <- struct{}{}:
		default: // a change is already pending; the listener reads the state anew
		}
	}
}

// Watch returns a channel that receives a value after a change, and a
// function that stops the watch.
func (w *Watchers) Watch() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	w.mu.Lock()
	if w.chs == nil {
		w.chs = map[chan struct{}]struct{}{}
	}
	w.chs[ch] = struct{}{}
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		delete(w.chs, ch)
		w.mu.Unlock()
	}
}

// Listeners are in-process callbacks of type F; a callback must not
// block.
type Listeners[F any] struct {
	mu   sync.Mutex
	next int
	fns  map[int]F
}

// Add registers fn until the returned stop is called.
func (l *Listeners[F]) Add(fn F) (stop func()) {
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

// Each returns the callbacks registered now, to call outside the lock.
func (l *Listeners[F]) Each() []F {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]F, 0, len(l.fns))
	for _, fn := range l.fns {
		out = append(out, fn)
	}
	return out
}
