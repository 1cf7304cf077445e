package webshell_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testbin"
)

// withHCL parses policy and plugin blocks into the daemon's config.
func withHCL(t *testing.T, src string) func(cfg *config.Config, revenueBin string) {
	return func(cfg *config.Config, _ string) {
		parsed, diags := config.Parse([]byte(src), "test.hcl", config.Options{})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		cfg.PolicyDefault, cfg.Policies, cfg.PolicySet = parsed.PolicyDefault, parsed.Policies, parsed.PolicySet
		cfg.Plugins = parsed.Plugins
	}
}

// TestPolicyApprovalPrompt: a list rule hides a tool from the WebShell, and
// an ask rule pauses a call until the user answers the prompt; approving
// runs the call, denying records a denied entry with the rule.
func TestPolicyApprovalPrompt(t *testing.T) {
	d := newDaemonWith(t, withHCL(t, `
policy "hide-add" {
  phase  = "list"
  effect = "deny"
  when   = "tool.name == 'add'"
}
policy "approve-echo" {
  phase   = "call"
  effect  = "ask"
  when    = "tool.name == 'echo'"
  message = "Echo this text?"
}
`))
	tb := newTab(t)
	tb.login(d)
	tb.waitVisible(`[data-testid=tool-list] ` + tid("tool-fx.echo"))
	if eval[bool](tb, `!!document.querySelector('[data-testid=tool-list] [data-testid="tool-fx.add"]')`) {
		t.Error("the WebShell lists fx.add, which a list rule hides")
	}

	answer := func(button string) {
		tb.waitVisible(tid("approval"))
		tb.screenshot("prompt-"+button, tid("approval"))
		msg := eval[string](tb, `document.querySelector('[data-testid=approval-message]').textContent`)
		args := eval[string](tb, `document.querySelector('[data-testid=approval-arguments]').textContent`)
		if msg != "Echo this text?" || !strings.Contains(args, "hello policy") {
			t.Errorf("the prompt shows %q with arguments %q", msg, args)
		}
		tb.click(tid("approval") + " " + tid(button))
		tb.waitFor("the prompt to go", `!document.querySelector('[data-testid=approval]')`)
	}

	tb.selectTool("fx.echo")
	tb.fill("text", "hello policy")
	tb.click(tid("call-button"))
	answer("approve-button")
	tb.waitFor("entry 1", fmt.Sprintf(`document.querySelectorAll('%s').length >= 1`, entrySel))
	e := tb.readEntries()[0]
	if e.Status != "ok" || e.Result != "hello policy" {
		t.Errorf("approved call = %+v", e)
	}
	if got := eval[string](tb, `document.querySelector('`+entrySel+` [data-testid=trail-approval]')?.dataset.approval ?? ''`); got != "approved" {
		t.Errorf("trail approval = %q, want approved", got)
	}

	tb.click(tid("call-button"))
	answer("deny-button")
	tb.waitFor("entry 2", fmt.Sprintf(`document.querySelectorAll('%s').length >= 2`, entrySel))
	e = tb.readEntries()[1]
	tb.screenshot("denied", cardSel(2))
	if e.Status != "denied" || !strings.Contains(e.Text, "Denied by policy") || !strings.Contains(e.Text, "approve-echo") {
		t.Errorf("denied call = %+v", e)
	}
	if problems := tb.takeProblems(); len(problems) > 0 {
		t.Errorf("page problems: %v", problems)
	}
}

// TestPluginRedactInWebShell: with the redact example plugin configured, a
// call shows the redacted text and the plugin trail.
func TestPluginRedactInWebShell(t *testing.T) {
	requireBrowser(t)
	wasm := testbin.ExamplePlugin(t, "redact")
	d := newDaemonWith(t, withHCL(t, fmt.Sprintf(`
plugin "redact" {
  path   = %q
  stages = ["result"]
  tools  = ["echo"]
  config = { pattern = "sk-[A-Za-z0-9]{20,}" }
}
`, wasm)))
	tb := newTab(t)
	tb.login(d)
	tb.selectTool("fx.echo")
	tb.fill("text", "my key is sk-ABCDEFGHIJKLMNOPQRSTUVWX ok")
	e := tb.call(1)
	// The result is redacted; the arguments are the user's own input.
	if e.Status != "ok" || e.Result != "my key is [REDACTED] ok" {
		t.Errorf("entry = %+v, want the redacted result", e)
	}
	tb.screenshot("redacted", cardSel(1))
	plugin := eval[string](tb, `(() => { const li = document.querySelector('`+entrySel+` [data-testid=trail-plugin]'); return li ? li.dataset.plugin + ' ' + li.dataset.changed : ''; })()`)
	if plugin != "redact true" {
		t.Errorf("plugin trail = %q, want %q", plugin, "redact true")
	}
}

