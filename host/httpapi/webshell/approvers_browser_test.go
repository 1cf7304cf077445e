package webshell_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
)

const bobToken = "bob-token-0123456789abcdefgh"

// TestApproversInWebShell: alice (of the group analysts) sees bob's call
// that a rule leaves to the analysts, says whose it is and approves it,
// which runs it; a call of bob's that is cancelled while it waits leaves
// her WebShell with a notice that it ended; her own call that only bob
// may approve shows without buttons, saying who may, until bob approves.
func TestApproversInWebShell(t *testing.T) {
	d := newDaemonWith(t, func(cfg *config.Config, _ string) {
		parsed, diags := config.Parse([]byte(`
principal "alice" {
  token  = "`+aliceToken+`"
  groups = ["analysts"]
}
principal "bob" {
  token = "`+bobToken+`"
}
policy "analysts-approve-echo" {
  phase     = "call"
  effect    = "ask"
  when      = "tool.name == 'echo'"
  message   = "Echo this text?"
  approvers = ["analysts"]
}
policy "bob-approves-add" {
  phase     = "call"
  effect    = "ask"
  when      = "tool.name == 'add'"
  approvers = ["bob"]
}
`), "test.hcl", config.Options{})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		cfg.Principals, cfg.PolicySet, cfg.Policies = parsed.Principals, parsed.PolicySet, parsed.Policies
	})
	bob := host.Principal{Name: "bob"}
	sess, err := d.h.CreateSession(t.Context(), bob, "")
	if err != nil {
		t.Fatal(err)
	}
	bobCalls := func(ctx context.Context, text string) <-chan *store.Entry {
		done := make(chan *store.Entry, 1)
		go func() {
			e, _ := d.h.Call(ctx, host.SessionCall{Principal: bob, SessionID: sess.ID, Server: "fx", Tool: "echo",
				Arguments: json.RawMessage(`{"text":"` + text + `"}`), Origin: host.OriginAPI})
			done <- e
		}()
		return done
	}
	tb := newTab(t)
	tb.login(d)

	done := bobCalls(t.Context(), "from bob")
	tb.waitVisible(tid("approval") + " " + tid("approve-button"))
	if got := eval[string](tb, `document.querySelector('[data-testid=approval-principal]')?.textContent ?? ''`); got != "A call of bob." {
		t.Errorf("the card says %q, want whose call it is", got)
	}
	tb.screenshot("bobs-call", tid("approval"))
	tb.click(tid("approval") + " " + tid("approve-button"))
	tb.waitFor("the card to go", `!document.querySelector('[data-testid=approval]')`)
	if e := <-done; e == nil || e.Status != store.StatusOK {
		t.Fatalf("bob's approved call = %+v", e)
	}

	ctx, cancel := context.WithCancel(t.Context())
	done = bobCalls(ctx, "never")
	tb.waitVisible(tid("approval"))
	cancel()
	tb.waitFor("the card to go", `!document.querySelector('[data-testid=approval]')`)
	tb.waitFor("a notice that it ended", `[...document.querySelectorAll('#toasts .toast-text')].some((el) => el.textContent.includes('fx.echo') && el.textContent.includes('cancelled'))`)
	if e := <-done; e == nil || e.Status != store.StatusDenied {
		t.Fatalf("bob's cancelled call = %+v", e)
	}

	tb.selectTool("fx.add")
	tb.fill("a", "1")
	tb.fill("b", "2")
	tb.click(tid("call-button"))
	tb.waitVisible(tid("approval-waiting"))
	if eval[bool](tb, `!!document.querySelector('[data-testid=approval] [data-testid=approve-button]')`) {
		t.Error("alice may approve her own call, which only bob may")
	}
	tb.screenshot("waits-for-bob", tid("approval"))
	var pending []host.Approval
	for _, a := range d.h.PendingApprovals(bob) {
		if a.Principal == "alice" {
			pending = append(pending, a)
		}
	}
	if len(pending) != 1 || !pending[0].CanAnswer {
		t.Fatalf("bob's pending approvals = %+v", pending)
	}
	if err := d.h.Answer(host.Principal{Name: "alice", Groups: []string{"analysts"}}, pending[0].ID, true); !errors.Is(err, host.ErrNotApprover) {
		t.Errorf("alice approves her own call: %v, want ErrNotApprover", err)
	}
	if err := d.h.Answer(bob, pending[0].ID, true); err != nil {
		t.Fatal(err)
	}
	tb.waitFor("alice's entry", `document.querySelectorAll('`+entrySel+`').length >= 1`)
	if e := tb.readEntries()[0]; e.Status != "ok" {
		t.Errorf("alice's call approved by bob = %+v", e)
	}
	if problems := tb.takeProblems(); len(problems) > 0 {
		t.Errorf("page problems: %v", problems)
	}
}
