package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// defaultGateway is the gateway block's defaults, changed by set.
func defaultGateway(set func(*Gateway)) Gateway {
	g := Gateway{Enabled: true, SessionTimeout: DefaultGatewaySessionTimeout,
		MaxSessionsPerPrincipal: DefaultGatewayMaxSessionsPerPrincipal, MaxSessions: DefaultGatewayMaxSessions,
		Discovery: DiscoveryList, DiscoveryThreshold: DefaultDiscoveryThreshold}
	if set != nil {
		set(&g)
	}
	return g
}

func TestGatewayBlock(t *testing.T) {
	const servers = "server \"a\" {\n  command = \"x\"\n}\nserver \"b\" {\n  command = \"x\"\n}\n"
	type diag struct {
		Summary string
		Line    int
	}
	tests := []struct {
		name     string
		src      string
		want     Gateway // when there are no errors
		diags    []diag
		contains string // in the first diagnostic's detail
	}{
		{name: "no block", src: "", want: defaultGateway(nil)},
		{name: "off", src: "gateway {\n  enabled = false\n}\n", want: defaultGateway(func(g *Gateway) { g.Enabled = false })},
		{
			name: "servers and endpoints",
			src:  "gateway {\n  servers = [\"b\", \"a\", \"b\"]\n  session_timeout = \"5m\"\n  endpoint \"just-a\" {\n    servers = [\"a\"]\n  }\n}\n",
			want: defaultGateway(func(g *Gateway) {
				g.Servers, g.SessionTimeout = []string{"b", "a"}, 5*time.Minute
				g.Endpoints = []GatewayEndpoint{{Name: "just-a", Servers: []string{"a"}}}
			}),
		},
		{
			name: "session caps",
			src:  "gateway {\n  max_sessions_per_principal = 8\n  max_sessions = 100\n}\n",
			want: defaultGateway(func(g *Gateway) { g.MaxSessionsPerPrincipal, g.MaxSessions = 8, 100 }),
		},
		{name: "no sessions per principal", src: "gateway {\n  max_sessions_per_principal = 0\n}\n", diags: []diag{{"Invalid max_sessions_per_principal", 8}}, contains: "from 1 to"},
		{name: "too many sessions", src: "gateway {\n  max_sessions = 10000000\n}\n", diags: []diag{{"Invalid max_sessions", 8}}, contains: "1048576"},
		{name: "sessions not a number", src: "gateway {\n  max_sessions = 1.5\n}\n", diags: []diag{{"Invalid number", 8}}},
		{name: "unknown server", src: "gateway {\n  servers = [\"a\", \"c\"]\n}\n", diags: []diag{{"Unknown server", 8}}, contains: `"c"`},
		{name: "unknown server in an endpoint", src: "gateway {\n  endpoint \"e\" {\n    servers = [\"zz\"]\n  }\n}\n", diags: []diag{{"Unknown server", 9}}, contains: `endpoint "e"`},
		{name: "endpoint without servers", src: "gateway {\n  endpoint \"e\" {}\n}\n", diags: []diag{{"Missing servers", 8}}},
		{name: "bad endpoint name", src: "gateway {\n  endpoint \"a/b\" {\n    servers = [\"a\"]\n  }\n}\n", diags: []diag{{"Invalid endpoint name", 8}}},
		{name: "duplicate endpoint", src: "gateway {\n  endpoint \"e\" {\n    servers = [\"a\"]\n  }\n  endpoint \"e\" {\n    servers = [\"b\"]\n  }\n}\n", diags: []diag{{"Duplicate endpoint name", 11}}},
		{name: "two blocks", src: "gateway {}\ngateway {}\n", diags: []diag{{"Duplicate gateway block", 8}}},
		{name: "timeout too short", src: "gateway {\n  session_timeout = \"1s\"\n}\n", diags: []diag{{"Invalid session_timeout", 8}}, contains: "10s"},
		{name: "timeout not a duration", src: "gateway {\n  session_timeout = \"soon\"\n}\n", diags: []diag{{"Invalid duration", 8}}},
		{
			name: "discovery, threshold and pins",
			src:  "gateway {\n  discovery = \"auto\"\n  discovery_threshold = \"64KiB\"\n  pin = [\"a__x\", \"b__y\", \"a__x\"]\n  endpoint \"e\" {\n    servers = [\"a\"]\n    discovery = \"search\"\n    pin = []\n  }\n}\n",
			want: defaultGateway(func(g *Gateway) {
				g.Discovery, g.DiscoveryThreshold, g.Pin = DiscoveryAuto, 64<<10, []string{"a__x", "b__y"}
				g.Endpoints = []GatewayEndpoint{{Name: "e", Servers: []string{"a"}, Discovery: DiscoverySearch, Pin: []string{}}}
			}),
		},
		{name: "threshold in bytes", src: "gateway {\n  discovery_threshold = 1000\n}\n", want: defaultGateway(func(g *Gateway) { g.DiscoveryThreshold = 1000 })},
		{name: "unknown discovery", src: "gateway {\n  discovery = \"lazy\"\n}\n", diags: []diag{{"Invalid discovery", 8}}, contains: `"lazy"`},
		{name: "unknown discovery on an endpoint", src: "gateway {\n  endpoint \"e\" {\n    servers = [\"a\"]\n    discovery = \"all\"\n  }\n}\n", diags: []diag{{"Invalid discovery", 10}}},
		{name: "threshold not a size", src: "gateway {\n  discovery_threshold = \"big\"\n}\n", diags: []diag{{"Invalid size", 8}}},
		{name: "threshold zero", src: "gateway {\n  discovery_threshold = 0\n}\n", diags: []diag{{"Size out of range", 8}}},
		{name: "pin without a server", src: "gateway {\n  pin = [\"x\"]\n}\n", diags: []diag{{"Invalid pin", 8}}, contains: "SERVER__TOOL"},
		{name: "pin of an unknown server", src: "gateway {\n  pin = [\"zz__x\"]\n}\n", diags: []diag{{"Invalid pin", 8}}},
		{name: "pin on an endpoint", src: "gateway {\n  endpoint \"e\" {\n    servers = [\"a\"]\n    pin = [\"a__\"]\n  }\n}\n", diags: []diag{{"Invalid pin", 10}}},
		{name: "enabled not a bool", src: "gateway {\n  enabled = \"yes please\"\n}\n", diags: []diag{{"Incorrect attribute value type", 8}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, diags := Parse([]byte(servers+tt.src), "gw.hcl", Options{Executable: testExecutable})
			var got []diag
			for _, d := range diags {
				if d.Subject == nil {
					t.Errorf("diagnostic without subject: %s", d.Error())
					continue
				}
				got = append(got, diag{d.Summary, d.Subject.Start.Line})
			}
			if diff := cmp.Diff(tt.diags, got); diff != "" {
				t.Fatalf("diagnostics (-want +got):\n%s\n%v", diff, diags)
			}
			if len(tt.diags) > 0 {
				if !strings.Contains(diags[0].Detail, tt.contains) {
					t.Errorf("detail %q does not contain %q", diags[0].Detail, tt.contains)
				}
				return
			}
			for i := range cfg.Gateway.Endpoints {
				cfg.Gateway.Endpoints[i].NameRange = tt.want.Endpoints[i].NameRange
			}
			if diff := cmp.Diff(tt.want, cfg.Gateway); diff != "" {
				t.Errorf("gateway (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDiscoveryOf(t *testing.T) {
	g := Gateway{Discovery: DiscoveryAuto, Pin: []string{"a__x"},
		Endpoints: []GatewayEndpoint{{Name: "e", Discovery: DiscoverySearch}, {Name: "f", Pin: []string{}}}}
	for _, tt := range []struct {
		name, mode string
		pin        []string
	}{{"", DiscoveryAuto, []string{"a__x"}}, {"e", DiscoverySearch, []string{"a__x"}}, {"f", DiscoveryAuto, []string{}}} {
		mode, pin := g.DiscoveryOf(tt.name)
		if mode != tt.mode || !cmp.Equal(pin, tt.pin) {
			t.Errorf("DiscoveryOf(%q) = %q %v, want %q %v", tt.name, mode, pin, tt.mode, tt.pin)
		}
	}
	if mode, _ := (Gateway{}).DiscoveryOf(""); mode != DiscoveryList {
		t.Errorf("the zero gateway: %q", mode)
	}
}

func TestSearchHint(t *testing.T) {
	tests := []struct {
		name, attr string
		want       []string
		diag       string
	}{
		{"keywords", `search_hint = ["git", " code review "]`, []string{"git", "code review"}, ""},
		{"none", ``, nil, ""},
		{"empty keyword", `search_hint = ["git", ""]`, nil, "Invalid search hint"},
		{"not a list", `search_hint = 3`, nil, "Incorrect attribute value type"},
		{"too many", `search_hint = [` + strings.Repeat(`"k", `, MaxSearchHints+1) + `]`, nil, "Too many search hints"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "server \"a\" {\n  command = \"x\"\n  " + tt.attr + "\n}\n"
			cfg, diags := Parse([]byte(src), "s.hcl", Options{Executable: testExecutable})
			if tt.diag != "" {
				if len(diags) == 0 || diags[0].Summary != tt.diag || diags[0].Subject == nil || diags[0].Subject.Start.Line != 3 {
					t.Fatalf("diagnostics %v, want %q at line 3", diags, tt.diag)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if !cmp.Equal(cfg.Servers[0].SearchHint, tt.want, cmpopts.EquateEmpty()) {
				t.Errorf("SearchHint = %q, want %q", cfg.Servers[0].SearchHint, tt.want)
			}
		})
	}
}
