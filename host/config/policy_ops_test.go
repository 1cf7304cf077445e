package config

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/policies"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestShippedRulesKeepTheirMeaning loads the rules of
// examples/hcl/policies.hcl and of docs/policies-and-plugins.md's "Writing
// a policy": their decisions on tool calls are what the rules said before
// operations were governed, and no other operation is denied, hidden or
// asked about by a rule written for tool calls.
func TestShippedRulesKeepTheirMeaning(t *testing.T) {
	example, err := os.ReadFile("../../examples/hcl/policies.hcl")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../docs/policies-and-plugins.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme)[strings.Index(string(readme), "## Writing a policy"):]
	block := regexp.MustCompile("(?s)```hcl\n(.*?)```").FindStringSubmatch(section)
	if block == nil {
		t.Fatal("docs/policies-and-plugins.md's Writing a policy has no hcl block")
	}
	sources := map[string]string{"examples/hcl/policies.hcl": string(example), "docs/policies-and-plugins.md": block[1]}

	writer := policies.Principal{Name: "alice", Groups: []string{"writers", "analysts"}}
	reader := policies.Principal{Name: "bob", Groups: []string{"analysts"}}
	destructive := policies.Tool{Name: "write_file", Annotations: policies.AnnotationsFromMCP(nil)}
	readOnly := policies.Tool{Name: "read_file", Annotations: policies.Annotations{ReadOnlyHint: true}}
	const pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----"
	toolCalls := []struct {
		name        string
		phase       string
		in          policies.Input
		example     string // "effect rule" under examples/hcl/policies.hcl
		readmeRules string // under the rules of docs/policies-and-plugins.md
	}{
		{"a reader lists a destructive tool", policies.PhaseList, policies.Input{Principal: reader, Tool: destructive},
			"deny read-only-unless-writer", "deny read-only-unless-writer"},
		{"a writer lists it", policies.PhaseList, policies.Input{Principal: writer, Tool: destructive}, "allow ", "allow "},
		{"a writer writes under /srv/data", policies.PhaseCall, policies.Input{Server: "files", Principal: writer, Tool: destructive,
			RawArgs: []byte(`{"path":"/srv/data/a.txt"}`)}, "ask approve-destructive", "ask approve-destructive"},
		{"a writer writes /etc", policies.PhaseCall, policies.Input{Server: "files", Principal: writer, Tool: destructive,
			RawArgs: []byte(`{"path":"/etc/passwd"}`)}, "deny writes-stay-in-srv-data", "ask approve-destructive"},
		{"an App calls a destructive tool", policies.PhaseCall, policies.Input{Server: "revenue", Origin: policies.OriginApp, Principal: writer, Tool: destructive},
			"deny no-destructive-calls-from-apps", "ask approve-destructive"},
		{"a read-only call", policies.PhaseCall, policies.Input{Server: "files", Principal: reader, Tool: readOnly}, "allow ", "allow "},
		{"a private key in a result", policies.PhaseResult, policies.Input{Principal: reader, Tool: readOnly,
			Result: &policies.Result{Text: "-----BEGIN RSA PRIVATE KEY-----"}}, "deny no-private-keys", "allow "},
		// Deliberately wider since research/redteam.md F5: the rule reads
		// embedded resources (in result.text) and structured content.
		{"a private key in an embedded resource", policies.PhaseResult, policies.Input{Principal: reader, Tool: readOnly,
			Result: policies.ResultFromMCP(&mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{
				Resource: &mcp.ResourceContents{URI: "file:///id_rsa", Text: pem}}}})}, "deny no-private-keys", "allow "},
		{"a private key in structured content", policies.PhaseResult, policies.Input{Principal: reader, Tool: readOnly,
			Result: policies.ResultFromMCP(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}},
				StructuredContent: map[string]any{"key": pem}})}, "deny no-private-keys", "allow "},
		{"a result without one", policies.PhaseResult, policies.Input{Principal: reader, Tool: readOnly,
			Result: policies.ResultFromMCP(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "-----BEGIN CERTIFICATE-----"}},
				StructuredContent: map[string]any{"note": "PRIVATE KEY-----"}})}, "allow ", "allow "},
	}
	others := []policies.Input{
		{Op: policies.OpReadRes, Resource: &policies.Resource{URI: "file:///etc/passwd"}},
		{Op: policies.OpReadRes, Resource: &policies.Resource{URI: "ui://revenue-dashboard"}},
		{Op: policies.OpGetPrompt, Prompt: &policies.Prompt{Name: "deploy"}, Args: map[string]any{"path": "/etc"}},
		{Op: policies.OpComplete, Prompt: &policies.Prompt{Name: "deploy"}, Args: map[string]any{"env": "p"}},
		{Op: policies.OpSubscribe, Resource: &policies.Resource{URI: "file:///srv/data/a"}},
		{Op: policies.OpUnsubscribe, Resource: &policies.Resource{URI: "file:///srv/data/a"}},
	}
	lists := []policies.Input{
		{Op: policies.OpListResources, Resource: &policies.Resource{URI: "file:///etc/passwd"}},
		{Op: policies.OpListPrompts, Prompt: &policies.Prompt{Name: "deploy"}},
	}
	for name, src := range sources {
		t.Run(name, func(t *testing.T) {
			cfg, diags := Parse([]byte(src), name, Options{})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			set := cfg.PolicySet
			if set == nil {
				t.Fatal("no policies")
			}
			for _, tc := range toolCalls {
				in := tc.in
				d := set.Decide(t.Context(), tc.phase, &in)
				want := tc.example
				if name == "docs/policies-and-plugins.md" {
					want = tc.readmeRules
				}
				if got := d.Effect + " " + d.Rule; got != want {
					t.Errorf("%s: %s (%s), want %s", tc.name, got, d.Reason, want)
				}
			}
			for _, p := range []policies.Principal{writer, reader} {
				for _, origin := range []string{policies.OriginUser, policies.OriginApp, policies.OriginAPI, policies.OriginGateway} {
					for _, o := range others {
						in := o
						in.Server, in.Principal, in.Origin = "files", p, origin
						if d := set.Decide(t.Context(), policies.PhaseCall, &in); d.Effect != policies.EffectAllow {
							t.Errorf("%s by %s from %s: %s by %q (%s), want allow", in.Op, p.Name, origin, d.Effect, d.Rule, d.Reason)
						}
					}
					for _, o := range lists {
						in := o
						in.Server, in.Principal, in.Origin = "files", p, origin
						if d := set.Decide(t.Context(), policies.PhaseList, &in); d.Effect != policies.EffectAllow {
							t.Errorf("%s by %s from %s: %s by %q, want allow", in.Op, p.Name, origin, d.Effect, d.Rule)
						}
					}
				}
			}
		})
	}
}
