package config

import "testing"

func TestPlacementSettings(t *testing.T) {
	tests := []struct {
		name, attrs string
		placement   string
		diag        string // summary of the one error, or ""
	}{
		{"default", "", PlacementReplica, ""},
		{"replica", `placement = "replica"`, PlacementReplica, ""},
		{"singleton", `placement = "singleton"`, PlacementSingleton, ""},
		{"unknown", `placement = "leader"`, PlacementReplica, "Invalid placement"},
		{"with per-client sessions", "session_mode = \"per_client\"\n  placement = \"singleton\"", PlacementReplica, `placement = "singleton" with session_mode = "per_client"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "server \"a\" {\n  command = \"x\"\n  " + tt.attrs + "\n}\n"
			cfg, diags := Parse([]byte(src), "s.hcl", Options{Executable: testExecutable})
			if tt.diag == "" {
				if diags.HasErrors() {
					t.Fatal(diags)
				}
				if got := cfg.Servers[0].Placement; got != tt.placement {
					t.Fatalf("placement %q, want %q", got, tt.placement)
				}
				return
			}
			if len(diags) != 1 || diags[0].Summary != tt.diag || diags[0].Subject == nil || diags[0].Subject.Start.Line < 3 {
				t.Fatalf("diagnostics %v, want one %q on the attribute's line", diags, tt.diag)
			}
		})
	}
}
