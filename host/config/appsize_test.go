package config

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hashicorp/hcl/v2"
)

// loadApp loads one stdio server with the attribute line attr and returns
// that server and the diagnostics.
func loadApp(t *testing.T, attr string) (*Server, hcl.Diagnostics) {
	t.Helper()
	src := "server \"s\" {\n  command = \"s\"\n  " + attr + "\n}\n"
	cfg, diags := Load(fstest.MapFS{"m.hcl": {Data: []byte(src)}}, "m.hcl", testOptions())
	if cfg == nil || len(cfg.Servers) != 1 {
		return nil, diags
	}
	return &cfg.Servers[0], diags
}

// TestAppResourceMaxBytesBounds: app_resource_max_bytes takes bytes or a
// size up to 16 MiB (the official PDF App is 4.3 MB); one byte more is an
// error whose subject is the value, so the operator sees the line.
func TestAppResourceMaxBytesBounds(t *testing.T) {
	for _, tc := range []struct {
		attr    string
		want    int
		summary string
	}{
		{attr: `app_resource_max_bytes = 16777216`, want: 16 << 20},
		{attr: `app_resource_max_bytes = "16MiB"`, want: 16 << 20},
		{attr: `app_resource_max_bytes = "4500KiB"`, want: 4500 << 10},
		{attr: `app_resource_max_bytes = 5000000`, want: 5000000},
		{attr: `app_resource_max_bytes = "1048576"`, want: 1 << 20},
		{attr: `app_resource_max_bytes = 16777217`, summary: "App resource size too large"},
		{attr: `app_resource_max_bytes = "17MiB"`, summary: "App resource size too large"},
		{attr: `app_resource_max_bytes = 1e30`, summary: "App resource size too large"},
		{attr: `app_resource_max_bytes = "16 MiB please"`, summary: "Invalid size"},
		{attr: `app_resource_max_bytes = 2.5`, summary: "Invalid number"},
		{attr: `app_resource_max_bytes = true`, summary: "Incorrect attribute value type"},
		{attr: `app_resource_max_bytes = 0`, want: 1, summary: "App resource size clamped"},
	} {
		t.Run(tc.attr, func(t *testing.T) {
			s, diags := loadApp(t, tc.attr)
			if tc.summary == "" {
				if len(diags) > 0 || s == nil {
					t.Fatalf("diagnostics: %s", diagText(diags))
				}
				if s.AppResourceMaxBytes != tc.want {
					t.Fatalf("AppResourceMaxBytes = %d, want %d", s.AppResourceMaxBytes, tc.want)
				}
				return
			}
			if len(diags) != 1 || diags[0].Summary != tc.summary {
				t.Fatalf("diagnostics: %s, want one %q", diagText(diags), tc.summary)
			}
			d := diags[0]
			// The subject is the value: line 3, after "app_resource_max_bytes = ".
			if d.Subject == nil || d.Subject.Start.Line != 3 || d.Subject.Start.Column != 28 {
				t.Errorf("subject %v, want the value at m.hcl:3,28", d.Subject)
			}
			if tc.summary == "App resource size too large" && !strings.Contains(d.Detail, "16MiB (16777216 bytes)") {
				t.Errorf("detail %q does not name the bound", d.Detail)
			}
			if d.Severity == hcl.DiagWarning && s != nil && s.AppResourceMaxBytes != tc.want {
				t.Errorf("AppResourceMaxBytes = %d, want %d", s.AppResourceMaxBytes, tc.want)
			}
		})
	}
}

// TestAppCSPUnsafeEval: the switch is off unless the server sets it, and
// only a boolean is accepted.
func TestAppCSPUnsafeEval(t *testing.T) {
	if s, diags := loadApp(t, "apps = \"auto\""); len(diags) > 0 || s.AppCSPUnsafeEval {
		t.Fatalf("default: AppCSPUnsafeEval %v, diagnostics %s", s != nil && s.AppCSPUnsafeEval, diagText(diags))
	}
	if s, diags := loadApp(t, "app_csp_unsafe_eval = true"); len(diags) > 0 || !s.AppCSPUnsafeEval {
		t.Fatalf("set: AppCSPUnsafeEval %v, diagnostics %s", s != nil && s.AppCSPUnsafeEval, diagText(diags))
	}
	if _, diags := loadApp(t, `app_csp_unsafe_eval = "please"`); len(diags) != 1 || diags[0].Summary != "Incorrect attribute value type" || diags[0].Subject.Start.Line != 3 {
		t.Fatalf("a string: %s, want one type error on line 3", diagText(diags))
	}
}
