package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testbin"

	"github.com/mcphost/mcphost/internal/fixture"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReadResourceAndGetPrompt: a caller reads a server's resources (a
// static one, one of a template) and gets its prompts with arguments;
// what the server refuses comes back with its code, and bad requests say
// what is missing.
func TestReadResourceAndGetPrompt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	read := func(uri string) response {
		return e.do(t, "POST", "/api/v1/servers/fx/resources/read", aliceToken, mustJSON(map[string]string{"uri": uri}))
	}
	tests := []struct {
		name, uri, want string
	}{
		{"static", fixture.ReadmeURI, fixture.ReadmeText},
		{"template", "fixture://items/42", "item 42"},
	}
	for _, tt := range tests {
		t.Run("read "+tt.name, func(t *testing.T) {
			r := read(tt.uri)
			wantStatus(t, r, 200)
			v := decode[mcp.ReadResourceResult](t, r)
			if len(v.Contents) != 1 || v.Contents[0].Text != tt.want || v.Contents[0].URI != tt.uri {
				t.Fatalf("read %s: %s", tt.uri, r.body)
			}
		})
	}
	t.Run("read missing", func(t *testing.T) {
		wantError(t, read("fixture://items/"), 400, "upstream_error") // go-sdk's "Resource not found" is -32602
	})
	t.Run("read without uri", func(t *testing.T) {
		wantError(t, e.do(t, "POST", "/api/v1/servers/fx/resources/read", aliceToken, `{}`), 400, "bad_request")
	})
	t.Run("read unknown server", func(t *testing.T) {
		wantError(t, e.do(t, "POST", "/api/v1/servers/nope/resources/read", aliceToken, mustJSON(map[string]string{"uri": fixture.ReadmeURI})), 404, "not_found")
	})
	t.Run("read without a token", func(t *testing.T) {
		wantStatus(t, e.do(t, "POST", "/api/v1/servers/fx/resources/read", "", mustJSON(map[string]string{"uri": fixture.ReadmeURI})), 401)
	})

	get := func(body string) response {
		return e.do(t, "POST", "/api/v1/servers/fx/prompts/get", aliceToken, body)
	}
	t.Run("get prompt", func(t *testing.T) {
		r := get(`{"name": "greet", "arguments": {"name": "Ada"}}`)
		wantStatus(t, r, 200)
		v := decode[mcp.GetPromptResult](t, r)
		tc, _ := v.Messages[0].Content.(*mcp.TextContent)
		if len(v.Messages) != 1 || tc == nil || tc.Text != "Hello, Ada!" {
			t.Fatalf("greet: %s", r.body)
		}
	})
	t.Run("get unknown prompt", func(t *testing.T) {
		wantError(t, get(`{"name": "nope"}`), 400, "upstream_error")
	})
	t.Run("get without name", func(t *testing.T) {
		wantError(t, get(`{"arguments": {}}`), 400, "bad_request")
	})
	t.Run("get with non-string arguments", func(t *testing.T) {
		wantError(t, get(`{"name": "greet", "arguments": {"name": 3}}`), 400, "bad_request")
	})
}

