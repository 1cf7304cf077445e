package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/policies"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// offeringsServer is an MCP server with resources, a resource template,
// prompts and completions for the operation tests: file:///etc/passwd and
// file:///srv/readme, secret:key (a list rule hides it), the prompts
// deploy (argument env) and draft_notes (a list rule hides it).
func offeringsServer(t *testing.T) string {
	url, _ := offeringsServerSubs(t)
	return url
}

// subsSeen counts the server's subscriptions to each URI (subscribe +1,
// unsubscribe -1).
type subsSeen struct {
	mu sync.Mutex
	n  map[string]int
}

func (s *subsSeen) get(uri string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n[uri]
}

func (s *subsSeen) add(uri string, d int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == nil {
		s.n = map[string]int{}
	}
	s.n[uri] += d
}

// offeringsServerSubs is offeringsServer with what it saw of
// subscriptions.
func offeringsServerSubs(t *testing.T) (string, *subsSeen) {
	seen := &subsSeen{}
	s := mcp.NewServer(&mcp.Implementation{Name: "offerings", Version: "1"}, &mcp.ServerOptions{
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{req.Params.Argument.Value + "-done"}}}, nil
		},
		SubscribeHandler: func(_ context.Context, r *mcp.SubscribeRequest) error {
			seen.add(r.Params.URI, 1)
			return nil
		},
		UnsubscribeHandler: func(_ context.Context, r *mcp.UnsubscribeRequest) error {
			seen.add(r.Params.URI, -1)
			return nil
		},
	})
	s.AddTool(&mcp.Tool{Name: "read", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	for _, uri := range []string{"file:///etc/passwd", "file:///srv/readme", "secret:key"} {
		s.AddResource(&mcp.Resource{URI: uri, Name: uri, MIMEType: "text/plain"},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "contents of " + req.Params.URI}}}, nil
			})
	}
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "file:///srv/{name}", Name: "srv"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "templated"}}}, nil
		})
	for _, name := range []string{"deploy", "draft_notes"} {
		s.AddPrompt(&mcp.Prompt{Name: name, Arguments: []*mcp.PromptArgument{{Name: "env"}}},
			func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user",
					Content: &mcp.TextContent{Text: req.Params.Name + " to " + req.Params.Arguments["env"]}}}}, nil
			})
	}
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL, seen
}

// opsPolicies govern operations besides tool calls; the rule without ops
// (every-call) keeps to tool calls.
const opsPolicies = `
principal "alice" {
  token = "alice-token-0123456789"
}

principal "carol" {
  token = "carol-token-0123456789"
  rate_limit {
    calls_per_second = 1
    burst            = 2
  }
}

policy "every-call" {
  phase   = "call"
  effect  = "deny"
  when    = "tool.name == 'nothing-of-this-server'"
}

policy "no-etc" {
  phase   = "call"
  ops     = ["resources/read", "resources/subscribe"]
  effect  = "deny"
  when    = "resource.uri.startsWith('file:///etc')"
  message = "no system files"
}

policy "ask-prod" {
  phase   = "call"
  ops     = ["prompts/get"]
  effect  = "ask"
  when    = "prompt.name == 'deploy' && args.env == 'prod'"
  message = "Deploy to prod?"
}

policy "no-prod-completion" {
  phase  = "call"
  ops    = ["completion/complete"]
  effect = "deny"
  when   = "args.env == 'prod'"
}

policy "hide-secrets" {
  phase  = "list"
  ops    = ["resources/list"]
  effect = "deny"
  when   = "resource.uri.startsWith('secret:')"
}

policy "hide-drafts" {
  phase  = "list"
  ops    = ["prompts/list"]
  effect = "deny"
  when   = "prompt.name.startsWith('draft_')"
}
`

func opsHost(t *testing.T, policies string, opts host.Options) (*host.Host, *store.Store) {
	t.Helper()
	h, st, _ := opsHostSubs(t, policies, opts)
	return h, st
}

