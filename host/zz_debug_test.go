package host_test

import (
	"context"
	"net/http"
	"os"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
)

func TestZZDebugNever(t *testing.T) {
	stop := make(chan struct{})
	srv := serveHTTP(t, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(func() { close(stop) })
	s := remoteServer("bad", config.TransportStreamableHTTP, srv.URL+"/mcp")
	s.DiscoveryTimeout = 300 * time.Millisecond
	for i := 0; i < 200; i++ {
		h, _ := host.New(&config.Config{Servers: []config.Server{s}}, host.Options{})
		h.Start(t.Context())
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		err := h.WaitSettled(ctx)
		cancel()
		if err != nil {
			pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
			h.Close()
			return
		}
		h.Close()
	}
}
