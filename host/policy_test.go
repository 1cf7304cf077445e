package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/apps"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/pipeline"
	"github.com/mcphost/mcphost/host/internal/questions"
	"github.com/mcphost/mcphost/host/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// policyServer is an MCP server with tools that policies tell apart: read
// (read-only), write (destructive, takes a path), secret (returns a private
// key), secret_resource and secret_structured (the same key in an embedded
// resource, in structured content), show (links an App whose CSP reaches
// https://evil.example), save (binds its arguments to a Go struct with
// encoding/json, which matches keys regardless of case, and says which
// path it would write) and both (whose schema names path and Path apart;
// it answers with the arguments it got). Its prompts: greet (takes name)
// and pair (takes id and ID).
func policyServer(t *testing.T) string {
	opts := &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{}}
	opts.Capabilities.AddExtension(apps.Extension, map[string]any{"mimeTypes": []any{apps.MIMEType}})
	s := mcp.NewServer(&mcp.Implementation{Name: "policyserver", Version: "1"}, opts)
	text := func(s string) mcp.ToolHandler {
		return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}, nil
		}
	}
	yes := true
	s.AddTool(&mcp.Tool{Name: "read", InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, text("read ok"))
	s.AddTool(&mcp.Tool{Name: "write", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes}}, text("written"))
	s.AddTool(&mcp.Tool{Name: "secret", InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, text(privateKey))
	s.AddTool(&mcp.Tool{Name: "secret_resource", InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the key file:"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///id_rsa", MIMEType: "application/x-pem-file", Text: privateKey}}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "secret_structured", InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}},
			StructuredContent: map[string]any{"id": "k1", "key": privateKey}}, nil
	})
	no := false
	s.AddTool(&mcp.Tool{Name: "save", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"kind":{"type":"string"}}}`),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &no}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct {
			Path string `json:"path"`
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "would write " + in.Path + " as " + in.Kind}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "both", InputSchema: json.RawMessage(`{"type":"object","properties":{"opts":{"type":"object","properties":{"path":{},"Path":{}}}}}`),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &no}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
	})
	prompt := func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello"}}}}, nil
	}
	s.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "name"}}}, prompt)
	s.AddPrompt(&mcp.Prompt{Name: "pair", Arguments: []*mcp.PromptArgument{{Name: "id"}, {Name: "ID"}}}, prompt)
	s.AddTool(&mcp.Tool{Name: "show", InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		Meta:        mcp.Meta{"ui": map[string]any{"resourceUri": "ui://app"}}}, text("the text"))
	s.AddResource(&mcp.Resource{URI: "ui://app", Name: "app", MIMEType: apps.MIMEType}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
			URI: "ui://app", MIMEType: apps.MIMEType, Text: "<!doctype html><p>app</p>",
			Meta: mcp.Meta{"ui": map[string]any{"csp": map[string]any{"connectDomains": []any{"https://evil.example"}}}},
		}}}, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

const privateKey = "-----BEGIN RSA PRIVATE KEY-----\nMIIE...\n-----END RSA PRIVATE KEY-----"

const policySet = `
policies {
  default = "allow"
}

policy "writers-only" {
  phase   = "list"
  effect  = "deny"
  when    = "tool.name == 'write' && !('writers' in principal.groups)"
  message = "only writers"
}

policy "no-etc" {
  phase   = "call"
  effect  = "deny"
  when    = "tool.name == 'write' && args.path.startsWith('/etc')"
  message = "not under /etc"
}

policy "approve-writes" {
  phase   = "call"
  effect  = "ask"
  when    = "tool.annotations.destructiveHint && !tool.annotations.readOnlyHint"
  message = "Write it?"
}

policy "no-keys" {
  phase   = "result"
  effect  = "deny"
  when    = "result.text.contains('PRIVATE KEY') || result.structuredText.contains('PRIVATE KEY')"
  message = "withheld: a private key"
}

