package policies

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func mustCompile(t testing.TB, def string, rules ...Rule) *Set {
	t.Helper()
	set, errs := Compile(rules, def)
	if errs != nil {
		t.Fatalf("Compile: %v", errs)
	}
	return set
}

var ignoreDuration = cmpopts.IgnoreFields(Decision{}, "Duration")

func baseInput() *Input {
	return &Input{
		Server: "files", Era: "modern", Origin: OriginUser,
		Principal: Principal{Name: "alice", Groups: []string{"eng"}},
		Tool:      Tool{Name: "read_file", Title: "Read file", Annotations: Annotations{ReadOnlyHint: true, OpenWorldHint: true}},
	}
}

func TestDecide(t *testing.T) {
	hideAdmin := Rule{Name: "hide-admin", Phase: PhaseList, Effect: EffectDeny,
		When: `tool.name.startsWith("admin_") && !("admins" in principal.groups)`, Message: "not for you"}
	rules := []Rule{
		hideAdmin,
		{Name: "allow-ops", Phase: PhaseCall, Effect: EffectAllow, When: `"ops" in principal.groups`},
		{Name: "no-etc", Phase: PhaseCall, Effect: EffectDeny, When: `has(args.path) && args.path.startsWith("/etc/")`, Message: "no system files"},
		{Name: "etc-again", Phase: PhaseCall, Effect: EffectDeny, When: `has(args.path) && args.path.startsWith("/etc/passwd")`},
		{Name: "approve-destructive", Phase: PhaseCall, Effect: EffectAsk, When: `tool.annotations.destructiveHint && !tool.annotations.readOnlyHint`},
		{Name: "approve-deploys", Phase: PhaseCall, Effect: EffectAsk, When: `tool.name == "deploy"`, Approvers: []string{"security", "carol"}},
		{Name: "app-origin", Phase: PhaseCall, Effect: EffectDeny, When: `origin == "app" && !tool.annotations.readOnlyHint`},
		{Name: "legacy", Phase: PhaseCall, Effect: EffectDeny, When: `era == "legacy" && server == "crm"`},
		{Name: "secrets", Phase: PhaseResult, Effect: EffectDeny, When: `result.text.contains("BEGIN PRIVATE KEY")`, Message: "result withheld"},
		{Name: "structured-secrets", Phase: PhaseResult, Effect: EffectDeny, When: `result.structuredText.contains("BEGIN PRIVATE KEY")`},
		{Name: "structured", Phase: PhaseResult, Effect: EffectDeny, When: `!result.isError && has(result.structured.count) && result.structured.count > 100`},
		{Name: "result-args", Phase: PhaseResult, Effect: EffectDeny, When: `has(args.path) && args.path == "/tmp/x"`},
		{Name: "csp", Phase: PhaseApp, Effect: EffectDeny, When: `app.csp.connectDomains.exists(d, !d.endsWith(".example.com"))`, Message: "App reaches outside"},
		{Name: "camera", Phase: PhaseApp, Effect: EffectDeny, When: `"camera" in app.permissions && app.resourceUri.startsWith("ui://untrusted/")`},
	}
	set := mustCompile(t, EffectAllow, rules...)
	denyAll := mustCompile(t, EffectDeny, Rule{Name: "see-read", Phase: PhaseList, Effect: EffectAllow, When: `tool.name.startsWith("read_")`})
	tests := []struct {
		name  string
		set   *Set
		phase string
		edit  func(in *Input)
		want  Decision
	}{
		{
			name: "list: default allow", set: set, phase: PhaseList,
			want: Decision{Phase: PhaseList, Effect: EffectAllow, Reason: "no rule matched: default allow"},
		},
		{
			name: "list: hidden tool", set: set, phase: PhaseList,
			edit: func(in *Input) { in.Tool.Name = "admin_reset" },
			want: Decision{Phase: PhaseList, Rule: "hide-admin", Effect: EffectDeny, Message: "not for you", Reason: "rule hide-admin matched"},
		},
		{
			name: "call: a hidden tool is refused by the list rule", set: set, phase: PhaseCall,
			edit: func(in *Input) { in.Tool.Name = "admin_reset"; in.Principal.Groups = []string{"ops"} },
			want: Decision{Phase: PhaseList, Rule: "hide-admin", Effect: EffectDeny, Message: "not for you", Reason: "rule hide-admin matched"},
		},
		{
			name: "call: first matching rule decides", set: set, phase: PhaseCall,
			edit: func(in *Input) { in.Args = map[string]any{"path": "/etc/passwd"} },
			want: Decision{Phase: PhaseCall, Rule: "no-etc", Effect: EffectDeny, Message: "no system files", Reason: "rule no-etc matched"},
		},
		{
			name: "call: an earlier allow wins over a later deny", set: set, phase: PhaseCall,
			edit: func(in *Input) {
				in.Args = map[string]any{"path": "/etc/passwd"}
				in.Principal.Groups = []string{"ops"}
			},
			want: Decision{Phase: PhaseCall, Rule: "allow-ops", Effect: EffectAllow, Reason: "rule allow-ops matched"},
		},
		{
			name: "call: raw arguments", set: set, phase: PhaseCall,
			edit: func(in *Input) { in.RawArgs = json.RawMessage(`{"path": "/etc/hosts"}`) },
			want: Decision{Phase: PhaseCall, Rule: "no-etc", Effect: EffectDeny, Message: "no system files", Reason: "rule no-etc matched"},
		},
		{
			name: "call: ask", set: set, phase: PhaseCall,
			edit: func(in *Input) { in.Tool.Annotations = AnnotationsFromMCP(nil) },
			want: Decision{Phase: PhaseCall, Rule: "approve-destructive", Effect: EffectAsk, Message: "approval required by policy approve-destructive", Reason: "rule approve-destructive matched"},
		},
		{
			name: "call: ask with approvers", set: set, phase: PhaseCall,
			edit: func(in *Input) { in.Tool.Name = "deploy" },
			want: Decision{Phase: PhaseCall, Rule: "approve-deploys", Effect: EffectAsk, Message: "approval required by policy approve-deploys",
				Reason: "rule approve-deploys matched", Approvers: []string{"security", "carol"}},
		},
		{
			name: "call: origin app", set: set, phase: PhaseCall,
			edit: func(in *Input) { in.Origin = OriginApp; in.Tool.Annotations = Annotations{} },
			want: Decision{Phase: PhaseCall, Rule: "app-origin", Effect: EffectDeny, Message: "denied by policy app-origin", Reason: "rule app-origin matched"},
		},
		{
			name: "call: era and server", set: set, phase: PhaseCall,
			edit: func(in *Input) { in.Era = "legacy"; in.Server = "crm" },
			want: Decision{Phase: PhaseCall, Rule: "legacy", Effect: EffectDeny, Message: "denied by policy legacy", Reason: "rule legacy matched"},
		},
		{
			name: "call: no arguments at all", set: set, phase: PhaseCall,
			want: Decision{Phase: PhaseCall, Effect: EffectAllow, Reason: "no rule matched: default allow"},
		},
		{
			name: "call: JSON null arguments", set: set, phase: PhaseCall,
			edit: func(in *Input) { in.RawArgs = json.RawMessage(" null ") },
			want: Decision{Phase: PhaseCall, Effect: EffectAllow, Reason: "no rule matched: default allow"},
		},
		{
			name: "result: text", set: set, phase: PhaseResult,
			edit: func(in *Input) { in.Result = &Result{Text: "-----BEGIN PRIVATE KEY-----"} },
			want: Decision{Phase: PhaseResult, Rule: "secrets", Effect: EffectDeny, Message: "result withheld", Reason: "rule secrets matched"},
		},
		{
			name: "result: the text of an embedded resource", set: set, phase: PhaseResult,
			edit: func(in *Input) {
				in.Result = ResultFromMCP(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the key file:"},
					&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///k.pem", Text: "-----BEGIN PRIVATE KEY-----\nMIIE"}}}})
			},
			want: Decision{Phase: PhaseResult, Rule: "secrets", Effect: EffectDeny, Message: "result withheld", Reason: "rule secrets matched"},
		},
		{
			name: "result: structured content as text", set: set, phase: PhaseResult,
			edit: func(in *Input) {
				in.Result = ResultFromMCP(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}},
					StructuredContent: map[string]any{"pem": "-----BEGIN PRIVATE KEY-----\nMIIE"}})
			},
			want: Decision{Phase: PhaseResult, Rule: "structured-secrets", Effect: EffectDeny, Message: "denied by policy structured-secrets", Reason: "rule structured-secrets matched"},
		},
		{
			name: "result: structured", set: set, phase: PhaseResult,
			edit: func(in *Input) { in.Result = &Result{Structured: map[string]any{"count": 101.0}} },
			want: Decision{Phase: PhaseResult, Rule: "structured", Effect: EffectDeny, Message: "denied by policy structured", Reason: "rule structured matched"},
		},
		{
			name: "result: sees args", set: set, phase: PhaseResult,
			edit: func(in *Input) { in.Result = &Result{}; in.RawArgs = json.RawMessage(`{"path":"/tmp/x"}`) },
			want: Decision{Phase: PhaseResult, Rule: "result-args", Effect: EffectDeny, Message: "denied by policy result-args", Reason: "rule result-args matched"},
		},
		{
			name: "result: no result in the input", set: set, phase: PhaseResult,
			want: Decision{Phase: PhaseResult, Rule: "secrets", Effect: EffectDeny, Error: true,
				Message: "denied: policy secrets could not be evaluated", Reason: "rule secrets: the input has no result"},
		},
		{
			name: "result: list rules do not apply", set: set, phase: PhaseResult,
			edit: func(in *Input) { in.Tool.Name = "admin_reset"; in.Result = &Result{} },
			want: Decision{Phase: PhaseResult, Effect: EffectAllow, Reason: "no rule matched: default allow"},
		},
		{
			name: "app: CSP", set: set, phase: PhaseApp,
			edit: func(in *Input) {
				in.App = &App{CSP: CSP{ConnectDomains: []string{"api.example.com", "evil.test"}}}
			},
			want: Decision{Phase: PhaseApp, Rule: "csp", Effect: EffectDeny, Message: "App reaches outside", Reason: "rule csp matched"},
		},
		{
			name: "app: permissions", set: set, phase: PhaseApp,
			edit: func(in *Input) {
				in.App = &App{ResourceURI: "ui://untrusted/x", Permissions: []string{"camera"}}
			},
			want: Decision{Phase: PhaseApp, Rule: "camera", Effect: EffectDeny, Message: "denied by policy camera", Reason: "rule camera matched"},
		},
		{
			name: "app: nil lists", set: set, phase: PhaseApp,
			edit: func(in *Input) { in.App = &App{} },
			want: Decision{Phase: PhaseApp, Effect: EffectAllow, Reason: "no rule matched: default allow"},
		},
		{
			name: "default deny: listed tool", set: denyAll, phase: PhaseList,
			want: Decision{Phase: PhaseList, Rule: "see-read", Effect: EffectAllow, Reason: "rule see-read matched"},
		},
		{
			name: "default deny: unlisted tool", set: denyAll, phase: PhaseList,
			edit: func(in *Input) { in.Tool.Name = "write_file" },
			want: Decision{Phase: PhaseList, Effect: EffectDeny, Message: "denied by the default policy", Reason: "no rule matched: default deny"},
		},
		{
			name: "default deny: calling an unlisted tool", set: denyAll, phase: PhaseCall,
			edit: func(in *Input) { in.Tool.Name = "write_file" },
			want: Decision{Phase: PhaseList, Effect: EffectDeny, Message: "denied by the default policy", Reason: "no rule matched: default deny"},
		},
		{
			name: "default deny: a listed tool still needs a call rule", set: denyAll, phase: PhaseCall,
			want: Decision{Phase: PhaseCall, Effect: EffectDeny, Message: "denied by the default policy", Reason: "no rule matched: default deny"},
		},
		{
			name: "nil set allows", set: nil, phase: PhaseCall,
			want: Decision{Phase: PhaseCall, Effect: EffectAllow, Reason: "no policies: allow"},
		},
		{
			name: "unknown phase denies", set: set, phase: "render",
			want: Decision{Phase: "render", Effect: EffectDeny, Error: true, Message: "denied: unknown policy phase", Reason: `unknown phase "render"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := baseInput()
			if tt.edit != nil {
				tt.edit(in)
			}
			got := tt.set.Decide(context.Background(), tt.phase, in)
			if diff := cmp.Diff(tt.want, got, ignoreDuration); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
			if got.Duration <= 0 {
				t.Errorf("Duration = %v", got.Duration)
			}
			if got.Allowed() != (got.Effect == EffectAllow) {
				t.Errorf("Allowed() = %v for %s", got.Allowed(), got.Effect)
			}
		})
	}
}

func TestDecideNilInputAndCancelledContext(t *testing.T) {
	set := mustCompile(t, "", Rule{Name: "r", Phase: PhaseCall, Effect: EffectAllow, When: "true"})
	d := set.Decide(context.Background(), PhaseCall, nil)
	if d.Effect != EffectDeny || !d.Error || d.Reason != "no input" {
		t.Errorf("nil input: %+v", d)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("client went away"))
	d = set.Decide(ctx, PhaseCall, baseInput())
	if d.Effect != EffectDeny || !d.Error || d.Reason != "client went away" {
		t.Errorf("cancelled: %+v", d)
	}
}

// TestInputReuse checks that one Input serves every phase of a call and that
// its raw arguments are decoded once.
func TestInputReuse(t *testing.T) {
	set := mustCompile(t, "",
		Rule{Name: "call", Phase: PhaseCall, Effect: EffectDeny, When: `args.n == 2.0`},
		Rule{Name: "result", Phase: PhaseResult, Effect: EffectDeny, When: `args.n == 1.0 && result.text == "ok"`},
	)
	in := baseInput()
	in.RawArgs = json.RawMessage(`{"n": 1}`)
	if d := set.Decide(context.Background(), PhaseCall, in); d.Effect != EffectAllow {
		t.Fatalf("call: %+v", d)
	}
	l, ok := in.args.val.(*lazyArgs)
	if !ok {
		t.Fatalf("args cached as %T", in.args.val)
	}
	in.Result = &Result{Text: "ok"}
	if d := set.Decide(context.Background(), PhaseResult, in); d.Rule != "result" {
		t.Fatalf("result: %+v", d)
	}
	if in.args.val != any(l) {
		t.Error("the result phase decoded the arguments again")
	}
}

// TestArgsDecodedOnlyWhenRead checks that invalid raw arguments cost nothing
// (and deny nothing) while no evaluated rule reads args.
func TestArgsDecodedOnlyWhenRead(t *testing.T) {
	set := mustCompile(t, "",
		Rule{Name: "tool", Phase: PhaseCall, Effect: EffectAllow, When: `tool.name == "read_file"`},
		Rule{Name: "args", Phase: PhaseCall, Effect: EffectDeny, When: `has(args.path)`},
	)
	in := baseInput()
	in.RawArgs = json.RawMessage(`{not json`)
	if d := set.Decide(context.Background(), PhaseCall, in); d.Rule != "tool" || d.Effect != EffectAllow {
		t.Errorf("decision %+v", d)
	}
	if in.args.val != nil {
		t.Errorf("args were converted: %v", in.args.val)
	}
	in = baseInput()
	in.Tool.Name = "other"
	in.RawArgs = json.RawMessage(`{not json`)
	d := set.Decide(context.Background(), PhaseCall, in)
	if d.Rule != "args" || d.Effect != EffectDeny || !d.Error || !strings.Contains(d.Reason, "rule args: args: invalid JSON") {
		t.Errorf("decision %+v", d)
	}
}

// interruptCtx is a context whose Done channel is closed while Err still
// reports nil to the first caller: Decide's own check passes and the
// cancellation is found inside the evaluation, as when a request ends
// mid-rule.
type interruptCtx struct {
	context.Context
	errs int
}

func (c *interruptCtx) Done() <-chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}

func (c *interruptCtx) Err() error {
	c.errs++
	if c.errs == 1 {
		return nil
	}
	return context.Canceled
}

func TestHostile(t *testing.T) {
	list100 := "[" + strings.Repeat("1,", 99) + "1]"
	items := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = float64(i)
		}
		return out
	}
	deep := func(depth int) string {
		return `{"path": "/srv/a", "deep": ` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`
	}
	huge := `{"path": "/etc/passwd", "blob": "` + strings.Repeat("x", 1<<20) + `"}`
	tests := []struct {
		name   string
		rules  []Rule
		ctx    context.Context
		edit   func(in *Input)
		want   Decision
		reason string // substring of Reason when set; Reason is then not compared
	}{
		{
			name:   "runaway nested comprehensions over literals",
			rules:  []Rule{{Name: "runaway", Phase: PhaseCall, Effect: EffectAllow, When: list100 + ".all(a, " + list100 + ".all(b, " + list100 + ".all(c, a + b + c > 0)))"}},
			want:   Decision{Phase: PhaseCall, Rule: "runaway", Effect: EffectDeny, Error: true, Message: "denied: policy runaway could not be evaluated"},
			reason: "rule runaway: operation cancelled: actual cost limit exceeded",
		},
		{
			name:   "runaway over argument lists",
			rules:  []Rule{{Name: "runaway", Phase: PhaseCall, Effect: EffectAllow, When: `args.items.all(a, args.items.all(b, args.items.exists(c, a + b + c < 0.0)))`}},
			edit:   func(in *Input) { in.Args = map[string]any{"items": items(1000)} },
			want:   Decision{Phase: PhaseCall, Rule: "runaway", Effect: EffectDeny, Error: true, Message: "denied: policy runaway could not be evaluated"},
			reason: "actual cost limit exceeded",
		},
		{
			name:   "runaway string growth",
			rules:  []Rule{{Name: "grow", Phase: PhaseCall, Effect: EffectAllow, When: `args.items.all(x, (args.s + args.s + args.s).size() > 0)`}},
			edit:   func(in *Input) { in.Args = map[string]any{"items": items(1000), "s": strings.Repeat("a", 1<<16)} },
			want:   Decision{Phase: PhaseCall, Rule: "grow", Effect: EffectDeny, Error: true, Message: "denied: policy grow could not be evaluated"},
			reason: "actual cost limit exceeded",
		},
		{
			name:   "cancelled during a comprehension",
			rules:  []Rule{{Name: "loop", Phase: PhaseCall, Effect: EffectAllow, When: `args.items.all(x, x >= 0.0)`}},
			ctx:    &interruptCtx{Context: context.Background()},
			edit:   func(in *Input) { in.Args = map[string]any{"items": items(500)} },
			want:   Decision{Phase: PhaseCall, Rule: "loop", Effect: EffectDeny, Error: true, Message: "denied: policy loop could not be evaluated"},
			reason: "rule loop: operation interrupted: context canceled",
		},
		{
			name:  "huge arguments, rule reads a small key",
			rules: []Rule{{Name: "etc", Phase: PhaseCall, Effect: EffectDeny, When: `has(args.path) && args.path.startsWith("/etc/")`}},
			edit:  func(in *Input) { in.RawArgs = json.RawMessage(huge) },
			want:  Decision{Phase: PhaseCall, Rule: "etc", Effect: EffectDeny, Message: "denied by policy etc", Reason: "rule etc matched"},
		},
		{
			name:   "huge arguments, rule scans the huge value",
			rules:  []Rule{{Name: "blob", Phase: PhaseCall, Effect: EffectAllow, When: `args.blob.matches("y+z")`}},
			edit:   func(in *Input) { in.RawArgs = json.RawMessage(huge) },
			want:   Decision{Phase: PhaseCall, Rule: "blob", Effect: EffectDeny, Error: true, Message: "denied: policy blob could not be evaluated"},
			reason: "actual cost limit exceeded",
		},
		{
			name:  "huge arguments, whole map",
			rules: []Rule{{Name: "size", Phase: PhaseCall, Effect: EffectDeny, When: `size(args) == 2 && args.exists(k, k == "blob")`}},
			edit:  func(in *Input) { in.RawArgs = json.RawMessage(huge) },
			want:  Decision{Phase: PhaseCall, Rule: "size", Effect: EffectDeny, Message: "denied by policy size", Reason: "rule size matched"},
		},
		{
			name:  "deeply nested arguments",
			rules: []Rule{{Name: "path", Phase: PhaseCall, Effect: EffectDeny, When: `has(args.path) && args.path == "/srv/a" && size(args.deep) == 1`}},
			edit:  func(in *Input) { in.RawArgs = json.RawMessage(deep(5000)) },
			want:  Decision{Phase: PhaseCall, Rule: "path", Effect: EffectDeny, Message: "denied by policy path", Reason: "rule path matched"},
		},
		{
			name:  "deeply nested arguments compared whole",
			rules: []Rule{{Name: "eq", Phase: PhaseCall, Effect: EffectDeny, When: `args == args`}},
			edit:  func(in *Input) { in.RawArgs = json.RawMessage(deep(5000)) },
			want:  Decision{Phase: PhaseCall, Rule: "eq", Effect: EffectDeny, Message: "denied by policy eq", Reason: "rule eq matched"},
		},
		{
			name:   "arguments nested past the JSON limit",
			rules:  []Rule{{Name: "path", Phase: PhaseCall, Effect: EffectAllow, When: `has(args.path)`}},
			edit:   func(in *Input) { in.RawArgs = json.RawMessage(deep(10001)) },
			want:   Decision{Phase: PhaseCall, Rule: "path", Effect: EffectDeny, Error: true, Message: "denied: policy path could not be evaluated"},
			reason: "exceeded max nesting depth",
		},
		{
			name:  "missing key",
			rules: []Rule{{Name: "etc", Phase: PhaseCall, Effect: EffectAllow, When: `!args.path.startsWith("/etc/")`}},
			edit:  func(in *Input) { in.Args = map[string]any{"file": "/etc/passwd"} },
			want: Decision{Phase: PhaseCall, Rule: "etc", Effect: EffectDeny, Error: true,
				Message: "denied: policy etc could not be evaluated", Reason: "rule etc: no such key: path"},
		},
		{
			name:  "missing key in raw arguments",
			rules: []Rule{{Name: "etc", Phase: PhaseCall, Effect: EffectAllow, When: `!args.path.startsWith("/etc/")`}},
			edit:  func(in *Input) { in.RawArgs = json.RawMessage(`{"file": "/etc/passwd"}`) },
			want: Decision{Phase: PhaseCall, Rule: "etc", Effect: EffectDeny, Error: true,
				Message: "denied: policy etc could not be evaluated", Reason: "rule etc: no such key: path"},
		},
		{
			name:  "principal without groups",
			rules: []Rule{{Name: "admins", Phase: PhaseCall, Effect: EffectAllow, When: `"admins" in principal.groups`}, {Name: "none", Phase: PhaseCall, Effect: EffectDeny, When: `size(principal.groups) == 0 && !principal.groups.exists(g, g == "x")`}},
			edit:  func(in *Input) { in.Principal = Principal{Name: "anon"} },
			want:  Decision{Phase: PhaseCall, Rule: "none", Effect: EffectDeny, Message: "denied by policy none", Reason: "rule none matched"},
		},
		{
			name:  "errors only for some inputs: number",
			rules: []Rule{{Name: "limit", Phase: PhaseCall, Effect: EffectDeny, When: `has(args.limit) && args.limit > 1000`}},
			edit:  func(in *Input) { in.Args = map[string]any{"limit": 5.0} },
			want:  Decision{Phase: PhaseCall, Effect: EffectAllow, Reason: "no rule matched: default allow"},
		},
		{
			name:  "errors only for some inputs: string",
			rules: []Rule{{Name: "limit", Phase: PhaseCall, Effect: EffectDeny, When: `has(args.limit) && args.limit > 1000`}},
			edit:  func(in *Input) { in.Args = map[string]any{"limit": "5000"} },
			want: Decision{Phase: PhaseCall, Rule: "limit", Effect: EffectDeny, Error: true,
				Message: "denied: policy limit could not be evaluated", Reason: "rule limit: no such overload"},
		},
		{
			name:  "an error in an allow rule denies before a later allow",
			rules: []Rule{{Name: "bad", Phase: PhaseCall, Effect: EffectAllow, When: `args.x == 1`}, {Name: "all", Phase: PhaseCall, Effect: EffectAllow, When: `true`}},
			want: Decision{Phase: PhaseCall, Rule: "bad", Effect: EffectDeny, Error: true,
				Message: "denied: policy bad could not be evaluated", Reason: "rule bad: no such key: x"},
		},
		{
			name:  "arguments not an object",
			rules: []Rule{{Name: "p", Phase: PhaseCall, Effect: EffectAllow, When: `has(args.path)`}},
			edit:  func(in *Input) { in.RawArgs = json.RawMessage(`["a"]`) },
			want:  Decision{Phase: PhaseCall, Rule: "p", Effect: EffectDeny, Error: true, Message: "denied: policy p could not be evaluated"},
			// CEL's message for a presence test on a list.
			reason: "rule p: ",
		},
		{
			name:  "identity beyond the fast-path bounds",
			rules: []Rule{{Name: "g", Phase: PhaseCall, Effect: EffectDeny, When: `"g300" in principal.groups && tool.name.size() > 2000`}},
			edit: func(in *Input) {
				in.Principal.Groups = nil
				for i := range 400 {
					in.Principal.Groups = append(in.Principal.Groups, fmt.Sprintf("g%d", i))
				}
				in.Tool.Name = strings.Repeat("t", 3000)
			},
			want: Decision{Phase: PhaseCall, Rule: "g", Effect: EffectDeny, Message: "denied by policy g", Reason: "rule g matched"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := mustCompile(t, EffectAllow, tt.rules...)
			in := baseInput()
			if tt.edit != nil {
				tt.edit(in)
			}
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			got := set.Decide(ctx, PhaseCall, in)
			t.Logf("%s in %v", got.Reason, got.Duration)
			opts := cmp.Options{ignoreDuration}
			if tt.reason != "" {
				if !strings.Contains(got.Reason, tt.reason) {
					t.Errorf("Reason %q does not contain %q", got.Reason, tt.reason)
				}
				opts = append(opts, cmpopts.IgnoreFields(Decision{}, "Reason"))
			}
			if diff := cmp.Diff(tt.want, got, opts); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCostLimitPerRule checks that each rule has its own cost budget within
// one decision: three rules that each cost most of the limit all run.
func TestCostLimitPerRule(t *testing.T) {
	rule := func(name string) Rule {
		return Rule{Name: name, Phase: PhaseCall, Effect: EffectDeny, When: `args.items.exists(x, x < 0.0)`}
	}
	set := mustCompile(t, "", rule("a"), rule("b"), rule("c"))
	for _, r := range set.phases[1] {
		if r.fast != nil {
			t.Fatalf("rule %s has no cost tracking", r.name)
		}
	}
	// Find the largest list one rule evaluates under the limit.
	n := 1
	for {
		items := make([]any, n*2)
		in := baseInput()
		in.Args = map[string]any{"items": items}
		for i := range items {
			items[i] = 1.0
		}
		if d := mustCompile(t, "", rule("one")).Decide(context.Background(), PhaseCall, in); d.Error {
			break
		}
		n *= 2
	}
	items := make([]any, n)
	for i := range items {
		items[i] = 1.0
	}
	in := baseInput()
	in.Args = map[string]any{"items": items}
	if d := set.Decide(context.Background(), PhaseCall, in); d.Error || d.Effect != EffectAllow {
		t.Errorf("three rules of %d items each: %+v", n, d)
	}
}

// TestFastPathAgrees checks that rules without cost tracking decide as the
// tracked programs do, on arguments within maxArgsBytes and beyond.
func TestFastPathAgrees(t *testing.T) {
	set := mustCompile(t, "", benchRules...)
	fast := 0
	for pi := range set.phases {
		for _, r := range set.phases[pi] {
			if r.fast != nil {
				fast++
			}
		}
	}
	if fast < 9 {
		t.Errorf("only %d of %d bench rules run untracked", fast, len(benchRules))
	}
	inputs := []*Input{baseInput()}
	for _, edit := range []func(in *Input){
		func(in *Input) { in.Tool.Name = "admin_x" },
		func(in *Input) { in.Principal.Groups = []string{"readers"}; in.Tool.Annotations.ReadOnlyHint = false },
		func(in *Input) { in.Tool.Name = "write_x"; in.Args = map[string]any{"path": "/tmp/x"} },
		func(in *Input) { in.Server = "db"; in.Args = map[string]any{"query": "DROP TABLE x"} },
		func(in *Input) { in.Args = map[string]any{"limit": "x"} },
		func(in *Input) { in.Origin = OriginAPI; in.Tool.Name = "restart" },
		func(in *Input) { in.Args = map[string]any{"limit": 5000.0, "path": "/etc/x"} },
		func(in *Input) {
			in.Server = "db"
			in.Args = map[string]any{"query": strings.Repeat("x", 5000) + "drop TABLE"}
		},
	} {
		in := baseInput()
		edit(in)
		inputs = append(inputs, in)
		if in.Args != nil {
			// The same arguments raw, as a call brings them: rules that
			// read args run untracked when they are small.
			raw := baseInput()
			edit(raw)
			raw.RawArgs, _ = json.Marshal(raw.Args)
			raw.Args = nil
			inputs = append(inputs, raw)
		}
	}
	for i, in := range inputs {
		got := set.Decide(context.Background(), PhaseCall, in)
		slow := *set
		slow.verdicts = &verdicts{seed: maphash.MakeSeed()} // its own, evaluated by the tracked programs
		for pi := range slow.phases {
			slow.phases[pi] = append([]rule(nil), set.phases[pi]...)
			for j := range slow.phases[pi] {
				slow.phases[pi][j].fast = nil
			}
		}
		in2 := *in
		in2.args = argsCache{}
		want := slow.Decide(context.Background(), PhaseCall, &in2)
		if diff := cmp.Diff(want, got, ignoreDuration); diff != "" {
			t.Errorf("input %d (-tracked +fast):\n%s", i, diff)
		}
	}
}

func TestConcurrentDecide(t *testing.T) {
	set := mustCompile(t, "", benchRules...)
	raw := benchArgs()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				in := benchInput()
				if (g+i)%2 == 0 {
					in.RawArgs = raw
				} else {
					in.Args = map[string]any{"path": "/etc/x"}
				}
				d := set.Decide(context.Background(), PhaseCall, &in)
				want := EffectAllow
				if (g+i)%2 == 1 {
					want = EffectDeny
				}
				if d.Effect != want {
					t.Errorf("decision %+v, want %s", d, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestFromMCP(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name string
		tool *mcp.Tool
		want Tool
	}{
		{"nil", nil, Tool{Annotations: Annotations{DestructiveHint: true, OpenWorldHint: true}}},
		{"no annotations", &mcp.Tool{Name: "t", Title: "T"}, Tool{Name: "t", Title: "T", Annotations: Annotations{DestructiveHint: true, OpenWorldHint: true}}},
		{"read-only", &mcp.Tool{Name: "t", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, Title: "From annotations"}},
			Tool{Name: "t", Title: "From annotations", Annotations: Annotations{ReadOnlyHint: true, DestructiveHint: true, OpenWorldHint: true}}},
		{"explicit", &mcp.Tool{Name: "t", Title: "Own", Annotations: &mcp.ToolAnnotations{DestructiveHint: &no, OpenWorldHint: &no, IdempotentHint: true, Title: "Other"}},
			Tool{Name: "t", Title: "Own", Annotations: Annotations{IdempotentHint: true}}},
		{"explicit true", &mcp.Tool{Name: "t", Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &yes}},
			Tool{Name: "t", Annotations: Annotations{DestructiveHint: true, OpenWorldHint: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ToolFromMCP(tt.tool)); diff != "" {
				t.Errorf("ToolFromMCP (-want +got):\n%s", diff)
			}
		})
	}
	const key = "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----"
	results := []struct {
		name string
		res  *mcp.CallToolResult
		want *Result
	}{
		{"text items joined, other content left out", &mcp.CallToolResult{
			IsError:           true,
			Content:           []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.ImageContent{Data: []byte("x")}, &mcp.TextContent{Text: "b"}},
			StructuredContent: map[string]any{"k": 1.0},
		}, &Result{IsError: true, Text: "a\nb", Structured: map[string]any{"k": 1.0}, StructuredText: `{"k":1}`}},
		{"embedded text resources are text", &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "here it is"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///key.pem", MIMEType: "application/x-pem-file", Text: key}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///k.bin", Blob: []byte(key)}},
			&mcp.ResourceLink{URI: "file:///other.pem", Name: "other"},
			&mcp.EmbeddedResource{},
		}}, &Result{Text: "here it is\n" + key}},
		{"structured content as JSON text, unescaped", &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: "done"}},
			StructuredContent: map[string]any{"z": []any{"<a&b>"}, "key": key},
		}, &Result{Text: "done", Structured: map[string]any{"z": []any{"<a&b>"}, "key": key},
			StructuredText: `{"key":"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----","z":["<a&b>"]}`}},
	}
	for _, tt := range results {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ResultFromMCP(tt.res)); diff != "" {
				t.Errorf("ResultFromMCP (-want +got):\n%s", diff)
			}
		})
	}
	// A value that does not encode (a server in the same process could
	// hand one over) is still searchable.
	odd := ResultFromMCP(&mcp.CallToolResult{StructuredContent: map[string]any{"key": key, "c": make(chan int)}})
	if !strings.Contains(odd.StructuredText, "PRIVATE KEY") {
		t.Errorf("structured content that does not encode: StructuredText = %q", odd.StructuredText)
	}
	if ResultFromMCP(nil) != nil {
		t.Error("ResultFromMCP(nil) != nil")
	}
}

