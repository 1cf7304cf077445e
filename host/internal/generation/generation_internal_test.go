package generation

import "testing"

// TestGenerationIdle: a retired generation's idle channel closes when the
// last call holding it releases it, and at once when none does.
func TestGenerationIdle(t *testing.T) {
	isClosed := func(ch chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	g := &Gen{idle: make(chan struct{})}
	g.active.Add(2)
	g.Release() // not retired: nothing to signal
	g.MarkRetired()
	if isClosed(g.idle) {
		t.Fatal("idle closed while a call holds the generation")
	}
	g.Release()
	if !isClosed(g.idle) {
		t.Fatal("idle not closed after the last release")
	}
	g2 := &Gen{idle: make(chan struct{})}
	g2.MarkRetired()
	if !isClosed(g2.idle) {
		t.Fatal("idle not closed for a generation nobody holds")
	}
}
