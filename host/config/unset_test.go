package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
)

// TestUnsetEnvUnknown loads configs whose env() calls read variables that
// are not set, with Options.UnsetEnvUnknown: each call is a warning at the
// call, listed in Config.Unset, the rest of the file is still checked, and
// the value is never used as if it were known.
func TestUnsetEnvUnknown(t *testing.T) {
	opts := testOptions()
	opts.UnsetEnvUnknown = true
	type unset struct{ Call, Where, At string }
	tests := []struct {
		name   string
		src    string
		unset  []unset
		errors []string // summaries of the errors, in order
		check  func(t *testing.T, cfg *Config)
	}{{
		name: "server env and principal token",
		src: `server "github" {
  command = "npx"
  env = {
    GITHUB_TOKEN = env("GITHUB_TOKEN")
  }
}
principal "alice" {
  token = env("ALICE_TOKEN")
}
principal "bob" {
  token = env("MCPHOST_TEST_TOKEN")
}
`,
		unset: []unset{
			{`env("GITHUB_TOKEN")`, `"env" of server "github"`, "t.hcl:4:20"},
			{`env("ALICE_TOKEN")`, `"token" of principal "alice"`, "t.hcl:8:11"},
		},
		check: func(t *testing.T, cfg *Config) {
			if cfg.Servers[0].Command != "npx" || cfg.Servers[0].Env != nil {
				t.Errorf("server = %+v, want its command and no env", cfg.Servers[0])
			}
			if cfg.Principals[0].Token != "" {
				t.Errorf("alice's unknown token became %q", cfg.Principals[0].Token)
			}
			if cfg.Principals[1].Token != testToken {
				t.Errorf("bob's token = %q", cfg.Principals[1].Token)
			}
		},
	}, {
		name: "the rest is still checked",
		src: `server "s" {
  command = "x"
  args    = ["--token", "${env("S_TOKEN")}"]
  call_timeout = "soon"
}
log_level = env("LEVEL")
`,
		unset: []unset{
			{`env("S_TOKEN")`, `"args" of server "s"`, "t.hcl:3:28"},
			{`env("LEVEL")`, `"log_level"`, "t.hcl:6:13"},
		},
		errors: []string{"Invalid duration"},
	}, {
		name: "a default is used, a set variable read",
		src:  "log_level = env(\"LEVEL\", \"warn\")\nprincipal \"p\" {\n  token = env(\"MCPHOST_TEST_TOKEN\")\n}\n",
	}, {
		name: "a name read with env() is not shown",
		src: `principal "p" {
  token = env(env("MCPHOST_TEST_TOKEN"))
}
`,
		unset: []unset{{`env(...)`, `"token" of principal "p"`, "t.hcl:2:11"}},
	}, {
		name: "an unknown policy leaves the set uncompiled",
		src: `policy "p" {
  phase  = "call"
  effect = "deny"
  when   = env("RULE")
}
`,
		unset: []unset{{`env("RULE")`, `"when" of policy "p"`, "t.hcl:4:12"}},
		check: func(t *testing.T, cfg *Config) {
			if cfg.PolicySet != nil {
				t.Error("a policy set was compiled without the rule's condition")
			}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, diags := Parse([]byte(tt.src), "t.hcl", opts)
			var got []unset
			for _, u := range cfg.Unset {
				got = append(got, unset{u.Call, u.Where(), rangeStart(u.Range)})
			}
			if diff := cmp.Diff(tt.unset, got); diff != "" {
				t.Errorf("Unset (-want +got):\n%s", diff)
			}
			var warned, errs []string
			for _, d := range diags {
				if d.Severity == hcl.DiagError {
					errs = append(errs, d.Summary)
					continue
				}
				if d.Summary == "Environment variable not set" {
					warned = append(warned, rangeStart(*d.Subject))
					if !strings.Contains(d.Detail, "serve needs it for") {
						t.Errorf("detail %q does not say what needs it", d.Detail)
					}
				}
			}
			var want []string
			for _, u := range tt.unset {
				want = append(want, u.At)
			}
			if diff := cmp.Diff(want, warned); diff != "" {
				t.Errorf("warnings (-want +got):\n%s%s", diff, diagText(diags))
			}
			if diff := cmp.Diff(tt.errors, errs); diff != "" {
				t.Errorf("errors (-want +got):\n%s%s", diff, diagText(diags))
			}
			if tt.check != nil {
				tt.check(t, cfg)
			}

			// Without the option, each is an error, as serve needs.
			_, strict := Parse([]byte(tt.src), "t.hcl", testOptions())
			n := 0
			for _, d := range strict {
				if d.Severity == hcl.DiagError && d.Summary == "Environment variable not set" {
					n++
				}
			}
			if n != len(tt.unset) {
				t.Errorf("without UnsetEnvUnknown: %d errors about unset variables, want %d%s", n, len(tt.unset), diagText(strict))
			}

			// StrictUnset (validate -strict) makes the warnings errors.
			StrictUnset(diags)
			n = 0
			for _, d := range diags {
				if d.Summary == "Environment variable not set" && d.Severity != hcl.DiagError {
					t.Errorf("StrictUnset left a warning: %s", d.Error())
				}
				if d.Severity == hcl.DiagError {
					n++
				}
			}
			if n != len(tt.unset)+len(tt.errors) {
				t.Errorf("after StrictUnset: %d errors, want %d", n, len(tt.unset)+len(tt.errors))
			}
		})
	}
}

func rangeStart(r hcl.Range) string {
	return fmt.Sprintf("%s:%d:%d", r.Filename, r.Start.Line, r.Start.Column)
}
