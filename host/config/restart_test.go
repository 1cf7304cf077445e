package config

import (
	"testing"
	"time"
)

func TestRestartSettings(t *testing.T) {
	tests := []struct {
		name, attrs string
		max         int
		backoff     time.Duration
		diag        string // summary of the one error, or ""
	}{
		{"defaults", "", 0, DefaultRestartBackoffMax, ""},
		{"both", "max_restarts = 5\n  restart_backoff_max = \"30s\"", 5, 30 * time.Second, ""},
		{"negative", "max_restarts = -1", 0, DefaultRestartBackoffMax, "Invalid max_restarts"},
		{"fraction", "max_restarts = 1.5", 0, DefaultRestartBackoffMax, "Invalid number"},
		{"backoff too short", "restart_backoff_max = \"10ms\"", 0, DefaultRestartBackoffMax, "Invalid restart_backoff_max"},
		{"backoff too long", "restart_backoff_max = \"2h\"", 0, DefaultRestartBackoffMax, "Invalid restart_backoff_max"},
		{"backoff not a duration", "restart_backoff_max = \"often\"", 0, DefaultRestartBackoffMax, "Invalid duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "server \"a\" {\n  command = \"x\"\n  " + tt.attrs + "\n}\n"
			cfg, diags := Parse([]byte(src), "r.hcl", Options{Executable: testExecutable})
			if tt.diag == "" {
				if diags.HasErrors() {
					t.Fatal(diags)
				}
				if s := cfg.Servers[0]; s.MaxRestarts != tt.max || s.RestartBackoffMax != tt.backoff {
					t.Fatalf("max_restarts %d, restart_backoff_max %s; want %d, %s", s.MaxRestarts, s.RestartBackoffMax, tt.max, tt.backoff)
				}
				return
			}
			if len(diags) != 1 || diags[0].Summary != tt.diag || diags[0].Subject == nil || diags[0].Subject.Start.Line != 3 {
				t.Fatalf("diagnostics %v, want one %q at line 3", diags, tt.diag)
			}
		})
	}
}
