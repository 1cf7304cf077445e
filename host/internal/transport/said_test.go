package transport

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// TestSaid: the line that says why a server failed, as launchers and
// runtimes print it, is found among their noise.
func TestSaid(t *testing.T) {
	tests := []struct {
		name string
		tail []string
		want string
	}{
		{"npm 404 with notices after it", []string{
			"npm error code E404",
			"npm error 404 Not Found - GET https://registry.example/@acme%2fnope - Not found",
			"npm error 404  '@acme/nope@*' is not in this registry.",
			"npm error A complete log of this run can be found in: /root/.npm/_logs/2026-12-03T21_14_05_123Z-debug-0.log",
			"npm notice New minor version of npm available! 10.8.2 -> 10.9.0",
			"npm notice To update run: npm install -g npm@10.9.0",
		}, "npm error 404 Not Found - GET https://registry.example/@acme%2fnope - Not found"},
		{"python traceback", []string{
			"Traceback (most recent call last):",
			`  File "/srv/server.py", line 3, in <module>`,
			"    import nothere",
			"ModuleNotFoundError: No module named 'nothere'",
		}, "ModuleNotFoundError: No module named 'nothere'"},
		{"node", []string{
			"node:internal/modules/cjs/loader:1228",
			"  throw err;",
			"Error: Cannot find module '/srv/index.js'",
			"    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)",
		}, "Error: Cannot find module '/srv/index.js'"},
		{"go panic", []string{"panic: runtime error: index out of range [1] with length 1", "", "goroutine 1 [running]:"}, "panic: runtime error: index out of range [1] with length 1"},
		{"nothing telling", []string{"listening on stdio", "bye"}, ""},
		{"only noise", []string{"npm notice New minor version of npm available! 10.8.2 -> 10.9.0"}, ""},
		{"empty", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Said(tt.tail); got != tt.want {
				t.Errorf("Said = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestWithStderrLeadsWithWhatTheServerSaid: the error starts with the
// server's own reason, keeps mcphost's, and quotes no launcher notice.
func TestWithStderrLeadsWithWhatTheServerSaid(t *testing.T) {
	l := NewStderrLog(slog.New(slog.DiscardHandler), NewStderrLimiter(slog.New(slog.DiscardHandler)))
	for _, line := range []string{
		"npm error code E404",
		"npm error 404 Not Found - GET https://registry.example/nope - Not found",
		"npm error A complete log of this run can be found in: /root/.npm/_logs/2026-12-03T21_14_05_123Z-debug-0.log",
		"npm notice New minor version of npm available! 10.8.2 -> 10.9.0",
	} {
		_, _ = l.Write([]byte(line + "\n"))
	}
	base := errors.New(`connect: calling "initialize": EOF`)
	err := WithStderr(base, l)
	var said *SaidError
	if !errors.As(err, &said) || !errors.Is(err, base) {
		t.Fatalf("WithStderr = %#v, want a *SaidError wrapping the failure", err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "npm error 404 Not Found - GET https://registry.example/nope - Not found — connect: ") {
		t.Errorf("the error does not lead with the server's line: %s", msg)
	}
	if strings.Contains(msg, "npm notice") || strings.Contains(msg, "_logs") {
		t.Errorf("the error quotes npm's noise: %s", msg)
	}
}
