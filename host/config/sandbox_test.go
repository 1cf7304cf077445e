package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
)

func TestSandboxInheritEnv(t *testing.T) {
	tests := []struct {
		name, src string
		top       []string            // Config.Sandbox.InheritEnv
		servers   map[string][]string // Server.Sandbox.InheritEnv by name
	}{
		{
			name:    "none",
			src:     "server \"a\" {\n  command = \"x\"\n}\n",
			servers: map[string][]string{"a": nil},
		},
		{
			name:    "top level only",
			src:     "sandbox {\n  inherit_env = [\"LANG\", \"TZ\"]\n}\nserver \"a\" {\n  command = \"x\"\n}\n",
			top:     []string{"LANG", "TZ"},
			servers: map[string][]string{"a": {"LANG", "TZ"}},
		},
		{
			name:    "server adds to the top level",
			src:     "sandbox {\n  inherit_env = [\"LANG\"]\n}\nserver \"a\" {\n  command = \"x\"\n  sandbox {\n    inherit_env = [\"TZ\", \"LANG\"]\n  }\n}\nserver \"b\" {\n  command = \"y\"\n}\n",
			top:     []string{"LANG"},
			servers: map[string][]string{"a": {"LANG", "TZ"}, "b": {"LANG"}},
		},
		{
			name:    "defaults and duplicates are dropped",
			src:     "sandbox {\n  inherit_env = [\"PATH\", \"LANG\", \"LANG\", \"HOME\"]\n}\nserver \"a\" {\n  command = \"x\"\n  sandbox {}\n}\n",
			top:     []string{"LANG"},
			servers: map[string][]string{"a": {"LANG"}},
		},
		{
			name:    "a remote server gets nothing",
			src:     "sandbox {\n  inherit_env = [\"LANG\"]\n}\nserver \"r\" {\n  url = \"https://mcp.example.com/mcp\"\n}\n",
			top:     []string{"LANG"},
			servers: map[string][]string{"r": nil},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, diags := Parse([]byte(tt.src), "s.hcl", Options{Executable: testExecutable, LookupEnv: testEnv()})
			if len(diags) > 0 {
				t.Fatalf("diagnostics:%s", diagText(diags))
			}
			if diff := cmp.Diff(tt.top, cfg.Sandbox.InheritEnv); diff != "" {
				t.Errorf("top-level inherit_env (-want +got):\n%s", diff)
			}
			for name, want := range tt.servers {
				if diff := cmp.Diff(want, cfg.Server(name).Sandbox.InheritEnv); diff != "" {
					t.Errorf("server %s inherit_env (-want +got):\n%s", name, diff)
				}
			}
		})
	}
}

// TestReservedEnvRange checks that each MCPHOST_ name is an error whose
// subject is exactly the name as written: the list element, or the key of
// the env object.
func TestReservedEnvRange(t *testing.T) {
	type span struct{ Line, StartCol, EndCol int }
	tests := []struct {
		name, src string
		want      []span
	}{
		{
			name: "top-level inherit_env",
			src:  "sandbox {\n  inherit_env = [\"LANG\", \"MCPHOST_SECRET_KEY\"]\n}\n",
			want: []span{{2, 26, 46}},
		},
		{
			name: "server inherit_env over lines",
			src:  "server \"a\" {\n  command = \"x\"\n  sandbox {\n    inherit_env = [\n      \"TZ\",\n      \"MCPHOST_TOKEN\",\n    ]\n  }\n}\n",
			want: []span{{6, 7, 22}},
		},
		{
			name: "env key",
			src:  "server \"a\" {\n  command = \"x\"\n  env = {\n    FOO = \"1\"\n    MCPHOST_SECRET_KEY = \"k\"\n  }\n}\n",
			want: []span{{5, 5, 23}},
		},
		{
			name: "quoted env key",
			src:  "server \"a\" {\n  command = \"x\"\n  env = { \"MCPHOST_CLUSTER_SECRET\" = \"s\" }\n}\n",
			want: []span{{3, 11, 35}},
		},
		{
			name: "both, in file order",
			src:  "sandbox {\n  inherit_env = [\"MCPHOST_A\"]\n}\nserver \"a\" {\n  command = \"x\"\n  env = { MCPHOST_B = \"b\" }\n}\n",
			want: []span{{2, 18, 29}, {6, 11, 20}},
		},
		{
			// Names are case-sensitive, and mcphost's own are upper case.
			name: "case matters",
			src:  "sandbox {\n  inherit_env = [\"mcphost_notes\"]\n}\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := Parse([]byte(tt.src), "s.hcl", Options{Executable: testExecutable, LookupEnv: testEnv()})
			var got []span
			for _, d := range diags {
				if d.Severity != hcl.DiagError || d.Summary != "Reserved environment variable" || d.Subject == nil {
					t.Errorf("unexpected diagnostic: %s", d.Error())
					continue
				}
				if d.Subject.Filename != "s.hcl" || d.Subject.End.Line != d.Subject.Start.Line {
					t.Errorf("subject %s is not one line of s.hcl", d.Subject)
				}
				got = append(got, span{d.Subject.Start.Line, d.Subject.Start.Column, d.Subject.End.Column})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("reserved-name subjects (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInheritedEnv(t *testing.T) {
	s := Server{Sandbox: Sandbox{InheritEnv: []string{"LANG", "PATH", "MCPHOST_SECRET_KEY", "TZ"}}}
	want := []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "TZ"}
	if diff := cmp.Diff(want, s.InheritedEnv()); diff != "" {
		t.Errorf("InheritedEnv (-want +got):\n%s", diff)
	}
	// A Server built by hand, not loaded, still gets the defaults.
	var zero Server
	if diff := cmp.Diff(DefaultInheritEnv(), zero.InheritedEnv()); diff != "" {
		t.Errorf("InheritedEnv of a zero Server (-want +got):\n%s", diff)
	}
}
