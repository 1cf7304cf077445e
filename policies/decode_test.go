package policies

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestDecodeInput(t *testing.T) {
	defaults := Annotations{DestructiveHint: true, OpenWorldHint: true}
	tests := []struct {
		name    string
		in      string
		want    *Input
		wantErr string
	}{
		{
			name: "everything",
			in: `{
				"server": "files", "era": "legacy", "origin": "app",
				"principal": {"name": "alice", "groups": ["eng", "ops"]},
				"tool": {"name": "write_file", "title": "Write", "annotations": {"readOnlyHint": false, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}},
				"args": {"path": "/srv/a"},
				"result": {"isError": true, "text": "boom", "structured": {"n": 1}},
				"app": {"resourceUri": "ui://files/view", "csp": {"connectDomains": ["a.example.com"], "resourceDomains": [], "frameDomains": null, "baseUriDomains": ["b.example.com"]}, "permissions": ["camera"], "htmlSize": 5120}
			}`,
			want: &Input{
				Server: "files", Era: "legacy", Origin: OriginApp,
				Principal: Principal{Name: "alice", Groups: []string{"eng", "ops"}},
				Tool:      Tool{Name: "write_file", Title: "Write", Annotations: Annotations{IdempotentHint: true}},
				RawArgs:   json.RawMessage(`{"path": "/srv/a"}`),
				Result:    &Result{IsError: true, Text: "boom", Structured: map[string]any{"n": 1.0}, StructuredText: `{"n":1}`},
				App: &App{ResourceURI: "ui://files/view", Permissions: []string{"camera"}, HTMLSize: 5120,
					CSP: CSP{ConnectDomains: []string{"a.example.com"}, ResourceDomains: []string{}, BaseURIDomains: []string{"b.example.com"}}},
			},
		},
		{
			name: "empty object takes the MCP annotation defaults",
			in:   `{}`,
			want: &Input{Tool: Tool{Annotations: defaults}},
		},
		{
			name: "absent hints keep their defaults",
			in:   `{"tool": {"name": "t", "annotations": {"readOnlyHint": true}}}`,
			want: &Input{Tool: Tool{Name: "t", Annotations: Annotations{ReadOnlyHint: true, DestructiveHint: true, OpenWorldHint: true}}},
		},
		{
			name: "nulls for optional objects",
			in:   `{"args": null, "result": null, "app": null, "principal": {"groups": null}}`,
			want: &Input{Tool: Tool{Annotations: defaults}},
		},
		{name: "not an object", in: `[]`, wantErr: "policies: input: the input must be an object"},
		{name: "not JSON", in: `{"server": }`, wantErr: "policies: input: server: invalid character '}'"},
		{name: "truncated", in: `{"server": "a"`, wantErr: "policies: input: the input: unexpected EOF"},
		{name: "empty", in: ``, wantErr: "policies: input: the input: unexpected EOF"},
		{name: "trailing data", in: `{} {}`, wantErr: "policies: input: unexpected data after the input"},
		{name: "unknown member", in: `{"sever": "a"}`, wantErr: `policies: input: unknown member "sever"; the input has app, args, client, era, op, origin, principal, prompt, resource, result, server, tool`},
		{name: "unknown nested member", in: `{"tool": {"annotations": {"readOnly": true}}}`,
			wantErr: `policies: input: unknown member "tool.annotations.readOnly"; tool.annotations has destructiveHint, idempotentHint, openWorldHint, readOnlyHint`},
		{name: "duplicate member", in: `{"server": "a", "server": "b"}`, wantErr: `policies: input: duplicate member "server"`},
		{name: "wrong type", in: `{"principal": {"name": 7}}`, wantErr: "policies: input: principal.name must be a string"},
		{name: "groups not strings", in: `{"principal": {"groups": [1]}}`, wantErr: "policies: input: principal.groups must be a list of strings"},
		{name: "hint not bool", in: `{"tool": {"annotations": {"destructiveHint": "yes"}}}`, wantErr: "policies: input: tool.annotations.destructiveHint must be true or false"},
		{name: "bad era", in: `{"era": "future"}`, wantErr: `policies: input: era is "future", not one of modern, legacy`},
		{name: "bad origin", in: `{"origin": "cli"}`, wantErr: `policies: input: origin is "cli", not one of user, app, api`},
		{name: "args not an object", in: `{"args": [1]}`, wantErr: "policies: input: args must be an object"},
		{name: "result not an object", in: `{"result": 1}`, wantErr: "policies: input: result must be an object"},
		{name: "negative size", in: `{"app": {"htmlSize": -1}}`, wantErr: "policies: input: app.htmlSize must be a non-negative integer"},
		{name: "fractional size", in: `{"app": {"htmlSize": 1.5}}`, wantErr: "policies: input: app.htmlSize must be a non-negative integer"},
		{name: "too large", in: `{"server": "` + strings.Repeat("a", MaxInputBytes) + `"}`, wantErr: "more than the limit of 4194304"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeInput([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if got != nil {
					t.Errorf("got an input with an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreUnexported(Input{})); diff != "" {
				t.Errorf("input (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLazyArgsMatchDecoded checks that raw arguments read through the lazy
// map decide exactly as the same arguments decoded by encoding/json.
func TestLazyArgsMatchDecoded(t *testing.T) {
	rules := []Rule{
		{Name: "path", Phase: PhaseCall, Effect: EffectDeny, When: `has(args.path) && args.path.startsWith("/etc")`},
		{Name: "in", Phase: PhaseCall, Effect: EffectDeny, When: `"secret" in args && args.secret == true`},
		{Name: "num", Phase: PhaseCall, Effect: EffectDeny, When: `has(args.n) && args.n >= 1e300`},
		{Name: "neg", Phase: PhaseCall, Effect: EffectDeny, When: `has(args.n) && args.n == -0.5`},
		{Name: "uni", Phase: PhaseCall, Effect: EffectDeny, When: `has(args.name) && args.name == "Zoë 😀"`},
		{Name: "esc", Phase: PhaseCall, Effect: EffectDeny, When: `"k\"ey" in args && args["k\"ey"] == "a\nb"`},
		{Name: "nested", Phase: PhaseCall, Effect: EffectDeny, When: `has(args.o.list) && args.o.list[1].x == null`},
		{Name: "size", Phase: PhaseCall, Effect: EffectDeny, When: `size(args) == 7`},
		{Name: "keys", Phase: PhaseCall, Effect: EffectDeny, When: `args.exists(k, k == "zz")`},
		{Name: "eq", Phase: PhaseCall, Effect: EffectDeny, When: `args == {"a": 1}`},
		{Name: "type", Phase: PhaseCall, Effect: EffectDeny, When: `type(args) != map`},
		{Name: "idx", Phase: PhaseCall, Effect: EffectDeny, When: `has(args.b) && args.b == false && args[1] == 2`},
		{Name: "missing", Phase: PhaseCall, Effect: EffectDeny, When: `args.nothere == 1`},
	}
	raws := []string{
		`{}`,
		`{"path": "/etc/passwd"}`,
		`{"path": "/srv", "secret": true}`,
		`{"path": "/srv", "secret": "yes"}`,
		`{"n": 1e308}`,
		`{"n": -5e-1}`,
		`{"name": "Zo\u00eb \ud83d\ude00"}`,
		`{"name": "Zoë 😀"}`,
		`{"k\"ey": "a\nb"}`,
		`{"o": {"list": [1, {"x": null}]}}`,
		`{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7}`,
		`{"zz": 0}`,
		`{"a": 1.0}`,
		`{"a": 1, "a": 2}`,
		`{"path": "/etc/a", "path": "/srv/b"}`,
		`{"b": false}`,
		`{"\u0070ath": "/etc/x"}`,
		"{\"path\": \"/etc/\xff\"}",
		`{"n": 12345678901234567890123}`,
		`  {"path" : "/etc/x" , "n" : [ ] , "m" : { } }  `,
		`{"nothere": 1}`,
	}
	for _, r := range rules {
		set := mustCompile(t, "", r)
		for _, raw := range raws {
			var decoded map[string]any
			if err := json.Unmarshal([]byte(raw), &decoded); err != nil {
				t.Fatalf("%s: %v", raw, err)
			}
			in := baseInput()
			in.Args = decoded
			want := set.Decide(t.Context(), PhaseCall, in)
			in = baseInput()
			in.RawArgs = json.RawMessage(raw)
			got := set.Decide(t.Context(), PhaseCall, in)
			if diff := cmp.Diff(want, got, ignoreDuration); diff != "" {
				t.Errorf("rule %s on %s (-decoded +lazy):\n%s", r.Name, raw, diff)
			}
		}
	}
}

// TestLazyArgsRefusesWhatJSONRefuses checks the validating scanner against
// encoding/json on malformed documents.
func TestLazyArgsRefusesWhatJSONRefuses(t *testing.T) {
	for _, raw := range []string{
		`{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1 "b":2}`, `{a:1}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`,
		`{"a":1e}`, `{"a":-}`, `{"a":tru}`, `{"a":nul}`, `{"a":"\x"}`, `{"a":"\u12"}`, "{\"a\":\"\x01\"}",
		`{"a":[1,]}`, `{"a":[1 2]}`, `{"a":{"b"}}`, `{"a":1}x`, `{"a":1e400}`, `{"a":-1e400}`, `{"a":"x}`,
		`{"a":[}`, `{"a":{]}`, `{"a":[1}`, `{"a":+1}`, `{"a":0x1}`, `{"a":NaN}`,
	} {
		if json.Valid([]byte(raw)) {
			var v any
			if json.Unmarshal([]byte(raw), &v) == nil {
				t.Fatalf("%s is valid JSON; fix the test", raw)
			}
		}
		if _, err := newLazyArgs([]byte(raw), nil); err == nil {
			t.Errorf("newLazyArgs(%s) accepted it", raw)
		}
	}
}
