package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/generation"
)

// planBase is the running config of TestPlan; each case edits it with
// strings.Replace or appends to it. %[1]s is a plugin module's path.
const planBase = `
listen   = "127.0.0.1:7777"
data_dir = "/var/lib/mcphost"
admins   = ["alice", "ops"]

server "a" {
  command = "server-a"
  args    = ["--one"]
}

server "b" {
  command = "server-b"
  env     = { TOKEN = "secret-b-1" }
}

principal "alice" {
  token  = "alice-token-0123456789"
  groups = ["analysts"]
}

principal "bob" {
  token = "bob-token-0123456789ab"
}

policy "no-add" {
  phase  = "call"
  effect = "deny"
  when   = "tool.name == 'add'"
}

plugin "redact" {
  path   = "%[1]s"
  stages = ["result"]
}
`

// planEdit rewrites planBase: each pair of edits replaces the first with
// the second; an odd last one is appended.
type planEdit []string

func (e planEdit) apply(src string) string {
	for i := 0; i+1 < len(e); i += 2 {
		if !strings.Contains(src, e[i]) {
			panic("planEdit: no " + e[i])
		}
		src = strings.Replace(src, e[i], e[i+1], 1)
	}
	if len(e)%2 == 1 {
		src += e[len(e)-1]
	}
	return src
}

