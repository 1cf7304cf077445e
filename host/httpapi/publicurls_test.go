package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
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

// TestAppsSandboxURL: the host name of apps_sandbox_url serves the App
// sandbox, to the public URLs' WebShell, and nothing else; it is never an
// accepted Origin; the WebShell page names it and may frame it.
func TestAppsSandboxURL(t *testing.T) {
	e := newEnvOptions(t, &config.Config{}, func(_ *host.Host, o *httpapi.Options) {
		o.PublicURLs = []string{"https://mcphost.example.com"}
		o.AppsSandboxURL = "https://apps.example.com"
	})
	sandboxQuery := "/mcp-app-sandbox?hostOrigin=" + url.QueryEscape("https://mcphost.example.com")
	tests := []struct {
		name, host, path, token, origin string
		want                            int
	}{
		{"the sandbox, for the public WebShell", "apps.example.com", sandboxQuery, "", "", 200},
		{"the sandbox, for a foreign page", "apps.example.com", "/mcp-app-sandbox?hostOrigin=" + url.QueryEscape("https://evil.example"), "", "", 400},
		{"the WebShell", "apps.example.com", "/", "", "", 404},
		{"an asset", "apps.example.com", "/assets/app.js", "", "", 404},
		{"the API", "apps.example.com", "/api/v1/servers", aliceToken, "", 404},
		{"the gateway", "apps.example.com", "/mcp", aliceToken, "", 404},
		{"the API from the sandbox's origin", "mcphost.example.com", "/api/v1/servers", aliceToken, "https://apps.example.com", 403},
		{"the sandbox on the public host", "mcphost.example.com", sandboxQuery, "", "", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := []reqOpt{withHost(tt.host)}
			if tt.origin != "" {
				opts = append(opts, withHeader("Origin", tt.origin))
			}
			r := e.do(t, "GET", tt.path, tt.token, "", opts...)
			wantStatus(t, r, tt.want)
			if tt.want == 200 && strings.HasPrefix(tt.path, "/mcp-app-sandbox") {
				if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors https://mcphost.example.com;") {
					t.Errorf("the sandbox's CSP %q does not let the public WebShell frame it", csp)
				}
			}
		})
	}
	r := e.do(t, "GET", "/", "", "", withHost("mcphost.example.com"))
	wantStatus(t, r, http.StatusOK)
	if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-src https://apps.example.com") && !strings.Contains(csp, " https://apps.example.com;") {
		t.Errorf("the WebShell's CSP %q does not let Apps frame the sandbox's origin", csp)
	}
	if !strings.Contains(string(r.body), `<meta name="mcphost-apps-sandbox" content="https://apps.example.com">`) {
		t.Errorf("the WebShell page does not name the sandbox's origin:\n%.600s", r.body)
	}
}

// TestSandboxHostOnly: the wrapper of the daemon's whole handler lets the
// sandbox's host name reach the sandbox route only.
func TestSandboxHostOnly(t *testing.T) {
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	for _, tc := range []struct {
		sandbox, host, path string
		want                int
	}{
		{"https://Apps.Example.com", "apps.example.com", "/mcp-app-sandbox", http.StatusTeapot},
		{"https://Apps.Example.com", "APPS.example.com", "/mcp", http.StatusNotFound},
		{"https://Apps.Example.com", "apps.example.com", "/", http.StatusNotFound},
		{"https://Apps.Example.com", "mcphost.example.com", "/mcp", http.StatusTeapot},
		// No sandbox URL (or none that parses): every host reaches the daemon.
		{"", "apps.example.com", "/mcp", http.StatusTeapot},
		{"ftp://apps.example.com", "apps.example.com", "/", http.StatusTeapot},
	} {
		r := httptest.NewRequest(http.MethodGet, "http://"+tc.host+tc.path, nil)
		w := httptest.NewRecorder()
		httpapi.SandboxHostOnly(tc.sandbox, next).ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("sandbox %q, %s%s: %d, want %d (%s)", tc.sandbox, tc.host, tc.path, w.Code, tc.want, w.Body)
		}
	}
}
