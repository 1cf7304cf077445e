package upstream

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/config"
)

func TestLauncherOf(t *testing.T) {
	tests := []struct {
		s    config.Server
		want string
	}{
		{config.Server{Transport: config.TransportStdio, Command: "npx", Args: []string{"-y", "@acme/server"}}, "npx"},
		{config.Server{Transport: config.TransportStdio, Command: "/usr/local/bin/uvx", Args: []string{"mcp-server-time"}}, "uvx"},
		{config.Server{Transport: config.TransportStdio, Command: "pnpm", Args: []string{"dlx", "@acme/server"}}, "pnpm dlx"},
		{config.Server{Transport: config.TransportStdio, Command: "pnpm", Args: []string{"run", "server"}}, ""},
		{config.Server{Transport: config.TransportStdio, Command: "node", Args: []string{"server.js"}}, ""},
		{config.Server{Transport: config.TransportStreamableHTTP, URL: "http://127.0.0.1:1/mcp"}, ""},
	}
	for _, tt := range tests {
		if got := launcherOf(&tt.s); got != tt.want {
			t.Errorf("launcherOf(%s %v) = %q, want %q", tt.s.Command, tt.s.Args, got, tt.want)
		}
	}
}

// TestHintLauncher: only a connect of a package runner's server that ran
// out of discovery_timeout gets the download hint.
func TestHintLauncher(t *testing.T) {
	npx := config.Server{Transport: config.TransportStdio, Command: "npx", DiscoveryTimeout: 3 * time.Second}
	node := config.Server{Transport: config.TransportStdio, Command: "node"}
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	live := context.Background()
	base := errors.New("initialize: no answer within 3s")
	if err := hintLauncher(expired, live, base, &npx); !errors.Is(err, base) || !strings.Contains(err.Error(), "npx may still have been downloading the package") || !strings.Contains(err.Error(), "discovery_timeout (now 3s)") {
		t.Errorf("npx, timed out: %v", err)
	}
	if err := hintLauncher(expired, live, base, &node); err != base {
		t.Errorf("node, timed out: %v, want the error unchanged", err)
	}
	if err := hintLauncher(live, live, base, &npx); err != base {
		t.Errorf("npx, not timed out: %v, want the error unchanged", err)
	}
}