// TestDecideOps checks that a rule governs the operations of its ops list,
// and one without only its phase's default (tool calls, tool listing), so
// that rules written before other operations were governed keep their
// meaning.
func TestDecideOps(t *testing.T) {
	set := mustCompile(t, EffectAllow,
		Rule{Name: "hide-admin", Phase: PhaseList, Effect: EffectDeny, When: `tool.name.startsWith("admin_")`},
		Rule{Name: "hide-secret-res", Phase: PhaseList, Ops: []string{OpListResources}, Effect: EffectDeny, When: `resource.uri.startsWith("secret:")`},
		Rule{Name: "hide-draft-prompts", Phase: PhaseList, Ops: []string{OpListPrompts}, Effect: EffectDeny, When: `prompt.name.startsWith("draft_")`},
		Rule{Name: "no-etc-tool", Phase: PhaseCall, Effect: EffectDeny, When: `true`, Message: "every tool call"},
		Rule{Name: "no-etc", Phase: PhaseCall, Ops: []string{OpReadRes}, Effect: EffectDeny, When: `resource.uri.startsWith("file:///etc")`, Message: "no system files"},
		Rule{Name: "ask-prompt", Phase: PhaseCall, Ops: []string{OpGetPrompt, OpComplete}, Effect: EffectAsk, When: `prompt.name == "deploy" && args.env == "prod"`},
		Rule{Name: "op-var", Phase: PhaseCall, Ops: []string{OpSubscribe, OpUnsubscribe}, Effect: EffectDeny, When: `op == "resources/subscribe"`},
	)
	tests := []struct {
		name  string
		phase string
		in    Input
		want  string // rule that decided, "" the default
		eff   string
	}{
		{"a tool call: the rule without ops", PhaseCall, Input{}, "no-etc-tool", EffectDeny},
		{"a read: not the tool rule", PhaseCall, Input{Op: OpReadRes, Resource: &Resource{URI: "file:///home/x"}}, "", EffectAllow},
		{"a read of /etc", PhaseCall, Input{Op: OpReadRes, Resource: &Resource{URI: "file:///etc/passwd"}}, "no-etc", EffectDeny},
		{"a read of a hidden resource: the list rule", PhaseCall, Input{Op: OpReadRes, Resource: &Resource{URI: "secret:x"}}, "hide-secret-res", EffectDeny},
		{"a subscription to a hidden resource", PhaseCall, Input{Op: OpSubscribe, Resource: &Resource{URI: "secret:x"}}, "hide-secret-res", EffectDeny},
		{"a subscription: op reads the operation", PhaseCall, Input{Op: OpSubscribe, Resource: &Resource{URI: "a:b"}}, "op-var", EffectDeny},
		{"an unsubscription", PhaseCall, Input{Op: OpUnsubscribe, Resource: &Resource{URI: "a:b"}}, "", EffectAllow},
		{"a prompt with args", PhaseCall, Input{Op: OpGetPrompt, Prompt: &Prompt{Name: "deploy"}, Args: map[string]any{"env": "prod"}}, "ask-prompt", EffectAsk},
		{"a prompt, other args", PhaseCall, Input{Op: OpGetPrompt, Prompt: &Prompt{Name: "deploy"}, Args: map[string]any{"env": "dev"}}, "", EffectAllow},
		{"a hidden prompt", PhaseCall, Input{Op: OpGetPrompt, Prompt: &Prompt{Name: "draft_x"}}, "hide-draft-prompts", EffectDeny},
		{"a completion of a hidden prompt", PhaseCall, Input{Op: OpComplete, Prompt: &Prompt{Name: "draft_x"}}, "hide-draft-prompts", EffectDeny},
		{"a completion of a template", PhaseCall, Input{Op: OpComplete, Resource: &Resource{URI: "secret:{id}"}}, "hide-secret-res", EffectDeny},
		{"listing tools", PhaseList, Input{Tool: Tool{Name: "admin_x"}}, "hide-admin", EffectDeny},
		{"listing resources: not the tool rule", PhaseList, Input{Op: OpListResources, Resource: &Resource{URI: "file:///x"}}, "", EffectAllow},
		{"listing a hidden resource", PhaseList, Input{Op: OpListResources, Resource: &Resource{URI: "secret:1"}}, "hide-secret-res", EffectDeny},
		{"listing prompts", PhaseList, Input{Op: OpListPrompts, Prompt: &Prompt{Name: "draft_1"}}, "hide-draft-prompts", EffectDeny},
		{"a call-phase op in the list phase", PhaseList, Input{Op: OpReadRes}, "", EffectDeny},
		{"a result of a read: no such phase op", PhaseResult, Input{Op: OpReadRes, Result: &Result{}}, "", EffectDeny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			in.Server, in.Principal = "files", Principal{Name: "alice"}
			d := set.Decide(t.Context(), tt.phase, &in)
			if d.Rule != tt.want || d.Effect != tt.eff {
				t.Errorf("Decide = rule %q effect %s (%s), want rule %q effect %s", d.Rule, d.Effect, d.Reason, tt.want, tt.eff)
			}
		})
	}
}

