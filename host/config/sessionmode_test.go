package config

import "testing"

func TestSessionModeSettings(t *testing.T) {
	tests := []struct {
		name, attrs string
		mode        string
		max         int
		diag        string // summary of the one error, or ""
	}{
		{"defaults", "", SessionShared, DefaultMaxClientSessions, ""},
		{"shared", `session_mode = "shared"`, SessionShared, DefaultMaxClientSessions, ""},
		{"per client", `session_mode = "per_client"`, SessionPerClient, DefaultMaxClientSessions, ""},
		{"per client capped", "session_mode = \"per_client\"\n  max_client_sessions = 4", SessionPerClient, 4, ""},
		{"unknown mode", `session_mode = "per_user"`, SessionShared, DefaultMaxClientSessions, "Invalid session_mode"},
		{"cap without per client", "max_client_sessions = 4", SessionShared, DefaultMaxClientSessions, `Argument only with session_mode = "per_client"`},
		{"cap zero", "session_mode = \"per_client\"\n  max_client_sessions = 0", SessionPerClient, DefaultMaxClientSessions, "Invalid max_client_sessions"},
		{"cap too large", "session_mode = \"per_client\"\n  max_client_sessions = 5000", SessionPerClient, DefaultMaxClientSessions, "Invalid max_client_sessions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "server \"a\" {\n  command = \"x\"\n  " + tt.attrs + "\n}\n"
			cfg, diags := Parse([]byte(src), "s.hcl", Options{Executable: testExecutable})
			if tt.diag == "" {
				if diags.HasErrors() {
					t.Fatal(diags)
				}
				if s := cfg.Servers[0]; s.SessionMode != tt.mode || s.MaxClientSessions != tt.max {
					t.Fatalf("session_mode %q, max_client_sessions %d; want %q, %d", s.SessionMode, s.MaxClientSessions, tt.mode, tt.max)
				}
				return
			}
			if len(diags) != 1 || diags[0].Summary != tt.diag || diags[0].Subject == nil || diags[0].Subject.Start.Line < 3 {
				t.Fatalf("diagnostics %v, want one %q on the attribute's line", diags, tt.diag)
			}
		})
	}
}
