package webshell_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/mcphost/mcphost/internal/fixture"
)

// TestServerCard: a server's details fold behind a click; from them an
// admin reads its stderr and restarts it; its resources (a static one and
// a template) and prompts open in the main panel, read and got.
func TestServerCard(t *testing.T) {
	d := newDaemon(t)
	tb := newTab(t)
	tb.login(d)
	card := `[data-testid=server-list] ` + tid("server-fx")
	if tb.shown(card + ` .server-facts`) {
		t.Error("the details show before the click")
	}
	tb.click(tid("server-details-toggle-fx"))
	tb.waitVisible(card + ` .server-facts`)
	if txt := eval[string](tb, `document.querySelector('`+card+` .server-facts').textContent`); !strings.Contains(txt, "legacy") || !strings.Contains(txt, "stdio") {
		t.Errorf("the details say %q", txt)
	}
	// The sandbox: a badge on the card, its layers in the details.
	if got := eval[string](tb, `document.querySelector('[data-testid=server-sandbox-badge-fx]')?.textContent ?? ''`); got != "contained" {
		t.Errorf("the sandbox badge says %q, want contained", got)
	}
	if txt := eval[string](tb, `document.querySelector('[data-testid=server-sandbox-fx]')?.textContent ?? ''`); !strings.Contains(txt, "fs: on") || !strings.Contains(txt, "network: none") {
		t.Errorf("the sandbox details say %q", txt)
	}

	// Logs and restart (alice is an admin).
	tb.click(tid("server-logs-button-fx"))
	tb.waitVisible(tid("server-stderr-fx"))
	if txt := eval[string](tb, `document.querySelector('[data-testid=server-stderr-fx]').textContent`); !strings.Contains(txt, "fixture: started") {
		t.Errorf("stderr shows %q", txt)
	}
	pid := func() int { return d.h.Servers()[0].PID }
	old := pid()
	tb.click(tid("server-restart-fx"))
	tb.waitFor("fx restarted and ready", `(() => {
  const el = document.querySelector('[data-testid=server-list] [data-testid=server-fx]');
  return el?.dataset.status === 'ready' && (el.querySelector('.server-facts')?.textContent ?? '').includes('restarts1');
})()`)
	if now := pid(); now == old || now == 0 {
		t.Errorf("fx has pid %d after the restart, had %d", now, old)
	}

	// A resource, read in the main panel.
	tb.waitVisible(`[data-testid="resource-fx-` + fixture.ReadmeURI + `"]`)
	tb.click(`[data-testid="resource-fx-` + fixture.ReadmeURI + `"]`)
	tb.waitVisible(tid("resource-text"))
	if txt := eval[string](tb, `document.querySelector('[data-testid=resource-text]').textContent`); txt != fixture.ReadmeText {
		t.Errorf("the readme shows %q", txt)
	}
	// A template: the URI filled in, then read; a missing one says why.
	tb.click(`[data-testid="template-fx-` + fixture.ItemsTemplate + `"]`)
	tb.waitVisible(tid("resource-uri"))
	tb.clearField(tid("resource-uri"))
	tb.do("typing the URI", chromedp.SendKeys(tid("resource-uri"), "fixture://items/42\n"))
	tb.waitFor("item 42", `document.querySelector('[data-testid=resource-text]')?.textContent === 'item 42'`)
	tb.clearField(tid("resource-uri"))
	tb.do("typing a bad URI", chromedp.SendKeys(tid("resource-uri"), "fixture://items/\n"))
	tb.waitVisible(tid("resource-error"))

	// A prompt with its argument.
	tb.click(`[data-testid="prompt-fx-greet"]`)
	tb.waitVisible(tid("prompt-arg-name"))
	tb.do("typing the name", chromedp.SendKeys(tid("prompt-arg-name"), "Ada"))
	tb.click(tid("prompt-get"))
	tb.waitFor("the greeting", `document.querySelector('[data-testid=prompt-message]')?.textContent.includes('Hello, Ada!')`)
	if got := eval[string](tb, `document.querySelector('[data-testid=prompt-message] .badge').textContent`); got != "user" {
		t.Errorf("the message role shows %q", got)
	}
}

// TestReadsInTheTranscript: a resource read and a prompt got from a
// server's card, with a session selected, are cards of its transcript
// (the contents and the messages as the panel shows them), next to its
// tool calls.
func TestReadsInTheTranscript(t *testing.T) {
	d := newDaemon(t)
	tb := newTab(t)
	tb.login(d)
	tb.selectTool("fx.echo")
	tb.fill("text", "a session for the reads")
	tb.call(1)
	tb.waitFor("a selected session", `!!document.querySelector('[data-testid=session-list] [aria-current=true]')`)

	tb.click(tid("server-details-toggle-fx"))
	tb.waitVisible(`[data-testid="resource-fx-` + fixture.ReadmeURI + `"]`)
	tb.click(`[data-testid="resource-fx-` + fixture.ReadmeURI + `"]`)
	tb.waitVisible(tid("resource-text"))
	tb.waitFor("the read's card in the transcript", `(() => {
  const card = document.querySelector('[data-testid=entry][data-kind=resource_read]');
  return card?.dataset.status === 'ok' && (card.querySelector('[data-testid=entry-resource-text]')?.textContent ?? '') === `+jsString(fixture.ReadmeText)+`;
})()`)

	tb.click(`[data-testid="prompt-fx-greet"]`)
	tb.waitVisible(tid("prompt-arg-name"))
	tb.do("typing the name", chromedp.SendKeys(tid("prompt-arg-name"), "Ada"))
	tb.click(tid("prompt-get"))
	tb.waitFor("the prompt's card in the transcript", `(() => {
  const card = document.querySelector('[data-testid=entry][data-kind=prompt_get]');
  return card?.dataset.status === 'ok' && (card.querySelector('[data-testid=entry-prompt-message]')?.textContent ?? '').includes('Hello, Ada!');
})()`)
	if n := eval[int](tb, `document.querySelectorAll('[data-testid=entry]').length`); n != 3 {
		t.Errorf("the transcript shows %d cards, want 3 (the call, the read, the prompt)", n)
	}
}
