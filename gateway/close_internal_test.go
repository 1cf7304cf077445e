package gateway

import (
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
)

// TestCloseEndsMirroring: Close returns only once the goroutine that
// mirrors the host's catalog changes has ended (before, it waited on the
// change channel forever: one goroutine left per closed gateway).
func TestCloseEndsMirroring(t *testing.T) {
	h, err := host.New(&config.Config{}, host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	g := New(h, Options{})
	closed := make(chan struct{})
	go func() { g.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
	select {
	case <-g.done:
	default:
		t.Fatal("the mirroring goroutine still runs after Close")
	}
	g.Close() // a second Close is harmless
}