// TestPlan checks the plan of each kind of change against the running
// config planBase: only what changed is reported, by name, and nothing a
// server block or a principal hides (env values, tokens) shows.
func TestPlan(t *testing.T) {
	dir := t.TempDir()
	module := filepath.Join(dir, "redact.wasm")
	rebuilt := filepath.Join(dir, "rebuilt.wasm")
	if err := os.WriteFile(module, []byte("\x00asm module one"), 0o644); err != nil {
		t.Fatal(err)
	}
	parse := func(t *testing.T, src string) *config.Config {
		t.Helper()
		cfg, diags := config.Parse([]byte(strings.ReplaceAll(src, "%[1]s", module)), "plan.hcl", config.Options{
			LookupEnv: func(k string) (string, bool) {
				if k == "HOME" {
					return "/home/tester", true
				}
				return "", false
			},
		})
		if diags.HasErrors() {
			t.Fatalf("%s\n%s", diags, src)
		}
		return cfg
	}

	// nothing is the plan of a reload that changes nothing.
	nothing := ReloadPlan{
		Servers:  []generation.ServerPlan{{Name: "a", Action: planKept}, {Name: "b", Action: planKept}},
		Kept:     []string{"a", "b"},
		Policies: 1, Plugins: 1,
	}
	tests := []struct {
		name  string
		edit  planEdit
		owner bool               // the daemon's generated owner exists
		base  string             // instead of planBase
		write func(t *testing.T) // before planning
		want  func(p *ReloadPlan)
	}{
		{name: "the same file"},
		{
			name: "a comment and a block moved",
			edit: planEdit{`server "a" {
  command = "server-a"
  args    = ["--one"]
}
`, "", "\n# a moved below b\nserver \"a\" {\n  args    = [\"--one\"]\n  command = \"server-a\"\n}\n"},
			want: func(p *ReloadPlan) {
				p.Servers = []generation.ServerPlan{{Name: "b", Action: planKept}, {Name: "a", Action: planKept}}
				p.Kept = []string{"b", "a"}
			},
		},
		{
			name: "a server's args and env",
			edit: planEdit{`["--one"]`, `["--two"]`, `"secret-b-1"`, `"secret-b-2"`},
			want: func(p *ReloadPlan) {
				p.Servers = []generation.ServerPlan{{Name: "a", Action: planRestarted, Changed: []string{"args"}}, {Name: "b", Action: planRestarted, Changed: []string{"env"}}}
				p.Kept, p.Restarted = nil, []string{"a", "b"}
				p.Started, p.Stopped = []string{"a", "b"}, []string{"a", "b"}
			},
		},
		{
			name: "a server's timeouts and transport",
			edit: planEdit{`command = "server-b"`, "command = \"server-b\"\n  call_timeout = \"5s\"\n  discovery_timeout = \"2s\"\n  version_negotiation = \"auto\""},
			want: func(p *ReloadPlan) {
				p.Servers[1] = generation.ServerPlan{Name: "b", Action: planRestarted, Changed: []string{"version_negotiation", "discovery_timeout", "call_timeout", "app_resource_timeout"}} // its default follows call_timeout
				p.Kept, p.Restarted = []string{"a"}, []string{"b"}
				p.Started, p.Stopped = []string{"b"}, []string{"b"}
			},
		},
		{
			name: "a server added and one removed",
			edit: planEdit{`server "a" {`, `server "c" {`},
			want: func(p *ReloadPlan) {
				p.Servers = []generation.ServerPlan{{Name: "c", Action: planAdded}, {Name: "b", Action: planKept}, {Name: "a", Action: planRemoved}}
				p.Kept, p.Added, p.Removed = []string{"b"}, []string{"c"}, []string{"a"}
				p.Started, p.Stopped = []string{"c"}, []string{"a"}
			},
		},
		{
			name: "a policy's expression",
			edit: planEdit{`tool.name == 'add'`, `tool.name == 'sub'`},
			want: func(p *ReloadPlan) { p.PoliciesChanged = true },
		},
		{
			name: "the policy default",
			edit: planEdit{"\npolicies {\n  default = \"deny\"\n}\n"},
			want: func(p *ReloadPlan) { p.PoliciesChanged = true },
		},
		{
			name: "a policy added",
			edit: planEdit{"\npolicy \"no-sub\" {\n  phase  = \"call\"\n  effect = \"deny\"\n  when   = \"tool.name == 'sub'\"\n}\n"},
			want: func(p *ReloadPlan) { p.PoliciesChanged, p.Policies = true, 2 },
		},
		{
			name: "a plugin's block",
			edit: planEdit{`stages = ["result"]`, "stages = [\"result\"]\n  timeout = \"1s\""},
			want: func(p *ReloadPlan) { p.PluginsChanged = true },
		},
		{
			name: "a plugin's module rebuilt in place",
			write: func(t *testing.T) {
				if err := os.WriteFile(module, []byte("\x00asm module two"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			want: func(p *ReloadPlan) { p.PluginsChanged = true },
		},
		{
			name: "a plugin's module at another path with the same bytes",
			write: func(t *testing.T) {
				b, _ := os.ReadFile(module)
				if err := os.WriteFile(rebuilt, b, 0o644); err != nil {
					t.Fatal(err)
				}
			},
			edit: planEdit{`path   = "%[1]s"`, `path   = "` + rebuilt + `"`},
			want: func(p *ReloadPlan) { p.PluginsChanged = true }, // the block changed
		},
		{
			name: "principals: added, removed, rotated, regrouped",
			edit: planEdit{
				`"bob-token-0123456789ab"`, `"bob-token-rotated-0123"`,
				`groups = ["analysts"]`, `groups = ["ops"]`,
				"\nprincipal \"carol\" {\n  token = \"carol-token-0123456789\"\n}\n",
			},
			want: func(p *ReloadPlan) {
				p.Principals.Rotated, p.Principals.Changed, p.Principals.Added = []string{"bob"}, []string{"alice"}, []string{"carol"}
			},
		},
		{
			name: "a principal removed",
			edit: planEdit{"principal \"bob\" {\n  token = \"bob-token-0123456789ab\"\n}\n", ""},
			want: func(p *ReloadPlan) { p.Principals.Removed = []string{"bob"} },
		},
		{
			name: "a principal kept to the API",
			edit: planEdit{`token = "bob-token-0123456789ab"`, "token = \"bob-token-0123456789ab\"\n  webshell = false"},
			want: func(p *ReloadPlan) { p.Principals.Changed = []string{"bob"} },
		},
		{
			name:  "the owner gives way to principals",
			base:  "server \"a\" {\n  command = \"server-a\"\n  args    = [\"--one\"]\n}\n",
			edit:  planEdit{"principal \"alice\" {\n  token = \"alice-token-0123456789\"\n}\n"},
			owner: true,
			want: func(p *ReloadPlan) {
				*p = ReloadPlan{Servers: []generation.ServerPlan{{Name: "a", Action: planKept}}, Kept: []string{"a"}}
				p.Principals.Added, p.Principals.Removed = []string{"alice"}, []string{OwnerName}
			},
		},
		{
			name: "admins reordered",
			edit: planEdit{`["alice", "ops"]`, `["ops", "alice", "ops"]`},
		},
		{
			name: "admins changed",
			edit: planEdit{`["alice", "ops"]`, `["alice"]`},
			want: func(p *ReloadPlan) { p.AdminsChanged = true },
		},
		{
			name: "the top-level rate limit",
			edit: planEdit{"\nrate_limit {\n  calls_per_second = 5\n}\n"},
			want: func(p *ReloadPlan) { p.RateLimitsChanged = true },
		},
		{
			name: "a principal's own rate limit",
			edit: planEdit{`token = "bob-token-0123456789ab"`, "token = \"bob-token-0123456789ab\"\n  rate_limit {\n    concurrent_calls = 2\n  }"},
			want: func(p *ReloadPlan) { p.RateLimitsChanged = true },
		},
		{
			name: "the gateway block",
			edit: planEdit{"\ngateway {\n  servers = [\"a\"]\n}\n"},
			want: func(p *ReloadPlan) { p.GatewayChanged = true },
		},
		{
			name: "settings applied at once",
			edit: planEdit{"\nlog_level = \"debug\"\nwatch_config = true\n"},
			want: func(p *ReloadPlan) { p.Settings = []string{"log_level", "watch_config"} },
		},
		{
			name: "settings that need a restart",
			edit: planEdit{
				`"127.0.0.1:7777"`, `"127.0.0.1:7778"`,
				`"/var/lib/mcphost"`, `"/srv/mcphost"`,
				"\napp_compact_after = \"1h\"\napp_compact_session_bytes = 1024\nstore {\n  sync = \"normal\"\n}\n" +
					"public_urls = [\"https://mcphost.example.com\"]\napps_sandbox_url = \"https://apps.example.com\"\n",
			},
			want: func(p *ReloadPlan) {
				p.Ignored = []string{"listen", "data_dir", "public_urls", "apps_sandbox_url", "app_compact_after", "app_compact_session_bytes", "store.sync"}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(module, []byte("\x00asm module one"), 0o644); err != nil {
				t.Fatal(err)
			}
			base := planBase
			if tt.base != "" {
				base = tt.base
			}
			oldCfg := parse(t, base)
			h := &Host{}
			if tt.owner {
				h.opts.OwnerToken = "owner-token-0123456789abcdef"
			}
			old := generation.New(oldCfg)
			old.PluginDigests = pluginDigests(oldCfg)
			if tt.write != nil {
				tt.write(t)
			}
			newCfg := parse(t, tt.edit.apply(base))

			want := nothing
			want.Servers = append([]generation.ServerPlan(nil), nothing.Servers...)
			if tt.want != nil {
				tt.want(&want)
			}
			want.From, want.To = old.Hash, newCfg.Hash()
			got := h.plan(old, newCfg)
			// The configs name commands no machine has: TestCommandWarning
			// covers the warning.
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(generation.ServerPlan{}, "Warning")); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			if got.Changes() != (tt.want != nil && tt.name != "a comment and a block moved") {
				t.Errorf("Changes() = %v", got.Changes())
			}
			if (got.From == got.To) != (len(tt.edit) == 0) {
				t.Errorf("from %s to %s, for an edit of %d strings", got.From, got.To, len(tt.edit))
			}
			for _, secret := range []string{"secret-b", "token-0123", "token-rotated"} {
				if s := strings.Join(flatten(got), " "); strings.Contains(s, secret) {
					t.Errorf("the plan shows %q: %s", secret, s)
				}
			}
		})
	}
}

// flatten lists every string of a plan.
func flatten(p ReloadPlan) []string {
	out := []string{p.From, p.To}
	for _, s := range p.Servers {
		out = append(append(out, s.Name, s.Action), s.Changed...)
	}
	for _, l := range [][]string{p.Kept, p.Restarted, p.Added, p.Removed, p.Started, p.Stopped, p.Settings, p.Ignored,
		p.Principals.Added, p.Principals.Removed, p.Principals.Rotated, p.Principals.Changed} {
		out = append(out, l...)
	}
	return out
}

// TestServerChangesNamesEveryAttribute: every field of a server block maps
// to the attribute the file writes, so a restarted server's plan names
// attributes an operator can find.
func TestServerChangesNamesEveryAttribute(t *testing.T) {
	attrs := map[string]bool{}
	for _, a := range []string{"transport", "command", "args", "env", "cwd", "url", "headers", "version_negotiation",
		"stdio_probe", "http_probe_timeout", "discovery_timeout", "call_timeout", "apps", "app_resource_max_bytes",
		"app_resource_timeout", "enabled", "max_restarts", "restart_backoff_max", "app_tool_calls", "app_open_links", "app_messages"} {
		attrs[a] = true
	}
	// name is set on one side only so that every field differs.
	a := config.Server{}
	b := config.Server{Name: "x", Transport: "t", Command: "c", Args: []string{"a"}, Env: map[string]string{"k": "v"},
		Cwd: "d", URL: "u", Headers: map[string]string{"h": "v"}, VersionNegotiation: "auto", StdioProbe: "p",
		HTTPProbeTimeout: "e", DiscoveryTimeout: 1, CallTimeout: 1, Apps: "off", AppResourceMaxBytes: 1,
		AppResourceTimeout: 1, Enabled: true, MaxRestarts: 1, RestartBackoffMax: 1, AppToolCalls: true, AppOpenLinks: true, AppMessages: true}
	for _, name := range serverChanges(a, b) {
		if name == "name" {
			continue
		}
		if !attrs[name] {
			t.Errorf("serverChanges names %q, which no server attribute is called", name)
		}
		delete(attrs, name)
	}
	for name := range attrs {
		t.Errorf("a change of %s is not reported", name)
	}
}