func TestCompileOps(t *testing.T) {
	tests := []struct {
		name string
		rule Rule
		want string // in the detail; "" compiles
	}{
		{"call ops", Rule{Phase: PhaseCall, Ops: []string{OpReadRes, OpGetPrompt}}, ""},
		{"list ops", Rule{Phase: PhaseList, Ops: []string{OpListPrompts}}, ""},
		{"unknown op", Rule{Phase: PhaseCall, Ops: []string{"resources/write"}}, `"resources/write" is not one a call rule can govern`},
		{"another phase's op", Rule{Phase: PhaseList, Ops: []string{OpReadRes}}, `belongs to another phase: a list rule governs "tools/list", "resources/list", "prompts/list"`},
		{"a result rule on reads", Rule{Phase: PhaseResult, Ops: []string{OpReadRes}}, `a result rule governs "tools/call"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.rule
			r.Name, r.Effect, r.When = "r", EffectDeny, "true"
			_, errs := Compile([]Rule{r}, EffectAllow)
			switch {
			case tt.want == "" && errs != nil:
				t.Fatalf("Compile: %v", errs)
			case tt.want != "" && (len(errs) != 1 || errs[0].Field != "ops" || !strings.Contains(errs[0].Detail, tt.want)):
				t.Fatalf("Compile errors = %v, want one ops error with %q", errs, tt.want)
			}
		})
	}
}

// TestSmallArgsUntracked: a rule that reads args runs untracked on raw
// arguments within maxArgsBytes, where its estimated cost is under the
// limit, and tracked on larger ones, where the limit still stops it.
func TestSmallArgsUntracked(t *testing.T) {
	set := mustCompile(t, "", Rule{Name: "shout", Phase: PhaseCall, Effect: EffectDeny,
		When: `has(args.s) && args.s.lowerAscii().contains("zzz")`})
	if r := set.phases[1][0]; r.fast == nil || !r.fastSmallArgs {
		t.Fatalf("fast %v, small args only %v: want an untracked program for small arguments", r.fast != nil, r.fastSmallArgs)
	}
	for _, tc := range []struct {
		n      int
		effect string
		error  bool
	}{
		{maxArgsBytes - 10, EffectAllow, false},
		{maxArgsBytes + 10, EffectAllow, false},
		{1 << 20, EffectDeny, true}, // tracked: over the cost limit
	} {
		in := baseInput()
		in.RawArgs = []byte(`{"s":"` + strings.Repeat("a", tc.n-8) + `"}`)
		if d := set.Decide(context.Background(), PhaseCall, in); d.Effect != tc.effect || d.Error != tc.error {
			t.Errorf("%d bytes of arguments: %+v, want %s (error %v)", tc.n, d, tc.effect, tc.error)
		}
	}
}
