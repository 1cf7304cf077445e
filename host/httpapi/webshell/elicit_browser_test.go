package webshell_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testbin"
)

const elicitPkg = "github.com/mcphost/mcphost/testdata/servers/elicit"

// elicitSel is the open question's card.
const elicitSel = `[data-testid=elicitation]`

// elicitField returns the id of the control of a property in the open
// question's form, found through its label.
func (tb *tab) elicitField(name string) string {
	tb.t.Helper()
	id := eval[string](tb, `(() => {
  const form = document.querySelector('`+elicitSel+` [data-testid=elicitation-form]');
  for (const l of form?.querySelectorAll('label[for]') ?? []) {
    const code = l.querySelector('code.field-name');
    const text = l.querySelector('.label-text');
    if ((code ? code.textContent : text?.textContent) === `+jsString(name)+`) return l.htmlFor;
  }
  return '';
})()`)
	if id == "" {
		tb.fatalf("the question's form has no field labelled %q", name)
	}
	return id
}

func (tb *tab) elicitFill(name, value string) {
	tb.t.Helper()
	id := tb.elicitField(name)
	tb.clearField("#" + id)
	tb.do("filling "+name, chromedp.SendKeys(chromedp.ID(id), value))
}

// TestElicitationInWebShell: a server that asks while a call runs (a
// legacy session's elicitation/create and a 2026-07-28 session's
// input_required round) gets a form under the running call, generated
// from its schema with its defaults; accepting sends the answer and the
// call finishes with it; declining finishes it with the decline; a
// password field is masked and its value never shows in the transcript;
// a URL-mode question shows the full URL and opens it only after the user
// confirms.
func TestElicitationInWebShell(t *testing.T) {
	bin := testbin.Build(t, elicitPkg)
	d := newDaemonWith(t, func(cfg *config.Config, _ string) {
		legacy := stdioServer("ask", bin)
		modern := stdioServer("askm", bin)
		modern.VersionNegotiation = config.NegotiationAuto
		cfg.Servers = append(cfg.Servers, legacy, modern)
	})
	tb := newTab(t)
	tb.login(d)
	n := 0
	for _, server := range []string{"ask", "askm"} {
		tb.waitServerReady(server)

		// Accept, with one field typed and one left at its default.
		tb.selectTool(server + ".ask_name")
		tb.click(tid("call-button"))
		tb.waitVisible(elicitSel)
		if msg := eval[string](tb, `document.querySelector('`+elicitSel+` [data-testid=elicitation-message]').textContent`); msg != "Who are you?" {
			t.Errorf("%s: the question shows %q", server, msg)
		}
		if v := eval[string](tb, `document.getElementById(`+jsString(tb.elicitField("name"))+`).value`); v != "Ada" {
			t.Errorf("%s: the name field holds %q, want its default Ada", server, v)
		}
		tb.elicitFill("age", "41")
		tb.screenshot("elicitation-form-"+server, elicitSel)
		tb.click(elicitSel + " " + tid("elicitation-accept"))
		tb.waitFor("the question to go", `!document.querySelector('`+elicitSel+`')`)
		n++
		tb.waitFor(fmt.Sprintf("entry %d", n), fmt.Sprintf(`document.querySelectorAll('%s').length >= %d`, entrySel, n))
		if e := tb.readEntries()[n-1]; e.Status != "ok" || e.Result != "hello Ada, 41" {
			t.Errorf("%s: accepted call = %+v", server, e)
		}
		if got := eval[string](tb, fmt.Sprintf(`document.querySelectorAll('%s')[%d].querySelector('[data-testid=trail-input]')?.dataset.outcome ?? ''`, entrySel, n-1)); got != "accept" {
			t.Errorf("%s: the entry's trail shows the question's outcome as %q, want accept", server, got)
		}

		// An answer the schema refuses stays on the card with the reason;
		// then decline.
		tb.click(tid("call-button"))
		tb.waitVisible(elicitSel)
		tb.elicitFill("age", "900")
		tb.click(elicitSel + " " + tid("elicitation-accept"))
		tb.waitFor("the refusal", `!!document.querySelector('`+elicitSel+` [data-testid=elicitation-error]:not([hidden])')`)
		tb.click(elicitSel + " " + tid("elicitation-decline"))
		tb.waitFor("the question to go", `!document.querySelector('`+elicitSel+`')`)
		n++
		tb.waitFor(fmt.Sprintf("entry %d", n), fmt.Sprintf(`document.querySelectorAll('%s').length >= %d`, entrySel, n))
		if e := tb.readEntries()[n-1]; e.Status != "ok" || e.Result != "decline" {
			t.Errorf("%s: declined call = %+v", server, e)
		}

		// A password field is masked, and its value stays out of the
		// transcript.
		tb.selectTool(server + ".ask_password")
		tb.click(tid("call-button"))
		tb.waitVisible(elicitSel)
		pw := tb.elicitField("password")
		if typ := eval[string](tb, `document.getElementById(`+jsString(pw)+`).type`); typ != "password" {
			t.Errorf("%s: the password field is of type %q", server, typ)
		}
		tb.elicitFill("user", "ada")
		tb.elicitFill("password", "hunter2hunter2")
		tb.click(elicitSel + " " + tid("elicitation-accept"))
		n++
		tb.waitFor(fmt.Sprintf("entry %d", n), fmt.Sprintf(`document.querySelectorAll('%s').length >= %d`, entrySel, n))
		if e := tb.readEntries()[n-1]; e.Result != "user ada, password of 14 bytes" || strings.Contains(e.Text, "hunter2") {
			t.Errorf("%s: password call = %+v", server, e)
		}

		// URL mode: the full URL, opened only after the confirmation.
		_ = eval[bool](tb, `(() => { window.__opened = []; window.open = (u) => { window.__opened.push(u); return null; }; return true; })()`)
		tb.selectTool(server + ".open_url")
		tb.click(tid("call-button"))
		tb.waitVisible(elicitSel + " " + tid("elicitation-url"))
		if u := eval[string](tb, `document.querySelector('`+elicitSel+` [data-testid=elicitation-url]').textContent`); u != "https://example.com/authorize?x=1" {
			t.Errorf("%s: the URL shows as %q", server, u)
		}
		tb.click(elicitSel + " " + tid("elicitation-open"))
		tb.waitVisible(elicitSel + " " + tid("elicitation-confirm"))
		if opened := eval[int](tb, `window.__opened.length`); opened != 0 {
			t.Errorf("%s: the URL opened before the confirmation", server)
		}
		tb.screenshot("elicitation-url-"+server, elicitSel)
		tb.click(elicitSel + " " + tid("elicitation-confirm-open"))
		n++
		tb.waitFor(fmt.Sprintf("entry %d", n), fmt.Sprintf(`document.querySelectorAll('%s').length >= %d`, entrySel, n))
		if e := tb.readEntries()[n-1]; e.Result != "accept" {
			t.Errorf("%s: URL call = %+v", server, e)
		}
		if opened := eval[[]string](tb, `window.__opened`); len(opened) != 1 || opened[0] != "https://example.com/authorize?x=1" {
			t.Errorf("%s: opened %q", server, opened)
		}
	}
	if problems := tb.takeProblems(); len(problems) > 0 {
		t.Errorf("page problems: %v", problems)
	}
}