policy "csp-allow-list" {
  phase   = "app"
  effect  = "deny"
  when    = "!app.csp.connectDomains.all(d, d == 'https://api.example.com')"
  message = "the App reaches outside the allow-list"
}
`

// policyHost starts a host over policyServer with the given policy HCL and
// a real store.
func policyHost(t *testing.T, hcl string, opts host.Options, tweak ...func(*config.Server)) (*host.Host, *store.Store) {
	t.Helper()
	cfg, diags := config.Parse([]byte(hcl), "policies.hcl", config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	s := remoteServer("files", config.TransportStreamableHTTP, policyServer(t))
	s.Apps = config.AppsAuto
	s.AppResourceMaxBytes = apps.DefaultMaxBytes
	s.AppResourceTimeout = 5 * time.Second
	for _, f := range tweak {
		f(&s)
	}
	cfg.Servers = []config.Server{s}
	st, err := store.Open(t.Context(), t.TempDir()+"/m.db", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	opts.Store = st
	h := startHostConfig(t, cfg, opts)
	return h, st
}

var (
	alice = host.Principal{Name: "alice", Groups: []string{"writers"}}
	bob   = host.Principal{Name: "bob"} // no groups at all
)

func sessionCall(t *testing.T, h *host.Host, p host.Principal, tool, args string) (*store.Entry, error) {
	t.Helper()
	sess, err := h.CreateSession(t.Context(), p, "")
	if err != nil {
		t.Fatal(err)
	}
	return h.Call(t.Context(), host.SessionCall{Principal: p, SessionID: sess.ID, Server: "files", Tool: tool, Arguments: json.RawMessage(args), Origin: host.OriginUser})
}

func trailOf(t *testing.T, e *store.Entry) pipeline.Trail {
	t.Helper()
	var tr pipeline.Trail
	if len(e.Trail) > 0 && string(e.Trail) != "null" {
		if err := json.Unmarshal(e.Trail, &tr); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

func TestPolicyPhases(t *testing.T) {
	h, st := policyHost(t, policySet, host.Options{ApprovalTimeout: 100 * time.Millisecond})

	t.Run("list hides a tool and a call of it is answered as unknown", func(t *testing.T) {
		names := func(p host.Principal) string {
			tools, err := h.ToolsFor(t.Context(), p, host.OriginUser, "")
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, tl := range tools {
				out = append(out, tl.Tool.Name)
			}
			return strings.Join(out, ",")
		}
		if got := names(bob); got != "both,read,save,secret,secret_resource,secret_structured,show" {
			t.Errorf("bob sees %s", got)
		}
		if got := names(alice); got != "both,read,save,secret,secret_resource,secret_structured,show,write" {
			t.Errorf("alice sees %s", got)
		}
		_, err := sessionCall(t, h, bob, "write", `{"path":"/srv/x"}`)
		var ut *host.UnknownToolError
		if !errors.As(err, &ut) {
			t.Fatalf("bob calling a hidden tool: %v, want UnknownToolError", err)
		}
		log, _ := st.AuditLog(t.Context(), "bob", 0, 10)
		if len(log) != 1 || log[0].Phase != "list" || log[0].Rule != "writers-only" || log[0].Tool != "write" {
			t.Errorf("bob's audit log = %+v", log)
		}
	})

	t.Run("call deny records a denied entry with the rule", func(t *testing.T) {
		e, err := sessionCall(t, h, alice, "write", `{"path":"/etc/passwd"}`)
		var pe *host.PolicyError
		if !errors.As(err, &pe) || pe.Rule != "no-etc" || pe.Message != "not under /etc" || pe.Phase != "call" {
			t.Fatalf("err = %v, want a PolicyError of no-etc", err)
		}
		if e == nil || e.Status != store.StatusDenied || e.Error != "not under /etc" || string(e.Result) != "" && string(e.Result) != "null" {
			t.Fatalf("entry = %+v", e)
		}
		tr := trailOf(t, e)
		if len(tr.Decisions) != 1 || tr.Decisions[0].Rule != "no-etc" || tr.Decisions[0].Effect != "deny" {
			t.Errorf("trail = %+v", tr)
		}
	})

	t.Run("a rule that fails on the input denies with the reason", func(t *testing.T) {
		e, err := sessionCall(t, h, alice, "write", `{}`) // no path: args.path fails
		var pe *host.PolicyError
		if !errors.As(err, &pe) || pe.Rule != "no-etc" {
			t.Fatalf("err = %v", err)
		}
		tr := trailOf(t, e)
		if len(tr.Decisions) != 1 || !tr.Decisions[0].Error || !strings.Contains(tr.Decisions[0].Reason, "path") {
			t.Errorf("trail = %+v", tr)
		}
	})

	t.Run("result deny withholds the result", func(t *testing.T) {
		e, err := sessionCall(t, h, alice, "secret", `{}`)
		var pe *host.PolicyError
		if !errors.As(err, &pe) || pe.Rule != "no-keys" || pe.Phase != "result" {
			t.Fatalf("err = %v", err)
		}
		if e.Status != store.StatusDenied || strings.Contains(string(e.Result), "PRIVATE") {
			t.Errorf("entry status %s result %s", e.Status, e.Result)
		}
	})

	t.Run("app deny shows the text, not the App", func(t *testing.T) {
		e, err := sessionCall(t, h, alice, "show", `{}`)
		if err != nil {
			t.Fatal(err)
		}
		var d apps.Display
		if err := json.Unmarshal(e.Display, &d); err != nil {
			t.Fatal(err)
		}
		if d.HTML != "" || !strings.Contains(d.Warning, "csp-allow-list") || !strings.Contains(d.FallbackText, "the text") {
			t.Errorf("display = %+v", d)
		}
		if !strings.Contains(string(e.Result), "the text") {
			t.Errorf("the model-visible result changed: %s", e.Result)
		}
	})

	t.Run("read-only calls pass without a decision", func(t *testing.T) {
		e, err := sessionCall(t, h, bob, "read", `{}`)
		if err != nil || e.Status != store.StatusOK {
			t.Fatalf("%v %+v", err, e)
		}
		if tr := trailOf(t, e); len(tr.Decisions) != 0 {
			t.Errorf("trail = %+v", tr)
		}
	})

	t.Run("one-shot calls: ask is a deny", func(t *testing.T) {
		_, err := h.CallTool(t.Context(), host.CallToolRequest{Server: "files", Tool: "write", Arguments: json.RawMessage(`{"path":"/srv/a"}`), Principal: alice})
		var pe *host.PolicyError
		if !errors.As(err, &pe) || pe.Rule != "approve-writes" || !strings.Contains(pe.Message, "WebShell") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestPolicyAsk(t *testing.T) {
	h, _ := policyHost(t, policySet, host.Options{ApprovalTimeout: 300 * time.Millisecond})
	events, stop, err := h.Subscribe(host.Caller{Principal: host.Principal{Name: "alice"}})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	answer := func(approve bool) {
		for ev := range events {
			if ev.Type != host.EventApproval {
				continue
			}
			a := ev.Data.(host.Approval)
			if a.Tool != "write" || a.Rule != "approve-writes" || a.Message != "Write it?" || !strings.Contains(string(a.Arguments), "/srv/a") {
				t.Errorf("approval = %+v", a)
			}
			if got := h.PendingApprovals(alice); len(got) != 1 || got[0].ID != a.ID {
				t.Errorf("pending = %+v", got)
			}
			if err := h.Answer(bob, a.ID, true); !errors.Is(err, host.ErrNotFound) {
				t.Errorf("bob answered alice's approval: %v", err)
			}
			if err := h.Answer(alice, a.ID, approve); err != nil {
				t.Errorf("Answer: %v", err)
			}
			return
		}
	}

	go answer(true)
	e, err := sessionCall(t, h, alice, "write", `{"path":"/srv/a"}`)
	if err != nil || e.Status != store.StatusOK {
		t.Fatalf("approved call: %v %+v", err, e)
	}
	if tr := trailOf(t, e); tr.Approval != host.ApprovalApproved || len(tr.Decisions) != 1 || tr.Decisions[0].Effect != "ask" {
		t.Errorf("trail = %+v", tr)
	}

	go answer(false)
	e, err = sessionCall(t, h, alice, "write", `{"path":"/srv/a"}`)
	var pe *host.PolicyError
	if !errors.As(err, &pe) || e.Status != store.StatusDenied || trailOf(t, e).Approval != host.ApprovalDenied {
		t.Fatalf("denied call: %v %+v", err, e)
	}

	// Nobody answers: the call is denied when the bound passes.
	e, err = sessionCall(t, h, alice, "write", `{"path":"/srv/a"}`)
	if !errors.As(err, &pe) || !strings.Contains(pe.Message, "expired") || trailOf(t, e).Approval != questions.ApprovalExpired {
		t.Fatalf("expired call: %v %+v", err, e)
	}
	if got := h.PendingApprovals(alice); len(got) != 0 {
		t.Errorf("pending after the calls: %+v", got)
	}
}

func TestPolicyDefaultDeny(t *testing.T) {
	h, _ := policyHost(t, `
