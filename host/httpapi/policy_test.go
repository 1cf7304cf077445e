package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/testbin"
)

// TestPolicyRoutes pins the API's side of the policies: tools filtered per
// principal, a refused call as 403 with the rule and the recorded entry,
// the approval routes and the audit log.
func TestPolicyRoutes(t *testing.T) {
	cfg, diags := config.Parse([]byte(`
policy "analysts-only-add" {
  phase  = "list"
  effect = "deny"
  when   = "tool.name == 'add' && !('analysts' in principal.groups)"
}
policy "no-secret-echo" {
  phase   = "call"
  effect  = "deny"
  when    = "tool.name == 'echo' && args.text == 'secret'"
  message = "no secrets"
}
policy "approve-slow" {
  phase   = "call"
  effect  = "ask"
  when    = "tool.name == 'slow'"
  message = "Run the slow tool?"
}
`), "p.hcl", config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	cfg.Servers = []config.Server{stdioServer("fx", testbin.Build(t, wellbehavedPkg))}
	e := newEnvConfig(t, cfg)

	// bob (no groups) does not see fx.add; alice does. ?origin is checked.
	type toolsBody struct {
		Tools []host.ToolView `json:"tools"`
	}
	has := func(token string) bool {
		r := e.do(t, "GET", "/api/v1/tools?origin=user", e.signIn(t, token), "")
		wantStatus(t, r, http.StatusOK)
		for _, tl := range decode[toolsBody](t, r).Tools {
			if tl.Name == "add" {
				return true
			}
		}
		return false
	}
	if has(bobToken) || !has(aliceToken) {
		t.Errorf("fx.add visible to bob %v, alice %v; want false, true", has(bobToken), has(aliceToken))
	}
	wantError(t, e.do(t, "GET", "/api/v1/tools?origin=app", aliceToken, ""), http.StatusForbidden, "forbidden")
	wantError(t, e.do(t, "GET", "/api/v1/tools?origin=robot", aliceToken, ""), http.StatusBadRequest, "bad_request")
	sid := e.createSession(t, bobToken, "").ID
	wantError(t, e.do(t, "POST", callPath(sid), bobToken, mustJSON(callBody{Server: "fx", Tool: "add", Arguments: map[string]any{"a": 1, "b": 2}})),
		http.StatusNotFound, "not_found")

	// A refused call: 403 with the rule, and the entry as recorded.
	r := e.do(t, "POST", callPath(sid), bobToken, mustJSON(callBody{Server: "fx", Tool: "echo", Arguments: map[string]any{"text": "secret"}}))
	wantStatus(t, r, http.StatusForbidden)
	type denial struct {
		Error struct {
			Code, Message, Rule, Phase string
		} `json:"error"`
		Entry store.Entry `json:"entry"`
	}
	d := decode[denial](t, r)
	if d.Error.Code != "denied_by_policy" || d.Error.Rule != "no-secret-echo" || d.Error.Message != "no secrets" || d.Error.Phase != "call" ||
		d.Entry.Status != store.StatusDenied || !strings.Contains(string(d.Entry.Trail), "no-secret-echo") {
		t.Errorf("denial = %+v", d)
	}

	// An ask: the call waits; the approval is listed for its principal,
	// who answers it once, and for the admin alice, who may not.
	events := e.openEvents(t, bobToken)
	done := make(chan response, 1)
	go func() {
		r, _ := e.send(t.Context(), "POST", callPath(sid), bobToken, mustJSON(callBody{Server: "fx", Tool: "slow", Arguments: map[string]any{"ms": 1}}))
		done <- r
	}()
	ev := events.next(t, "an approval event", func(ev sseEvent) bool { return ev.Type == "approval" })
	a := decode[host.Approval](t, response{body: ev.Data})
	type approvals struct {
		Approvals []host.Approval `json:"approvals"`
	}
	if got := decode[approvals](t, e.do(t, "GET", "/api/v1/approvals", bobToken, "")).Approvals; len(got) != 1 || got[0].ID != a.ID || got[0].Message != "Run the slow tool?" || !got[0].CanAnswer {
		t.Errorf("bob's approvals = %+v", got)
	}
	if got := decode[approvals](t, e.do(t, "GET", "/api/v1/approvals", aliceToken, "")).Approvals; len(got) != 1 || got[0].Principal != "bob" || got[0].CanAnswer {
		t.Errorf("the admin's approvals = %+v, want bob's, not hers to answer", got)
	}
	wantError(t, e.do(t, "POST", "/api/v1/approvals/"+a.ID, aliceToken, `{"decision":"approve"}`), http.StatusForbidden, "forbidden")
	wantError(t, e.do(t, "POST", "/api/v1/approvals/"+a.ID, bobToken, `{"decision":"maybe"}`), http.StatusBadRequest, "bad_request")
	wantStatus(t, e.do(t, "POST", "/api/v1/approvals/"+a.ID, bobToken, `{"decision":"approve"}`), http.StatusOK)
	select {
	case r := <-done:
		wantStatus(t, r, http.StatusOK)
		if en := decode[store.Entry](t, r); en.Status != store.StatusOK || !strings.Contains(string(en.Trail), `"approval":"approved"`) {
			t.Errorf("approved call = %+v", en)
		}
	case <-time.After(waitBound):
		t.Fatal("the approved call did not complete")
	}
	wantError(t, e.do(t, "POST", "/api/v1/approvals/"+a.ID, bobToken, `{"decision":"deny"}`), http.StatusNotFound, "not_found")

	// The audit log: bob's decisions, newest first; the admin alice reads
	// them too.
	type audit struct {
		Audit []store.Audit `json:"audit"`
	}
	log := decode[audit](t, e.do(t, "GET", "/api/v1/audit?limit=10", bobToken, "")).Audit
	if len(log) != 3 || log[0].Rule != "approve-slow" || log[1].Rule != "no-secret-echo" || log[2].Rule != "analysts-only-add" || log[2].Phase != "list" {
		t.Errorf("bob's audit log = %+v", log)
	}
	if got := decode[audit](t, e.do(t, "GET", "/api/v1/audit", aliceToken, "")).Audit; len(got) != 3 || got[0].Principal != "bob" {
		t.Errorf("the admin's audit log = %+v, want bob's records", got)
	}
	wantError(t, e.do(t, "GET", "/api/v1/audit?limit=0", bobToken, ""), http.StatusBadRequest, "bad_request")
}
