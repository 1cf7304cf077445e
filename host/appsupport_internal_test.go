package host

import (
	"testing"

	"github.com/mcphost/mcphost/host/config"
)

// TestAppSourceValidator pins the loopback rule of App CSP sources
// (RATIONALE.md, "App CSP: no loopback sources").
func TestAppSourceValidator(t *testing.T) {
	stdio := config.Server{Name: "s", Transport: config.TransportStdio, Command: "x"}
	remote := config.Server{Name: "r", Transport: config.TransportStreamableHTTP, URL: "https://mcp.example.com/mcp"}
	local := config.Server{Name: "l", Transport: config.TransportStreamableHTTP, URL: "http://127.0.0.1:9000/mcp"}
	localName := config.Server{Name: "n", Transport: config.TransportSSE, URL: "http://localhost:9000/sse"}
	local6 := config.Server{Name: "6", Transport: config.TransportStreamableHTTP, URL: "http://[::1]:9000/mcp"}
	h := &Host{}
	h.cur.Store(&generation{cfg: &config.Config{Listen: "127.0.0.1:7777"}})

	tests := []struct {
		server config.Server
		source string
		ok     bool
	}{
		{stdio, "https://api.example.com", true},
		{stdio, "http://localhost:3000", false},
		{stdio, "http://127.0.0.1:7777", false},
		{stdio, "http://2130706433:7777", false},
		{stdio, "ws://app.localhost", false},
		{remote, "http://localhost:3000", false},
		{remote, "wss://rt.example.com:8443", true},
		{remote, "https://a.com; script-src *", false},
		{local, "http://localhost:9000", true},
		{local, "http://127.0.0.1:3000", true},
		{local, "http://127.0.0.1:7777", false}, // the daemon itself
		{local, "http://localhost:7777", false},
		{local, "https://api.example.com", true},
		{localName, "ws://localhost:9000", true},
		{local6, "http://localhost:9000", true},
	}
	for _, tt := range tests {
		t.Run(tt.server.Name+" "+tt.source, func(t *testing.T) {
			err := h.appSourceValidator(tt.server)(tt.source)
			if (err == nil) != tt.ok {
				t.Errorf("source %q for server %s: %v, want ok=%v", tt.source, tt.server.Name, err, tt.ok)
			}
		})
	}
}
