package host

import (
	"testing"
)

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
	g := &generation{idle: make(chan struct{})}
	g.active.Add(2)
	g.release() // not retired: nothing to signal
	g.markRetired()
	if isClosed(g.idle) {
		t.Fatal("idle closed while a call holds the generation")
	}
	g.release()
	if !isClosed(g.idle) {
		t.Fatal("idle not closed after the last release")
	}
	g2 := &generation{idle: make(chan struct{})}
	g2.markRetired()
	if !isClosed(g2.idle) {
		t.Fatal("idle not closed for a generation nobody holds")
	}
}
