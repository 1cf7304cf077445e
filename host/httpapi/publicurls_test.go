package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/httpapi"
)

// TestPublicURLs: the origins of public_urls pass the Host and Origin
// checks; a loopback one brings the other loopback name with it and may
// frame Apps; anything else is still refused.
func TestPublicURLs(t *testing.T) {
	e := newEnvOptions(t, &config.Config{}, func(_ *host.Host, o *httpapi.Options) {
		o.PublicURLs = []string{"https://mcphost.example.com", "http://localhost:8080"}
	})
	tests := []struct {
		name, host, origin string
		want               int
	}{
		{"public host", "mcphost.example.com", "", 200},
		{"public host and origin", "mcphost.example.com", "https://mcphost.example.com", 200},
		{"public host, http origin", "mcphost.example.com", "http://mcphost.example.com", 403},
		{"loopback balancer", "localhost:8080", "http://localhost:8080", 200},
		{"its other loopback name", "127.0.0.1:8080", "http://127.0.0.1:8080", 200},
		{"another port", "localhost:8081", "", 403},
		{"another host", "rebind.example", "", 403},
		{"public host, foreign origin", "mcphost.example.com", "https://evil.example", 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := []reqOpt{withHost(tt.host)}
			if tt.origin != "" {
				opts = append(opts, withHeader("Origin", tt.origin))
			}
			wantStatus(t, e.do(t, "GET", "/api/v1/servers", aliceToken, "", opts...), tt.want)
		})
	}
	r := e.do(t, "GET", "/", "", "", withHost("localhost:8080"))
	wantStatus(t, r, http.StatusOK)
	if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "http://127.0.0.1:8080") {
		t.Errorf("the WebShell's CSP through the loopback balancer %q does not let Apps frame its other name", csp)
	}
}