// TestApprovalOfACallFromTheCLI (issue 31 row 9, newcomer #22): a call made
// through the API (as the CLI makes it) that an ask rule pauses shows its
// origin on the card; approved in the WebShell, whose selected session is
// not the call's, the card does not vanish: it says where the call came
// from and then its outcome ("Approved — fx.echo ok"), until dismissed.
// A denied one says that it was not run.
func TestApprovalOfACallFromTheCLI(t *testing.T) {
	d := newDaemonWith(t, withHCL(t, `
policy "approve-echo" {
  phase   = "call"
  effect  = "ask"
  when    = "tool.name == 'echo'"
  message = "Echo this text?"
}
`))
	sess, err := d.h.CreateSession(t.Context(), host.Principal{Name: "alice"}, "mcphost CLI")
	if err != nil {
		t.Fatal(err)
	}
	callFromCLI := func(text string) <-chan error {
		done := make(chan error, 1)
		go func() {
			var e apiEntry
			done <- d.apiJSONErr(http.MethodPost, "/sessions/"+sess.ID+"/calls",
				map[string]any{"server": "fx", "tool": "echo", "arguments": map[string]any{"text": text}}, &e)
		}()
		return done
	}
	tb := newTab(t)
	tb.login(d)

	done := callFromCLI("from the CLI")
	tb.waitVisible(tid("approval") + " " + tid("approve-button"))
	if got := eval[string](tb, `document.querySelector('[data-testid=approval] [data-testid=approval-origin]')?.textContent ?? ''`); got != "From the CLI or another API client." {
		t.Errorf("the pending card says %q, want where the call came from", got)
	}
	tb.click(tid("approval") + " " + tid("approve-button"))
	tb.waitFor("the outcome on the card", `(document.querySelector('[data-testid=approval-result] [data-testid=approval-result-text]')?.textContent ?? '').startsWith('Approved — fx.echo ok')`)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	tb.screenshot("approved-from-cli", tid("approval-result"))
	if got := eval[string](tb, `document.querySelector('[data-testid=approval-result] [data-testid=approval-origin]')?.textContent ?? ''`); got != "From the CLI or another API client." {
		t.Errorf("the answered card says %q, want where the call came from", got)
	}
	tb.click(tid("approval-result") + " " + tid("approval-result-dismiss"))
	tb.waitFor("the dismissed card to go", `!document.querySelector('[data-testid=approval-result]')`)

	done = callFromCLI("never")
	tb.waitVisible(tid("approval") + " " + tid("deny-button"))
	tb.click(tid("approval") + " " + tid("deny-button"))
	tb.waitFor("the denial on the card", `(document.querySelector('[data-testid=approval-result] [data-testid=approval-result-text]')?.textContent ?? '') === 'Denied — fx.echo was not run.'`)
	<-done
	// The card opens the call's session, which shows both calls.
	tb.click(tid("approval-result") + " " + tid("approval-result-open"))
	tb.waitFor("the call's session", `document.getElementById('transcript-heading').textContent === 'mcphost CLI' && document.querySelectorAll('`+entrySel+`').length === 2`)
	if es := tb.readEntries(); es[0].Status != "ok" || es[1].Status != "denied" {
		t.Errorf("the call's session shows %+v, want the approved and the denied call", es)
	}
	if eval[bool](tb, `!!document.querySelector('[data-testid=approval-result]')`) {
		t.Error("the answered card stays after opening its session")
	}
	if problems := tb.takeProblems(); len(problems) > 0 {
		t.Errorf("page problems: %v", problems)
	}
}
