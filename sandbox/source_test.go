package sandbox

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestValidSource covers the source rows of apps.md §14 (1–6) and the
// grammar edges of §8.2.
func TestValidSource(t *testing.T) {
	tests := []struct {
		row     string // §14 row, or "grammar"
		source  string
		wantErr string // substring; "" means valid
	}{
		// Row 1: directive injection.
		{"1", "https://a.com; script-src *", "whitespace"},
		{"1", "https://a.com;script-src", "';'"},
		{"1", "https://a.com;", "';'"},
		// Row 2: header injection, source separators, quotes, spaces.
		{"2", "https://a.com\r\nX-Evil: 1", "control character"},
		{"2", "https://a.com\nX-Evil: 1", "control character"},
		{"2", "https://a.com\r", "control character"},
		{"2", "https://a.com\x00", "control character"},
		{"2", "https://a.com\x7f", "control character"},
		{"2", "https://a.com\t", "control character"},
		{"2", "https://a.com,https://b.com", "','"},
		{"2", "https://a.com,", "','"},
		{"2", "'https://a.com'", "scheme"},
		{"2", "https://a.com'", "quote"},
		{"2", `https://a.com"`, "quote"},
		{"2", "https://a.com`", "quote"},
		{"2", "https://a.com https://b.com", "whitespace"},
		{"2", " https://a.com", "whitespace"},
		{"2", "https://a.com ", "whitespace"},
		// Row 3: wildcards, scheme-only, keywords.
		{"3", "*", "not of the form"},
		{"3", "https:", "not of the form"},
		{"3", "http:", "not of the form"},
		{"3", "data:", "not of the form"},
		{"3", "blob:", "not of the form"},
		{"3", "'self'", "not of the form"},
		{"3", "'none'", "not of the form"},
		{"3", "'unsafe-eval'", "not of the form"},
		{"3", "'unsafe-inline'", "not of the form"},
		{"3", "'strict-dynamic'", "not of the form"},
		{"3", "'nonce-abc'", "not of the form"},
		{"3", "https://*", "wildcard"},
		{"3", "https://*.", "empty host"},
		{"3", "https://a.*.com", "wildcard"},
		{"3", "*.a.com", "not of the form"},
		{"3", "https://a.com:*", "wildcard"},
		{"3", "data://a.com", "scheme"},
		{"3", "blob://a.com", "scheme"},
		// Row 4: paths, javascript:, bracketed IPv6, userinfo.
		{"4", "https://a.com/path", "path"},
		{"4", "https://a.com/", "path"},
		{"4", "https://a.com?q=1", "query"},
		{"4", "https://a.com#f", "fragment"},
		{"4", "https://a.com:443/x", "path"},
		{"4", "javascript:alert(1)", "not of the form"},
		{"4", "javascript://a.com", "scheme"},
		{"4", "https://[::1]:8080", "bracketed"},
		{"4", "https://[::1]", "bracketed"},
		{"4", "https://user@a.com", "userinfo"},
		{"4", "https://user:pass@a.com", "userinfo"},
		{"4", "https://a.com\\b", "not allowed"},
		{"4", "file://a.com", "scheme"},
		{"4", "ftp://a.com", "scheme"},
		// Row 5: non-ASCII look-alikes, never folded.
		{"5", "https://\u212A.example.com", "not ASCII"},
		{"5", "https://\u017F.example.com", "not ASCII"},
		{"5", "http\u017F://x.com", "not ASCII"},
		{"5", "https://xn--\u00e9.com", "not ASCII"},
		{"5", "https://a.com\u2028", "not ASCII"},
		{"5", "https://a.com\uff1b", "not ASCII"}, // fullwidth semicolon
		{"5", "https://a.com\xff", "not ASCII"},   // invalid UTF-8
		// Row 6: valid.
		{"6", "https://api.a.com", ""},
		{"6", "https://*.cdn.a.com", ""},
		{"6", "wss://rt.a.com:8443", ""},
		// Grammar edges.
		{"grammar", "", "empty source"},
		{"grammar", "http://a", ""},
		{"grammar", "ws://a-b.c-d.e", ""},
		{"grammar", "HTTPS://API.A.COM", ""},
		{"grammar", "https://1.2.3.4:1", ""},
		{"grammar", "https://a.com:65535", ""},
		{"grammar", "https://a.com:65536", "1–65535"},
		{"grammar", "https://a.com:0", "1–65535"},
		{"grammar", "https://a.com:00000", "1–65535"},
		{"grammar", "https://a.com:123456", "1 to 5 digits"},
		{"grammar", "https://a.com:", "1 to 5 digits"},
		{"grammar", "https://a.com:80:80", "1 to 5 digits"},
		{"grammar", "https://a.com:+80", "not allowed"},
		{"grammar", "https://", "empty host"},
		{"grammar", "https://.a.com", "empty label"},
		{"grammar", "https://a..com", "empty label"},
		{"grammar", "https://a.com.", "empty label"},
		{"grammar", "https://*.*.a.com", "wildcard"},
		{"grammar", "https://a_b.com", "not allowed"},
		{"grammar", "https:///a.com", "path"},
		{"grammar", "https:a.com", "not of the form"},
		{"grammar", "httpss://a.com", "scheme"},
		{"grammar", "://a.com", "scheme"},
	}
	for _, tt := range tests {
		err := ValidSource(tt.source)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("row %s: ValidSource(%q) = %v, want nil", tt.row, tt.source, err)
		case tt.wantErr != "" && err == nil:
			t.Errorf("row %s: ValidSource(%q) = nil, want an error containing %q", tt.row, tt.source, tt.wantErr)
		case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
			t.Errorf("row %s: ValidSource(%q) = %v, want an error containing %q", tt.row, tt.source, err, tt.wantErr)
		}
		if err != nil && strings.ContainsAny(err.Error(), "\r\n") {
			t.Errorf("ValidSource(%q): error %q holds a line break", tt.source, err)
		}
	}
}

