package webshell_test

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestToolSearchRanks: the tool search box ranks through the daemon's
// ranker (GET /api/v1/tools?search=), so a request in words finds the tool
// that does it. "add two numbers" puts the fixture's add first, Enter
// opens it, and emptying the box shows every tool again.
func TestToolSearchRanks(t *testing.T) {
	d := newDaemon(t)
	tb := newTab(t)
	tb.login(d)
	tb.waitFor("the tool list", `document.querySelectorAll('[data-testid=tool-list] .tool-item').length > 2`)
	all := eval[int](tb, `document.querySelectorAll('[data-testid=tool-list] .tool-item').length`)

	const query = "add two numbers"
	tb.click(tid("tool-search"))
	tb.do("typing a request", chromedp.SendKeys(tid("tool-search"), query))
	tb.waitFor("the ranked results", `document.querySelector('[data-testid=tool-list]').dataset.search === `+jsString(query))
	first := eval[string](tb, `document.querySelector('[data-testid=tool-list] .tool-item')?.dataset.testid ?? ''`)
	if first != "tool-fx.add" {
		t.Errorf("the first result of %q is %q, want tool-fx.add", query, first)
	}
	if n := eval[int](tb, `document.querySelectorAll('[data-testid=tool-list] .tool-item').length`); n >= all {
		t.Errorf("the search shows %d tools, as many as the whole list (%d)", n, all)
	}
	if got := eval[string](tb, `document.getElementById('tool-count').textContent`); got == "" {
		t.Error("the tool count is empty during a search")
	}

	// Enter opens the best match.
	tb.do("pressing Enter", chromedp.SendKeys(tid("tool-search"), "\r"))
	tb.waitVisible(tid("tool-form") + `[data-tool="fx.add"]`)

	// A request nothing matches says so.
	tb.clearField(tid("tool-search"))
	tb.do("typing nonsense", chromedp.SendKeys(tid("tool-search"), "zyzzyva"))
	tb.waitFor("no match", `document.querySelector('[data-testid=tool-list]').dataset.search === 'zyzzyva'`)
	tb.waitFor("the no-match text", `!document.getElementById('tool-empty').hidden && document.getElementById('tool-empty').textContent.includes('zyzzyva')`)

	// An empty box lists every tool.
	tb.clearField(tid("tool-search"))
	tb.waitFor("every tool again", `document.querySelector('[data-testid=tool-list]').dataset.search === '' && document.querySelectorAll('[data-testid=tool-list] .tool-item').length === `+itoa(all))
}
