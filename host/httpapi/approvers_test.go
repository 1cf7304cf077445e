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

const (
	carolToken = "carol-token-0123456789abcdef"
	daveToken  = "dave-token-0123456789abcdefg"
)

// TestApprovers: an ask rule that names approvers (here the group
// security) is answered by them only. The caller sees its call wait but
// its own answer is refused (403), an admin sees it and every principal's
// audit records but may not answer either, anyone else neither sees nor
// answers it (404); a security member's answer runs the call, and the
// approval events reach the caller, the approver and the admin, each
// saying whether it may answer. A rule without approvers is answered by
// the caller, as before. Before, only the caller saw the approval and
// answered it, so an agent approved its own calls with its own token
// (research/redteam.md F15), and an admin saw neither others' approvals
// nor their audit records (research/newcomer.md row 8).
func TestApprovers(t *testing.T) {
	cfg, diags := config.Parse([]byte(`
principal "alice" {
  token  = "`+aliceToken+`"
  groups = ["analysts"]
}
principal "bob" {
  token = "`+bobToken+`"
}
principal "carol" {
  token  = "`+carolToken+`"
  groups = ["security"]
}
principal "dave" {
  token = "`+daveToken+`"
}
admins = ["alice"]

policy "security-approves-slow" {
  phase     = "call"
  effect    = "ask"
  when      = "tool.name == 'slow'"
  message   = "Run the slow tool?"
  approvers = ["security"]
}
policy "confirm-echo" {
  phase  = "call"
  effect = "ask"
  when   = "tool.name == 'echo'"
}
`), "p.hcl", config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	cfg.Servers = []config.Server{stdioServer("fx", testbin.Build(t, wellbehavedPkg))}
	e := newEnvConfig(t, cfg)
	type approvals struct {
		Approvals []host.Approval `json:"approvals"`
	}
	list := func(token string) []host.Approval {
		t.Helper()
		return decode[approvals](t, e.do(t, "GET", "/api/v1/approvals", token, "")).Approvals
	}
	streams := map[string]*eventStream{}
	for name, token := range map[string]string{"alice": aliceToken, "bob": bobToken, "carol": carolToken} {
		streams[name] = e.openEvents(t, token)
	}
	sid := e.createSession(t, bobToken, "").ID
	call := func(tool string, args map[string]any) <-chan response {
		done := make(chan response, 1)
		go func() {
			r, _ := e.send(t.Context(), "POST", callPath(sid), bobToken, mustJSON(callBody{Server: "fx", Tool: tool, Arguments: args}))
			done <- r
		}()
		return done
	}
	finished := func(done <-chan response, approval string) {
		t.Helper()
		select {
		case r := <-done:
			wantStatus(t, r, http.StatusOK)
			if en := decode[store.Entry](t, r); en.Status != store.StatusOK || !strings.Contains(string(en.Trail), `"approval":"`+approval+`"`) {
				t.Errorf("the call = %+v, want ok and %s", en, approval)
			}
		case <-time.After(waitBound):
			t.Fatal("the call did not complete")
		}
	}

	done := call("slow", map[string]any{"ms": 1})
	var a host.Approval
	for name, canAnswer := range map[string]bool{"bob": false, "carol": true, "alice": false} {
		ev := streams[name].next(t, "an approval event", func(ev sseEvent) bool { return ev.Type == "approval" })
		a = decode[host.Approval](t, response{body: ev.Data})
		if a.Principal != "bob" || a.CanAnswer != canAnswer || strings.Join(a.Approvers, ",") != "security" {
			t.Errorf("%s's approval event = %+v, want bob's, canAnswer %v", name, a, canAnswer)
		}
	}
	for token, canAnswer := range map[string]bool{bobToken: false, carolToken: true, aliceToken: false} {
		if got := list(token); len(got) != 1 || got[0].ID != a.ID || got[0].CanAnswer != canAnswer {
			t.Errorf("approvals listed = %+v, want %s with canAnswer %v", got, a.ID, canAnswer)
		}
	}
	if got := list(daveToken); len(got) != 0 {
		t.Errorf("dave lists %+v", got)
	}
	wantError(t, e.do(t, "POST", "/api/v1/approvals/"+a.ID, bobToken, `{"decision":"approve"}`), http.StatusForbidden, "forbidden")
	wantError(t, e.do(t, "POST", "/api/v1/approvals/"+a.ID, aliceToken, `{"decision":"approve"}`), http.StatusForbidden, "forbidden")
	wantError(t, e.do(t, "POST", "/api/v1/approvals/"+a.ID, daveToken, `{"decision":"approve"}`), http.StatusNotFound, "not_found")
	wantStatus(t, e.do(t, "POST", "/api/v1/approvals/"+a.ID, e.signIn(t, carolToken), `{"decision":"approve"}`), http.StatusOK)
	finished(done, host.ApprovalApproved)
	for _, name := range []string{"bob", "carol", "alice"} {
		streams[name].next(t, "the approval's end", func(ev sseEvent) bool {
			return ev.Type == "approval_done" && strings.Contains(string(ev.Data), a.ID)
		})
	}

	// Without approvers the caller answers, and only the caller.
	done = call("echo", map[string]any{"text": "hi"})
	ev := streams["bob"].next(t, "an approval event", func(ev sseEvent) bool { return ev.Type == "approval" })
	a = decode[host.Approval](t, response{body: ev.Data})
	if !a.CanAnswer || len(a.Approvers) != 0 {
		t.Errorf("bob's own approval = %+v", a)
	}
	wantError(t, e.do(t, "POST", "/api/v1/approvals/"+a.ID, carolToken, `{"decision":"approve"}`), http.StatusNotFound, "not_found")
	wantStatus(t, e.do(t, "POST", "/api/v1/approvals/"+a.ID, bobToken, `{"decision":"approve"}`), http.StatusOK)
	finished(done, host.ApprovalApproved)

	// The audit log: the admin reads bob's decisions, dave none of them.
	type audit struct {
		Audit []store.Audit `json:"audit"`
	}
	if got := decode[audit](t, e.do(t, "GET", "/api/v1/audit", aliceToken, "")).Audit; len(got) != 2 || got[0].Principal != "bob" || got[1].Rule != "security-approves-slow" {
		t.Errorf("the admin's audit log = %+v, want bob's two decisions", got)
	}
	if got := decode[audit](t, e.do(t, "GET", "/api/v1/audit", daveToken, "")).Audit; len(got) != 0 {
		t.Errorf("dave's audit log = %+v", got)
	}
}