policies {
  default = "deny"
}
policy "readers" {
  phase  = "list"
  effect = "allow"
  when   = "tool.annotations.readOnlyHint"
}
policy "calls" {
  phase  = "call"
  effect = "allow"
  when   = "true"
}
policy "results" {
  phase  = "result"
  effect = "allow"
  when   = "true"
}
`, host.Options{})
	tools, _ := h.ToolsFor(t.Context(), bob, host.OriginAPI, "")
	if len(tools) != 5 {
		t.Errorf("bob sees %d tools, want the 5 read-only ones", len(tools))
	}
	// No app rule: the default denies the App, the text stays.
	e, err := sessionCall(t, h, bob, "show", `{}`)
	if err != nil || e.Status != store.StatusOK || !strings.Contains(string(e.Display), "default policy") {
		t.Fatalf("%v %+v %s", err, e, e.Display)
	}
}

// TestPolicyAppRequests checks that App requests the server's switches
// allow are still decided by the app phase with origin "app".
func TestPolicyAppRequests(t *testing.T) {
	h, st := policyHost(t, `
policy "no-app-messages" {
  phase   = "app"
  effect  = "deny"
  when    = "origin == 'app' && app.resourceUri == 'ui://app'"
  message = "Apps do not write to this transcript"
}
`, host.Options{}, func(s *config.Server) { s.AppMessages, s.AppOpenLinks = true, true })
	e, err := sessionCall(t, h, alice, "show", `{}`)
	if err != nil || !strings.Contains(string(e.Display), `"html":"\u003c!doctype`) {
		t.Fatalf("the App did not render for the user: %v %s", err, e.Display)
	}
	msg := json.RawMessage(`{"role":"user","content":[{"type":"text","text":"hello"}]}`)
	_, err = h.AppMessage(t.Context(), alice, e.SessionID, e.ID, msg)
	var ad *host.AppDeniedError
	if !errors.As(err, &ad) || !strings.Contains(ad.Reason, "no-app-messages") {
		t.Fatalf("App message: %v, want a denial by no-app-messages", err)
	}
	_, err = h.CheckAppLink(t.Context(), alice, e.SessionID, e.ID, "https://example.com/")
	if !errors.As(err, &ad) {
		t.Fatalf("App link: %v, want a denial", err)
	}
	log, _ := st.AuditLog(t.Context(), "alice", 0, 10)
	if len(log) < 2 || log[0].Origin != "app" || log[0].Phase != "app" {
		t.Errorf("audit = %+v", log)
	}
}

