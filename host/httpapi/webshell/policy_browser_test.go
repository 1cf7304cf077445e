package webshell_test

import (
	"fmt"
	"strings"
	"testing"

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
