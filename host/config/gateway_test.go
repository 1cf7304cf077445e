package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// defaultGateway is the gateway block's defaults, changed by set.
func defaultGateway(set func(*Gateway)) Gateway {
	g := Gateway{Enabled: true, SessionTimeout: DefaultGatewaySessionTimeout,
		MaxSessionsPerPrincipal: DefaultGatewayMaxSessionsPerPrincipal, MaxSessions: DefaultGatewayMaxSessions}
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