// TestPolicyAskLimits: a principal may have 32 calls waiting for approval;
// the 33rd is refused with ErrTooManyApprovals, records no entry, and its
// ask decision still reaches the audit log. A call cancelled while it waits
// ends its approval (approval_done "cancelled") and is not run.
func TestPolicyAskLimits(t *testing.T) {
	h, st := policyHost(t, policySet, host.Options{ApprovalTimeout: time.Minute})
	events, stop, err := h.Subscribe(host.Caller{Principal: host.Principal{Name: "alice"}})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	sess, err := h.CreateSession(t.Context(), alice, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	write := func(ctx context.Context) error {
		_, err := h.Call(ctx, host.SessionCall{Principal: alice, SessionID: sess.ID, Server: "files", Tool: "write",
			Arguments: json.RawMessage(`{"path":"/srv/a"}`), Origin: host.OriginUser})
		return err
	}
	const limit = 32
	done := make(chan error, limit)
	for range limit {
		go func() { done <- write(ctx) }()
	}
	for n := 0; n < limit; {
		if ev := <-events; ev.Type == host.EventApproval {
			n++
		}
	}
	auditBefore, err := h.AuditLog(t.Context(), host.Caller{Principal: alice}, 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	if err := write(t.Context()); !errors.Is(err, host.ErrTooManyApprovals) {
		t.Fatalf("call 33: %v, want ErrTooManyApprovals", err)
	}
	audit, err := h.AuditLog(t.Context(), host.Caller{Principal: alice}, 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	if len(audit) != len(auditBefore)+1 || audit[0].Effect != "ask" || audit[0].Rule != "approve-writes" {
		t.Errorf("audit after the refused call: %d records (before %d), want one more: its ask decision; got %+v", len(audit), len(auditBefore), audit)
	}

	// Cancel the waiting calls: each approval ends as cancelled, and no
	// write reaches the server.
	cancel()
	for range limit {
		if err := <-done; err == nil {
			t.Error("a call cancelled while waiting for approval succeeded")
		}
	}
	cancelled := 0
	for cancelled < limit {
		ev := <-events
		if d, ok := ev.Data.(host.ApprovalDone); ok && ev.Type == host.EventApprovalDone {
			if d.Outcome != host.ApprovalCancelled {
				t.Errorf("approval ended %q, want cancelled", d.Outcome)
			}
			cancelled++
		}
	}
	if got := h.PendingApprovals(alice); len(got) != 0 {
		t.Errorf("%d approvals still pending", len(got))
	}
	entries, _, err := st.Entries(t.Context(), "alice", sess.ID, 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Status == store.StatusOK {
			t.Errorf("a cancelled call ran: %+v", e)
		}
	}
}

// TestPolicyArgumentKeys: the server gets the arguments the policies
// decided on (research/redteam.md F4). The save tool binds its arguments
// with encoding/json, which matches keys regardless of case and keeps the
// last, while a rule reads args.path by exact key: arguments in which an
// object, at any depth, has a key twice or keys that differ only in case
// are refused before any rule runs, with an upstream.ArgumentsError naming them,
// unless the tool's schema names the keys apart.
func TestPolicyArgumentKeys(t *testing.T) {
	h, _ := policyHost(t, `
policy "writes-stay-in-srv-data" {
  phase   = "call"
  effect  = "deny"
  when    = "tool.name == 'save' && (!has(args.path) || !args.path.startsWith('/srv/data/') || args.path.contains('..'))"
  message = "Files may only be written under /srv/data."
}
`, host.Options{})
	tests := []struct {
		name, tool, args string
		want             string // the server's answer; else the refusal's rule, or what its reason says
	}{
		{"a path under /srv/data", "save", `{"path":"/srv/data/ok","kind":"text"}`, "would write /srv/data/ok as text"},
		{"a path elsewhere", "save", `{"path":"/etc/cron.d/evil"}`, "rule writes-stay-in-srv-data"},
		{"PATH next to path", "save", `{"path":"/srv/data/ok","PATH":"/etc/cron.d/evil"}`,
			`invalid arguments: keys that a server may read as one key: "path" and "PATH" (they differ only in case). Send each key once, in one spelling`},
		{"Path next to path", "save", `{"path":"/srv/data/ok.txt","Path":"/root/.ssh/authorized_keys"}`, `"path" and "Path" (they differ only in case)`},
		{"PATH first", "save", `{"PATH":"/etc/cron.d/evil","path":"/srv/data/ok"}`, `"PATH" and "path"`},
		{"a key twice", "save", `{"path":"/srv/data/ok","path":"/etc/x"}`, `"path" given 2 times`},
		{"a key twice through an escape", "save", `{"path":"/etc/x","p\u0061th":"/srv/data/ok"}`, `"path" given 2 times`},
		{"keys equal under Unicode folding", "save", `{"path":"/srv/data/ok","kind":"text","\u212aind":"link"}`, `"kind" and "\u212aind"`},
		{"at any depth", "save", `{"path":"/srv/data/ok","opts":[{"mode":"a","MODE":"b"}]}`, `"mode" and "MODE" (they differ only in case) in the object at "/opts/0"`},
		{"keys the schema names apart", "both", `{"opts":{"path":"a","Path":"b"}}`, `{"opts":{"path":"a","Path":"b"}}`},
		{"but not given twice", "both", `{"opts":{"path":"a","path":"b"}}`, `"path" given 2 times in the object at "/opts"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := sessionCall(t, h, alice, tt.tool, tt.args)
			var (
				ae *host.ArgumentsError
				pe *host.PolicyError
			)
			switch {
			case errors.As(err, &ae):
				if !strings.Contains(ae.Error(), tt.want) {
					t.Errorf("refused with %q, want it to say %s", ae.Error(), tt.want)
				}
				if e != nil {
					t.Errorf("a refused call was recorded: %+v", e)
				}
			case errors.As(err, &pe):
				if got := "rule " + pe.Rule; got != tt.want {
					t.Errorf("denied by %s, want %s", got, tt.want)
				}
			case err != nil:
				t.Fatal(err)
			default:
				var res mcp.CallToolResult
				if err := json.Unmarshal(e.Result, &res); err != nil {
					t.Fatal(err)
				}
				if len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != tt.want {
					t.Errorf("the server answered %s, want %s", e.Result, tt.want)
				}
			}
		})
	}

	t.Run("a prompt's argument names that differ only in case", func(t *testing.T) {
		caller := host.Caller{Principal: alice, Origin: host.OriginAPI}
		_, err := h.GetPrompt(t.Context(), caller, "", "files", &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "a", "NAME": "b"}}, nil)
		var ae *host.ArgumentsError
		if !errors.As(err, &ae) || !strings.Contains(ae.Reason, `"NAME" and "name"`) {
			t.Errorf("greet with name and NAME: %v, want an ArgumentsError naming both", err)
		}
		if _, err := h.GetPrompt(t.Context(), caller, "", "files", &mcp.GetPromptParams{Name: "pair", Arguments: map[string]string{"id": "a", "ID": "b"}}, nil); err != nil {
			t.Errorf("pair, which takes id and ID: %v", err)
		}
	})
}

// TestPolicyResultContent: a result rule sees a private key wherever the
// result carries it as text (research/redteam.md F5): in a text item, in
// an embedded resource (result.text) and in the structured content
// (result.structuredText). The result is withheld and not recorded.
func TestPolicyResultContent(t *testing.T) {
	h, _ := policyHost(t, policySet, host.Options{})
	for _, tool := range []string{"secret", "secret_resource", "secret_structured"} {
		t.Run(tool, func(t *testing.T) {
			e, err := sessionCall(t, h, bob, tool, `{}`)
			var pe *host.PolicyError
			if !errors.As(err, &pe) || pe.Rule != "no-keys" || pe.Phase != "result" {
				t.Fatalf("err = %v, want the no-keys rule's refusal", err)
			}
			if e.Status != store.StatusDenied || strings.Contains(string(e.Result), "PRIVATE") {
				t.Errorf("entry status %s result %s", e.Status, e.Result)
			}
		})
	}
}