const testOrigin = "http://127.0.0.1:8080"

const defaultPolicy = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; " +
	"img-src data:; media-src data:; connect-src 'none'; frame-src 'none'; base-uri 'none'; " +
	"form-action 'none'; object-src 'none'; frame-ancestors http://127.0.0.1:8080; " +
	"sandbox allow-scripts allow-forms"

func TestHeader(t *testing.T) {
	tests := []struct {
		name   string
		csp    CSP
		origin string
		want   string
	}{
		{"default", CSP{}, testOrigin, defaultPolicy},
		{"empty lists", CSP{ConnectDomains: []string{}, ResourceDomains: []string{}}, testOrigin, defaultPolicy},
		{
			"row 6: verbatim in the right directives",
			CSP{
				ConnectDomains:  []string{"https://api.a.com", "wss://rt.a.com:8443"},
				ResourceDomains: []string{"https://*.cdn.a.com"},
				FrameDomains:    []string{"https://embed.a.com"},
				BaseURIDomains:  []string{"https://base.a.com"},
			},
			"http://localhost:1234",
			"default-src 'none'; " +
				"script-src 'unsafe-inline' https://*.cdn.a.com; " +
				"style-src 'unsafe-inline' https://*.cdn.a.com; " +
				"img-src data: https://*.cdn.a.com; " +
				"media-src data: https://*.cdn.a.com; " +
				"font-src https://*.cdn.a.com; " +
				"connect-src https://api.a.com wss://rt.a.com:8443; " +
				"frame-src https://embed.a.com; " +
				"base-uri https://base.a.com; " +
				"form-action 'none'; object-src 'none'; " +
				"frame-ancestors http://localhost:1234; " +
				"sandbox allow-scripts allow-forms",
		},
		{
			"lowered and deduplicated",
			CSP{ConnectDomains: []string{"HTTPS://API.A.com", "https://api.a.com", "https://b.a.com"}},
			testOrigin,
			strings.Replace(defaultPolicy, "connect-src 'none'", "connect-src https://api.a.com https://b.a.com", 1),
		},
		{
			"invalid sources are dropped, never emitted",
			CSP{
				ConnectDomains:  []string{"https://a.com; script-src *", "'self'", "https://a.com\r\nX-Evil: 1"},
				ResourceDomains: []string{"*", "data:", "https://\u212A.example.com"},
				FrameDomains:    []string{"https://a.com,https://b.com"},
				BaseURIDomains:  []string{"https://a.com/path"},
			},
			testOrigin,
			defaultPolicy,
		},
		{"bad host origin: frame-ancestors 'none'", CSP{}, "https://evil.example/path",
			strings.Replace(defaultPolicy, "frame-ancestors http://127.0.0.1:8080", "frame-ancestors 'none'", 1)},
		{"injected host origin: frame-ancestors 'none'", CSP{}, "http://127.0.0.1:8080; script-src *",
			strings.Replace(defaultPolicy, "frame-ancestors http://127.0.0.1:8080", "frame-ancestors 'none'", 1)},
		{"public host origin: it frames", CSP{}, "https://mcphost.example.com",
			strings.Replace(defaultPolicy, "frame-ancestors http://127.0.0.1:8080", "frame-ancestors https://mcphost.example.com", 1)},
		{"injected public host origin: frame-ancestors 'none'", CSP{}, "https://mcphost.example.com 'unsafe-eval'",
			strings.Replace(defaultPolicy, "frame-ancestors http://127.0.0.1:8080", "frame-ancestors 'none'", 1)},
		{"bracketed host origin: frame-ancestors 'none'", CSP{}, "http://[::1]:8080",
			strings.Replace(defaultPolicy, "frame-ancestors http://127.0.0.1:8080", "frame-ancestors 'none'", 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Header(tt.csp, tt.origin)); diff != "" {
				t.Errorf("Header (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCheckAncestor: the hostOrigins that may frame the proxy, loopback
// or public: one CSP source each, in the form a browser serializes.
func TestCheckAncestor(t *testing.T) {
	valid := []string{
		"http://127.0.0.1:8080", "http://localhost:1", "https://mcphost.example.com", "http://shell.mcphost.test:8080",
		"https://a-b.example.com:8443", "https://10.0.0.7", "http://xn--bcher-kva.example",
	}
	invalid := []string{
		"", "null", "file://", "ws://example.com", "HTTPS://example.com", "https://Example.com",
		"https://example.com/", "https://example.com/x", "https://example.com?x", "https://example.com#x",
		"https://u@example.com", "https://[::1]:8080", "https://example.com:0", "https://example.com:080",
		"https://example.com:65536", "https://example.com:", "https://example.com:8080:9", "https://example.com.",
		"https://.example.com", "https://exa mple.com", "https://example.com;", "https://example.com,https://x.com",
		"https://example.com 'unsafe-inline'", "https://ex\u212Aample.com", "https://*.example.com",
		"https://127.0.0.1:8080", "http://localhost", "https://localhost:8080", "https://app.localhost",
		"http://127.0.0.2:8080", "http://0.0.0.0:8080", "http://127.0.0.1:08080",
	}
	for _, s := range valid {
		if err := checkAncestor(s); err != nil {
			t.Errorf("checkAncestor(%q) = %v, want nil", s, err)
		}
		if got := Header(CSP{}, s); !strings.Contains(got, "frame-ancestors "+s+";") {
			t.Errorf("Header with hostOrigin %q: %q, want it as frame-ancestors", s, got)
		}
	}
	for _, s := range invalid {
		if checkAncestor(s) == nil {
			t.Errorf("checkAncestor(%q) = nil, want an error", s)
		}
		if got := Header(CSP{}, s); !strings.Contains(got, "frame-ancestors 'none';") {
			t.Errorf("Header with hostOrigin %q: %q, want frame-ancestors 'none'", s, got)
		}
	}
}

func TestCheckHostOrigin(t *testing.T) {
	valid := []string{"http://127.0.0.1:8080", "http://localhost:1", "http://localhost:65535"}
	invalid := []string{
		"", "null", "file://", "file:///etc/passwd", "https://evil.example", "https://127.0.0.1:8080",
		"http://app.localhost:8080", "http://127.0.0.1:8080/", "http://127.0.0.1:8080/path",
		"http://[::1]:8080", "http://user@127.0.0.1:8080", "HTTP://127.0.0.1:8080",
		"http://LOCALHOST:8080", "http://127.0.0.1", "http://127.0.0.1:", "http://127.0.0.1:08080",
		"http://127.0.0.1:0", "http://127.0.0.1:65536", "http://127.0.0.1:8080 ",
		"http://127.0.0.1:8080\r\n", "http://127.0.0.1:8080?x", "http://127.0.0.1:8080#x",
		"http://127.0.0.1:8080:9", "http://localhost.:8080", "ws://localhost:8080",
		"http://loca\u212Chost:8080", "http://127.0.0.1.:8080", "http://0.0.0.0:8080",
	}
	for _, s := range valid {
		if err := checkHostOrigin(s); err != nil {
			t.Errorf("checkHostOrigin(%q) = %v, want nil", s, err)
		}
	}
	for _, s := range invalid {
		if checkHostOrigin(s) == nil {
			t.Errorf("checkHostOrigin(%q) = nil, want an error", s)
		}
	}
}