// opsHostSubs is opsHost with what the server saw of subscriptions.
func opsHostSubs(t *testing.T, policies string, opts host.Options) (*host.Host, *store.Store, *subsSeen) {
	t.Helper()
	cfg, diags := config.Parse([]byte(policies), "ops.hcl", config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	url, seen := offeringsServerSubs(t)
	cfg.Servers = []config.Server{remoteServer("files", config.TransportStreamableHTTP, url)}
	st, err := store.Open(t.Context(), t.TempDir()+"/m.db", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	opts.Store = st
	return startHostConfig(t, cfg, opts), st, seen
}

// TestSubscriptionsAreTheCallers: a principal cannot end another's
// subscription (issue: "resources/unsubscribe from another principal"):
// the server's subscription lasts until the last of its subscribers ends
// their own.
func TestSubscriptionsAreTheCallers(t *testing.T) {
	h, _, seen := opsHostSubs(t, "", host.Options{})
	ctx := t.Context()
	alice := host.Caller{Principal: host.Principal{Name: "alice"}, Origin: host.OriginGateway}
	mallory := host.Caller{Principal: host.Principal{Name: "mallory"}, Origin: host.OriginGateway}
	const uri = "file:///srv/readme"
	if err := h.SubscribeResource(ctx, alice, "files", uri); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := h.UnsubscribeResource(ctx, mallory, "files", uri); err != nil {
			t.Fatal(err)
		}
	}
	if n := seen.get(uri); n != 1 {
		t.Fatalf("after another principal's unsubscribes the server has %d subscriptions to %s, want alice's 1", n, uri)
	}
	if err := h.SubscribeResource(ctx, mallory, "files", uri); err != nil {
		t.Fatal(err)
	}
	if err := h.UnsubscribeResource(ctx, alice, "files", uri); err != nil {
		t.Fatal(err)
	}
	if n := seen.get(uri); n != 1 {
		t.Fatalf("with mallory still subscribed the server has %d subscriptions, want 1", n)
	}
	if err := h.UnsubscribeResource(ctx, mallory, "files", uri); err != nil {
		t.Fatal(err)
	}
	if n := seen.get(uri); n != 0 {
		t.Fatalf("after the last subscriber left the server has %d subscriptions, want 0", n)
	}
}

// TestOperationsThroughThePipeline: reads, prompts, completions and
// subscriptions are governed by the rules that name them, hidden by the
// list rules that name them, rate limited and audited, and the rules
// without ops leave them alone.
func TestOperationsThroughThePipeline(t *testing.T) {
	h, st := opsHost(t, opsPolicies, host.Options{ApprovalTimeout: 5 * time.Second})
	ctx := t.Context()
	alice := host.Caller{Principal: host.Principal{Name: "alice"}, Origin: host.OriginAPI}
	var pe *host.PolicyError

	t.Run("a read the rule denies", func(t *testing.T) {
		_, err := h.ReadResource(ctx, alice, "", "files", "file:///etc/passwd", nil)
		if !errors.As(err, &pe) || pe.Rule != "no-etc" || pe.Message != "no system files" {
			t.Fatalf("read of /etc: %v, want no-etc's refusal", err)
		}
		if err := h.SubscribeResource(ctx, alice, "files", "file:///etc/passwd"); !errors.As(err, &pe) || pe.Rule != "no-etc" {
			t.Fatalf("subscription to /etc: %v, want no-etc's refusal", err)
		}
		res, err := h.ReadResource(ctx, alice, "", "files", "file:///srv/readme", nil)
		if err != nil || res.Contents[0].Text != "contents of file:///srv/readme" {
			t.Fatalf("read of /srv: %v %v", res, err)
		}
	})

	t.Run("list rules hide resources and prompts, and what they hide does not exist", func(t *testing.T) {
		rs, ts, err := h.ResourcesFor(ctx, alice, "files")
		if err != nil || len(rs) != 2 || len(ts) != 1 || slices.ContainsFunc(rs, func(r *mcp.Resource) bool { return r.URI == "secret:key" }) {
			t.Fatalf("resources %v templates %v err %v", rs, ts, err)
		}
		ps, err := h.PromptsFor(ctx, alice, "files")
		if err != nil || len(ps) != 1 || ps[0].Name != "deploy" {
			t.Fatalf("prompts %v err %v", ps, err)
		}
		var je *jsonrpc.Error
		if _, err := h.ReadResource(ctx, alice, "", "files", "secret:key", nil); !errors.As(err, &je) || je.Code != -32002 {
			t.Fatalf("read of a hidden resource: %v, want resource not found", err)
		}
		if _, err := h.GetPrompt(ctx, alice, "", "files", &mcp.GetPromptParams{Name: "draft_notes"}, nil); !errors.As(err, &je) || !strings.Contains(je.Message, "unknown prompt") {
			t.Fatalf("a hidden prompt: %v, want unknown prompt", err)
		}
	})

	t.Run("an ask on a prompt waits for the WebShell", func(t *testing.T) {
		go func() {
			for ctx.Err() == nil {
				for _, a := range h.PendingApprovals(alice.Principal) {
					if a.Op == policies.OpGetPrompt && a.Tool == "deploy" {
						_ = h.Answer(alice.Principal, a.ID, false)
						return
					}
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
		_, err := h.GetPrompt(ctx, alice, "", "files", &mcp.GetPromptParams{Name: "deploy", Arguments: map[string]string{"env": "prod"}}, nil)
		if !errors.As(err, &pe) || pe.Rule != "ask-prod" || !strings.Contains(pe.Message, "not approved") {
			t.Fatalf("a denied ask: %v", err)
		}
		res, err := h.GetPrompt(ctx, alice, "", "files", &mcp.GetPromptParams{Name: "deploy", Arguments: map[string]string{"env": "dev"}}, nil)
		if err != nil || res.Messages[0].Content.(*mcp.TextContent).Text != "deploy to dev" {
			t.Fatalf("a prompt no rule stops: %v %v", res, err)
		}
	})

	t.Run("completions", func(t *testing.T) {
		p := &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "deploy"}, Argument: mcp.CompleteParamsArgument{Name: "env", Value: "prod"}}
		if _, err := h.Complete(ctx, alice, "files", p); !errors.As(err, &pe) || pe.Rule != "no-prod-completion" {
			t.Fatalf("completion: %v, want a refusal", err)
		}
		p.Argument.Value = "st"
		res, err := h.Complete(ctx, alice, "files", p)
		if err != nil || len(res.Completion.Values) != 1 || res.Completion.Values[0] != "st-done" {
			t.Fatalf("completion: %v %v", res, err)
		}
	})

	t.Run("the audit log has every operation", func(t *testing.T) {
		log, err := st.AuditLog(ctx, "alice", 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, a := range log {
			got = append(got, a.Op+" "+a.Tool+" "+a.Effect+" "+a.Rule)
		}
		for _, want := range []string{
			"resources/read file:///etc/passwd deny no-etc",
			"resources/subscribe file:///etc/passwd deny no-etc",
			"resources/read file:///srv/readme allow ",
			"resources/read secret:key deny hide-secrets",
			"prompts/get draft_notes deny hide-drafts",
			"prompts/get deploy ask ask-prod",
			"prompts/get deploy allow ",
			"completion/complete deploy deny no-prod-completion",
			"completion/complete deploy allow ",
		} {
			if !slices.Contains(got, want) {
				t.Errorf("the audit log has no %q:\n%s", want, strings.Join(got, "\n"))
			}
		}
	})

	t.Run("reads are rate limited", func(t *testing.T) {
		carol := host.Caller{Principal: host.Principal{Name: "carol"}, Origin: host.OriginAPI}
		var rl *host.RateLimitError
		for i := range 10 {
			_, err := h.ReadResource(ctx, carol, "", "files", "file:///srv/readme", nil)
			if errors.As(err, &rl) {
				return
			}
			if err != nil {
				t.Fatalf("read %d: %v", i, err)
			}
		}
		t.Fatal("10 reads at once within a burst of 2: none was refused")
	})
}

// TestOperationsWithoutOps: the rules of policies.hcl, written for tool
// calls, deny no other operation.
func TestOperationsWithoutOps(t *testing.T) {
	h, st := opsHost(t, policySet, host.Options{ApprovalTimeout: 100 * time.Millisecond})
	ctx := t.Context()
	bob := host.Caller{Principal: host.Principal{Name: "bob"}, Origin: host.OriginGateway}
	if _, err := h.ReadResource(ctx, bob, "", "files", "file:///etc/passwd", nil); err != nil {
		t.Fatalf("read: %v", err)
	}
	if _, err := h.GetPrompt(ctx, bob, "", "files", &mcp.GetPromptParams{Name: "deploy", Arguments: map[string]string{"env": "prod"}}, nil); err != nil {
		t.Fatalf("prompt: %v", err)
	}
	if err := h.SubscribeResource(ctx, bob, "files", "file:///srv/readme"); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	if err := h.UnsubscribeResource(ctx, bob, "files", "file:///srv/readme"); err != nil {
		t.Fatalf("unsubscribe: %v", err)
	}
	rs, _, err := h.ResourcesFor(ctx, bob, "files")
	if err != nil || len(rs) != 3 {
		t.Fatalf("resources: %v %v", rs, err)
	}
	log, _ := st.AuditLog(ctx, "bob", 0, 100)
	for _, a := range log {
		if a.Effect != "allow" {
			t.Errorf("a decision that is not allow: %+v", a)
		}
	}
	if len(log) != 4 {
		t.Errorf("bob's audit log has %d records, want 4 (one per operation): %+v", len(log), log)
	}
}

// TestReadsAndPromptsInTheTranscript: a read and a prompt made in one of
// the caller's sessions are entries of it (their kinds, what they were
// about, the server's answer, the policy trail), and so is a refused one;
// one hidden by a list rule, and one made without a session, leave their
// audit record only; another principal's session is not found.
func TestReadsAndPromptsInTheTranscript(t *testing.T) {
	h, st := opsHost(t, opsPolicies, host.Options{})
	ctx := t.Context()
	alice := host.Caller{Principal: host.Principal{Name: "alice"}, Origin: host.OriginAPI}
	sess, err := h.CreateSession(ctx, alice.Principal, "reads")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.ReadResource(ctx, alice, sess.ID, "files", "file:///srv/readme", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := h.GetPrompt(ctx, alice, sess.ID, "files", &mcp.GetPromptParams{Name: "deploy", Arguments: map[string]string{"env": "dev"}}, nil); err != nil {
		t.Fatal(err)
	}
	var pe *host.PolicyError
	if _, err := h.ReadResource(ctx, alice, sess.ID, "files", "file:///etc/passwd", nil); !errors.As(err, &pe) || pe.Entry == nil || pe.Entry.Status != store.StatusDenied {
		t.Fatalf("a denied read: %v, want a refusal with its entry", err)
	}
	if _, err := h.ReadResource(ctx, alice, sess.ID, "files", "secret:key", nil); err == nil {
		t.Fatal("a hidden resource was read")
	}
	if _, err := h.ReadResource(ctx, alice, sess.ID, "files", "nothing:here", nil); err == nil {
		t.Fatal("a resource the server does not have was read")
	}
	if _, err := h.ReadResource(ctx, alice, "", "files", "file:///srv/notes", nil); err != nil {
		t.Fatal(err)
	}
	bob := host.Caller{Principal: host.Principal{Name: "bob"}, Origin: host.OriginAPI}
	if _, err := h.ReadResource(ctx, bob, sess.ID, "files", "file:///srv/readme", nil); !errors.Is(err, host.ErrNotFound) {
		t.Fatalf("a read in another principal's session: %v, want not found", err)
	}

	entries, _, err := h.Entries(ctx, alice.Principal, sess.ID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Kind+" "+e.Server+" "+e.Tool+" "+e.Status)
	}
	want := []string{
		"resource_read files file:///srv/readme ok",
		"prompt_get files deploy ok",
		"resource_read files file:///etc/passwd denied",
		"resource_read files nothing:here error",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("the session holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(string(entries[0].Result), "contents of file:///srv/readme") || string(entries[0].Arguments) != `{"uri":"file:///srv/readme"}` {
		t.Errorf("the read's entry: arguments %s, result %s", entries[0].Arguments, entries[0].Result)
	}
	if !strings.Contains(string(entries[1].Result), "deploy to dev") || string(entries[1].Arguments) != `{"env":"dev"}` {
		t.Errorf("the prompt's entry: arguments %s, result %s", entries[1].Arguments, entries[1].Result)
	}
	if entries[2].Error != "no system files" || !strings.Contains(string(entries[2].Trail), "no-etc") {
		t.Errorf("the denied read's entry: error %q, trail %s", entries[2].Error, entries[2].Trail)
	}
	log, err := st.AuditLog(ctx, "alice", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	inSession := map[string]string{}
	for _, a := range log {
		inSession[a.Op+" "+a.Tool] = a.SessionID
	}
	for what, session := range map[string]string{
		"resources/read file:///srv/readme": sess.ID,
		"resources/read file:///etc/passwd": sess.ID,
		"resources/read secret:key":         sess.ID,
		"resources/read file:///srv/notes":  "",
	} {
		if s, ok := inSession[what]; !ok || s != session {
			t.Errorf("audit of %s: session %q (recorded %v), want %q", what, s, ok, session)
		}
	}
}
