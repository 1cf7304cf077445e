package config

import "testing"

func TestSessionModeSettings(t *testing.T) {
	tests := []struct {
		name, attrs string
		mode        string
		max, share  int
		diag        string // summary of the one error, or ""
	}{
		{"defaults", "", SessionShared, DefaultMaxClientSessions, 4, ""},
		{"shared", `session_mode = "shared"`, SessionShared, DefaultMaxClientSessions, 4, ""},
		{"per client", `session_mode = "per_client"`, SessionPerClient, DefaultMaxClientSessions, 4, ""},
		{"per client capped", "session_mode = \"per_client\"\n  max_client_sessions = 4", SessionPerClient, 4, 1, ""},
		{"share of a small cap", "session_mode = \"per_client\"\n  max_client_sessions = 2", SessionPerClient, 2, 1, ""},
		{"share of a large cap", "session_mode = \"per_client\"\n  max_client_sessions = 100", SessionPerClient, 100, 25, ""},
		{"share set", "session_mode = \"per_client\"\n  max_client_sessions_per_principal = 16", SessionPerClient, DefaultMaxClientSessions, 16, ""},
		{"unknown mode", `session_mode = "per_user"`, SessionShared, DefaultMaxClientSessions, 4, "Invalid session_mode"},
		{"cap without per client", "max_client_sessions = 4", SessionShared, DefaultMaxClientSessions, 4, `Argument only with session_mode = "per_client"`},
		{"cap zero", "session_mode = \"per_client\"\n  max_client_sessions = 0", SessionPerClient, DefaultMaxClientSessions, 4, "Invalid max_client_sessions"},
		{"cap too large", "session_mode = \"per_client\"\n  max_client_sessions = 5000", SessionPerClient, DefaultMaxClientSessions, 4, "Invalid max_client_sessions"},
		{"share without per client", "max_client_sessions_per_principal = 2", SessionShared, DefaultMaxClientSessions, 4, `Argument only with session_mode = "per_client"`},
		{"share zero", "session_mode = \"per_client\"\n  max_client_sessions_per_principal = 0", SessionPerClient, DefaultMaxClientSessions, 4, "Invalid max_client_sessions_per_principal"},
		{"share above the cap", "session_mode = \"per_client\"\n  max_client_sessions = 4\n  max_client_sessions_per_principal = 5", SessionPerClient, 4, 1, "Invalid max_client_sessions_per_principal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "server \"a\" {\n  command = \"x\"\n  " + tt.attrs + "\n}\n"
			cfg, diags := Parse([]byte(src), "s.hcl", Options{Executable: testExecutable})
			if tt.diag == "" {
				if diags.HasErrors() {
					t.Fatal(diags)
				}
				if s := cfg.Servers[0]; s.SessionMode != tt.mode || s.MaxClientSessions != tt.max || s.MaxClientSessionsPerPrincipal != tt.share {
					t.Fatalf("session_mode %q, max_client_sessions %d, max_client_sessions_per_principal %d; want %q, %d, %d",
						s.SessionMode, s.MaxClientSessions, s.MaxClientSessionsPerPrincipal, tt.mode, tt.max, tt.share)
				}
				return
			}
			if len(diags) != 1 || diags[0].Summary != tt.diag || diags[0].Subject == nil || diags[0].Subject.Start.Line < 3 {
				t.Fatalf("diagnostics %v, want one %q on the attribute's line", diags, tt.diag)
			}
		})
	}
}

func TestLogMessagesSetting(t *testing.T) {
	tests := []struct {
		name, attrs string
		want        string
		diag        string // summary of the one error, or ""
	}{
		{"default", "", LogMessagesOwn, ""},
		{"own", `log_messages = "own"`, LogMessagesOwn, ""},
		{"all", `log_messages = "all"`, LogMessagesAll, ""},
		{"unknown", `log_messages = "everyone"`, LogMessagesOwn, "Invalid log_messages"},
		{"not a string", `log_messages = ["all"]`, LogMessagesOwn, "Incorrect attribute value type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "server \"a\" {\n  command = \"x\"\n  " + tt.attrs + "\n}\n"
			cfg, diags := Parse([]byte(src), "s.hcl", Options{Executable: testExecutable})
			if tt.diag == "" {
				if diags.HasErrors() {
					t.Fatal(diags)
				}
				if got := cfg.Servers[0].LogMessages; got != tt.want {
					t.Fatalf("log_messages %q, want %q", got, tt.want)
				}
				return
			}
			if len(diags) != 1 || diags[0].Summary != tt.diag || diags[0].Subject == nil || diags[0].Subject.Start.Line != 3 {
				t.Fatalf("diagnostics %v, want one %q on line 3", diags, tt.diag)
			}
		})
	}
}
