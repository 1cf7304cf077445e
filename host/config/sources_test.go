package config

import (
	"bytes"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// TestNoFunctionValuesInDiagnostics feeds every kind of value diagnostic a
// value from env() and from file(), and checks that the value reaches none
// of the renderings: the CLI's text (WriteText), HCL's text writer and
// `mcphost validate -json` (DiagnosticsJSON). The diagnostic names the call
// instead. SOURCE in src stands for the call.
func TestNoFunctionValuesInDiagnostics(t *testing.T) {
	const (
		stdio  = "server \"s\" {\n  command = \"x\"\n  %s\n}\n"
		remote = "server \"s\" {\n  url = \"https://x.example.com/mcp\"\n  %s\n}\n"
		plugin = "plugin \"p\" {\n  path   = \"p.wasm\"\n  stages = [\"result\"]\n  %s\n}\n"
		policy = "policy \"p\" {\n  phase  = \"call\"\n  effect = \"deny\"\n  when   = \"true\"\n  %s\n}\n"
	)
	in := func(block, attr string) string { return strings.Replace(block, "%s", attr, 1) }
	tests := []struct {
		name    string
		secret  string   // what env() and file() return: wrong for the attribute, and not in the file
		leaks   []string // parts of secret that must not show either
		src     string
		summary string
		unnamed bool // the diagnostic quotes no value and need not name the call
	}{
		{name: "listen", secret: "s3cret-listen", src: "listen = SOURCE\n", summary: "Invalid listen address"},
		{name: "listen port", secret: "127.0.0.1:s3cret", src: "listen = SOURCE\n", summary: "Invalid listen address", leaks: []string{"s3cret"}},
		{name: "log_level", secret: "s3cret-level", src: "log_level = SOURCE\n", summary: "Invalid log level"},
		{name: "app_compact_after", secret: "s3cret-after", src: "app_compact_after = SOURCE\n", summary: "Invalid app_compact_after"},
		{name: "app_compact_session_bytes", secret: "-7654321", src: "app_compact_session_bytes = SOURCE\n", summary: "Invalid app_compact_session_bytes"},
		{name: "transport", secret: "s3cret-transport", src: in(remote, "transport = SOURCE"), summary: "Invalid transport"},
		{name: "url scheme", secret: "s3cretscheme://host/mcp", src: "server \"s\" {\n  url = SOURCE\n}\n", summary: "Invalid URL", leaks: []string{"s3cretscheme"}},
		{name: "url escape", secret: "https://host/%s3cret", src: "server \"s\" {\n  url = SOURCE\n}\n", summary: "Invalid URL", leaks: []string{"s3cret"}},
		{name: "version_negotiation", secret: "s3cret-negotiation", src: in(stdio, "version_negotiation = SOURCE"), summary: "Invalid version negotiation"},
		{name: "stdio_probe", secret: "s3cret-probe", src: in(stdio, "stdio_probe = SOURCE"), summary: "Invalid stdio probe"},
		{name: "http_probe_timeout", secret: "s3cret-probe", src: in(remote, "http_probe_timeout = SOURCE"), summary: "Invalid HTTP probe timeout"},
		{name: "apps", secret: "s3cret-apps", src: in(stdio, "apps = SOURCE"), summary: "Invalid apps setting"},
		{name: "app_resource_max_bytes", secret: "987654321", src: in(stdio, "app_resource_max_bytes = SOURCE"), summary: "App resource size too large"},
		{name: "app_resource_max_bytes size", secret: "s3cretMiB", src: in(stdio, "app_resource_max_bytes = SOURCE"), summary: "Invalid size", leaks: []string{"s3cret"}},
		{name: "app_resource_timeout", secret: "987654h", src: in(stdio, "app_resource_timeout = SOURCE"), summary: "App resource timeout clamped"},
		{name: "discovery_timeout", secret: "s3cret-duration", src: in(stdio, "discovery_timeout = SOURCE"), summary: "Invalid duration"},
		{name: "discovery_timeout clamped", secret: "987654h", src: in(stdio, "discovery_timeout = SOURCE"), summary: "Discovery timeout clamped"},
		{name: "call_timeout", secret: "s3cret-duration", src: in(stdio, "call_timeout = SOURCE"), summary: "Invalid duration"},
		{name: "call_timeout negative", secret: "-987654h", src: in(stdio, "call_timeout = SOURCE"), summary: "Invalid call timeout"},
		{name: "plugin stage", secret: "s3cret-stage", src: "plugin \"p\" {\n  path   = \"p.wasm\"\n  stages = [SOURCE]\n}\n", summary: "Invalid plugin stage"},
		{name: "plugin pattern", secret: "[s3cret", src: in(plugin, "tools = [SOURCE]"), summary: "Invalid pattern"},
		{name: "plugin timeout", secret: "987654h", src: in(plugin, "timeout = SOURCE"), summary: "Invalid plugin timeout"},
		{name: "plugin memory_limit", secret: "s3cretMiB", src: in(plugin, "memory_limit = SOURCE"), summary: "Invalid memory limit", leaks: []string{"s3cret"}},
		{name: "plugin memory_limit range", secret: "987654GiB", src: in(plugin, "memory_limit = SOURCE"), summary: "Invalid memory limit"},
		{name: "plugin pool_size", secret: "7654321", src: in(plugin, "pool_size = SOURCE"), summary: "Invalid pool size"},
		{name: "plugin on_error", secret: "s3cret-onerror", src: in(plugin, "on_error = SOURCE"), summary: "Invalid on_error"},
		{name: "policies default", secret: "s3cret-default", src: "policies {\n  default = SOURCE\n}\n", summary: "Invalid policy default"},
		{name: "store sync", secret: "s3cret-sync", src: "store {\n  sync = SOURCE\n}\n", summary: "Invalid store sync"},
		{name: "policy phase", secret: "s3cret-phase", src: "policy \"p\" {\n  phase  = SOURCE\n  effect = \"deny\"\n  when   = \"true\"\n}\n", summary: "Invalid policy phase"},
		{name: "policy effect", secret: "s3cret-effect", src: "policy \"p\" {\n  phase  = \"call\"\n  effect = SOURCE\n  when   = \"true\"\n}\n", summary: "Invalid policy effect"},
		{name: "policy when undeclared", secret: "s3cret_ident == 1", src: "policy \"p\" {\n  phase  = \"call\"\n  effect = \"deny\"\n  when   = SOURCE\n}\n", summary: "Undeclared variable in policy", leaks: []string{"s3cret_ident"}},
		{name: "policy when syntax", secret: "tool.s3cret((", src: "policy \"p\" {\n  phase  = \"call\"\n  effect = \"deny\"\n  when   = SOURCE\n}\n", summary: "Syntax error in policy", leaks: []string{"s3cret"}},
		{name: "principal token too short", secret: "s3cr", src: "principal \"a\" {\n  token = SOURCE\n}\n", summary: "Token too short", unnamed: true},
		{name: "inherit_env reserved", secret: "MCPHOST_S3CRET", src: "sandbox {\n  inherit_env = [SOURCE]\n}\n", summary: "Reserved environment variable"},
		{name: "inherit_env pattern", secret: "S3CRET_*", src: in(stdio, "sandbox {\n    inherit_env = [\"TZ\", SOURCE]\n  }"), summary: "Invalid environment variable name"},
		{name: "env key reserved", secret: "MCPHOST_S3CRET", src: in(stdio, "env = { (SOURCE) = \"v\" }"), summary: "Reserved environment variable"},
		{name: "duplicate token", secret: "s3cret-token-0123456789", src: "principal \"a\" {\n  token = SOURCE\n}\nprincipal \"b\" {\n  token = SOURCE\n}\n", summary: "Duplicate token", unnamed: true},

		// HCL's own diagnostics, and the conversion to the attribute's type.
		{name: "bool conversion", secret: "s3cret-bool", src: in(stdio, "enabled = SOURCE"), summary: "Incorrect attribute value type"},
		{name: "number conversion", secret: "s3cret-number", src: "app_compact_session_bytes = SOURCE\n", summary: "Incorrect attribute value type"},
		{name: "list conversion", secret: "s3cret-list", src: in(stdio, "args = SOURCE"), summary: "Incorrect attribute value type"},
		{name: "map key in a conversion error", secret: "S3CRET_KEY", src: in(stdio, "env = { (SOURCE) = [1] }"), summary: "Incorrect attribute value type"},
		// (A for expression's duplicate key could quote a value too; for
		// expressions are refused before evaluation: TestForExpressionsRefused.)
		{name: "for expression", secret: "s3cret-key", src: "log_level = {for x in [SOURCE, SOURCE]: x => 1}\n", summary: "For expressions are not supported", unnamed: true},
		{name: "operand", secret: "s3cret-operand", src: "log_level = SOURCE + 1\n", summary: "Invalid operand", unnamed: true},
		{name: "template condition", secret: "s3cret-cond", src: "log_level = \"%{ if SOURCE }x%{ endif }\"\n", summary: "Incorrect condition type", unnamed: true},

		// A name or path read with env() or file().
		{name: "env() of a name", secret: "S3CRET_NAME", src: "log_level = env(SOURCE)\n", summary: "Environment variable not set"},
		{name: "file() of a path", secret: "s3cret-path.txt", src: "log_level = file(SOURCE)\n", summary: "File not found"},
		{name: "file() of a directory path", secret: "sub", src: "log_level = file(SOURCE)\n", summary: "Not a regular file", leaks: []string{"conf/sub"}},
	}
	sources := []struct{ name, call string }{
		{"env", `env("MCPHOST_SECRET")`},
		{"file", `file("secret.txt")`},
	}
	for _, tt := range tests {
		for _, source := range sources {
			t.Run(tt.name+"/"+source.name, func(t *testing.T) {
				src := strings.ReplaceAll(tt.src, "SOURCE", source.call)
				fsys := fstest.MapFS{
					"conf/c.hcl":      {Data: []byte(src)},
					"conf/secret.txt": {Data: []byte(tt.secret)},
					"conf/sub/x":      {Data: []byte("x")},
				}
				opts := Options{LookupEnv: testEnv("MCPHOST_SECRET", tt.secret), Executable: testExecutable}
				cfg, diags := Load(fsys, "conf/c.hcl", opts)
				var found *hcl.Diagnostic
				for _, d := range diags {
					if d.Summary == tt.summary {
						found = d
					}
				}
				if found == nil {
					t.Fatalf("no %q diagnostic:%s", tt.summary, diagText(diags))
				}
				var text bytes.Buffer
				if err := WriteText(&text, cfg.Files, diags); err != nil {
					t.Fatal(err)
				}
				if err := hcl.NewDiagnosticTextWriter(&text, cfg.Files, 0, false).WriteDiagnostics(diags); err != nil {
					t.Fatal(err)
				}
				text.Write(DiagnosticsJSON(diags))
				for _, s := range append([]string{strings.TrimSpace(tt.secret)}, tt.leaks...) {
					if strings.Contains(text.String(), s) {
						t.Errorf("%q appears in the diagnostics:\n%s", s, text.String())
					}
				}
				if !tt.unnamed && !strings.Contains(found.Detail, source.call) {
					t.Errorf("the detail does not name %s: %s", source.call, found.Detail)
				}
			})
		}
	}
}

// TestFunctionValuesInDiagnosticsWhenPlain checks the other side: a value
// written in the file is still quoted, so the messages stay useful.
func TestFunctionValuesInDiagnosticsWhenPlain(t *testing.T) {
	src := "log_level = \"loud\"\nserver \"s\" {\n  url = \"ftp://host/mcp\"\n  discovery_timeout = \"1 minute\"\n}\n"
	_, diags := Parse([]byte(src), "plain.hcl", testOptions())
	var got []string
	for _, d := range diags {
		got = append(got, d.Detail)
	}
	want := []string{
		`The log level "loud" is not known. Use one of "debug", "info" (the default), "warn" or "error".`,
		`The url of server "s" is not valid: the scheme "ftp" is not http or https. Write an absolute http or https URL, such as "https://mcp.example.com/mcp".`,
		`The discovery_timeout "1 minute" is not a duration. Write a number followed by a unit, such as "10s", "1m30s" or "250ms".`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("details (-want +got):\n%s", diff)
	}
}

func TestSourcesPhrase(t *testing.T) {
	tests := []struct{ expr, want string }{
		{`"plain"`, ""},
		{`executable()`, ""},
		{`env("A")`, `env("A")`},
		{`env("A", "default")`, `env("A")`},
		{`"${env("A")}/x"`, `env("A")`},
		{`[env("A"), file("b"), env("A")]`, `env("A") and file("b")`},
		{`{ x = env("A"), y = file("b"), z = env("C") }`, `env("A"), file("b") and env("C")`},
		{`file(env("P"))`, `file(...) and env("P")`},
		{`env("${"A"}")`, `env("A")`},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			expr, diags := hclsyntax.ParseExpression([]byte(tt.expr), "e.hcl", hcl.InitialPos)
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			if got := sourcesPhrase(expr); got != tt.want {
				t.Errorf("sourcesPhrase(%s) = %q, want %q", tt.expr, got, tt.want)
			}
		})
	}
}