// TestReadAndPromptPolicies: through the API, a read and a prompt are
// governed like a tool call: a deny is 403 with the rule, an ask waits
// for an answer on /approvals, a caller past its rate limit gets 429 with
// Retry-After, and each lands in the caller's audit log.
func TestReadAndPromptPolicies(t *testing.T) {
	t.Parallel()
	cfg, diags := config.Parse([]byte(`
principal "alice" {
  token = "`+aliceToken+`"
}
principal "bob" {
  token = "`+bobToken+`"
  rate_limit {
    calls_per_second = 0.1
    burst            = 3
  }
}
policy "no-readme" {
  phase   = "call"
  ops     = ["resources/read"]
  effect  = "deny"
  when    = "resource.uri == 'fixture://readme'"
  message = "not the readme"
}
policy "ask-greet" {
  phase   = "call"
  ops     = ["prompts/get"]
  effect  = "ask"
  when    = "prompt.name == 'greet' && args.name == 'Eve'"
  message = "Greet Eve?"
}
`), "p.hcl", config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	cfg.Servers = []config.Server{stdioServer("fx", testbin.Build(t, wellbehavedPkg))}
	e := newEnvConfig(t, cfg)

	r := e.do(t, "POST", "/api/v1/servers/fx/resources/read", bobToken, mustJSON(map[string]string{"uri": fixture.ReadmeURI}))
	wantError(t, r, http.StatusForbidden, "denied_by_policy")
	if body := string(r.body); !strings.Contains(body, "not the readme") || !strings.Contains(body, `"rule":"no-readme"`) {
		t.Errorf("the refusal does not name the rule and its message: %s", r.body)
	}

	// The ask: bob's get waits until bob approves it.
	done := make(chan response, 1)
	go func() {
		r, err := e.send(t.Context(), "POST", "/api/v1/servers/fx/prompts/get", bobToken, `{"name": "greet", "arguments": {"name": "Eve"}}`)
		if err != nil {
			r.body = []byte(err.Error())
		}
		done <- r
	}()
	var pending []host.Approval
	for deadline := time.Now().Add(20 * time.Second); len(pending) == 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		pending = decode[struct {
			Approvals []host.Approval `json:"approvals"`
		}](t, e.do(t, "GET", "/api/v1/approvals", bobToken, "")).Approvals
	}
	if len(pending) != 1 || pending[0].Op != "prompts/get" || pending[0].Tool != "greet" || pending[0].Server != "fx" {
		t.Fatalf("pending approvals = %+v", pending)
	}
	wantStatus(t, e.do(t, "POST", "/api/v1/approvals/"+pending[0].ID, bobToken, `{"decision": "approve"}`), http.StatusOK)
	if got := <-done; got.status != http.StatusOK || !strings.Contains(string(got.body), "Hello, Eve!") {
		t.Fatalf("the approved get: %d %s", got.status, got.body)
	}

	// The rate limit: a burst of 3 (the reads and the get above took
	// theirs), then 429.
	limited := false
	for range 8 {
		r := e.do(t, "POST", "/api/v1/servers/fx/resources/read", bobToken, mustJSON(map[string]string{"uri": "fixture://items/1"}))
		if r.status == http.StatusTooManyRequests {
			limited = r.header.Get("Retry-After") != ""
			break
		}
		wantStatus(t, r, http.StatusOK)
	}
	if !limited {
		t.Error("reads past the burst were not refused with 429 and Retry-After")
	}

	audit := e.do(t, "GET", "/api/v1/audit", bobToken, "")
	wantStatus(t, audit, http.StatusOK)
	for _, want := range []string{`"op":"resources/read","tool":"fixture://readme"`, `"rule":"no-readme"`, `"op":"prompts/get","tool":"greet"`, `"rule":"ask-greet"`} {
		if !strings.Contains(string(audit.body), want) {
			t.Errorf("bob's audit log has no %s: %s", want, audit.body)
		}
	}
}

// TestReadAndPromptInASession: with a sessionId a read and a prompt are
// entries of that session of the caller's transcript (kinds
// resource_read and prompt_get), without one they are not, and another
// principal's session is 404.
func TestReadAndPromptInASession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.createSession(t, aliceToken, "reading")
	r := e.do(t, "POST", "/api/v1/servers/fx/resources/read", aliceToken, mustJSON(map[string]string{"uri": fixture.ReadmeURI, "sessionId": s.ID}))
	wantStatus(t, r, 200)
	r = e.do(t, "POST", "/api/v1/servers/fx/prompts/get", aliceToken, `{"name": "greet", "arguments": {"name": "Ada"}, "sessionId": "`+s.ID+`"}`)
	wantStatus(t, r, 200)
	wantStatus(t, e.do(t, "POST", "/api/v1/servers/fx/resources/read", aliceToken, mustJSON(map[string]string{"uri": "fixture://items/7"})), 200)
	wantError(t, e.do(t, "POST", "/api/v1/servers/fx/resources/read", bobToken, mustJSON(map[string]string{"uri": fixture.ReadmeURI, "sessionId": s.ID})), 404, "not_found")

	page := e.entries(t, aliceToken, s.ID, "")
	var got []string
	for _, en := range page.Entries {
		got = append(got, en.Kind+" "+en.Tool+" "+en.Status)
	}
	want := []string{"resource_read " + fixture.ReadmeURI + " ok", "prompt_get greet ok"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the session holds %q, want %q", got, want)
	}
	if !strings.Contains(string(page.Entries[0].Result), strings.TrimSpace(fixture.ReadmeText)) || !strings.Contains(string(page.Entries[1].Result), "Hello, Ada!") {
		t.Errorf("the entries' results: %s / %s", page.Entries[0].Result, page.Entries[1].Result)
	}
}
