package webshell_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestSessionsDayToDay: "New session" creates nothing until the first
// call; a session is renamed in place, found by its title and by a tool it
// called, and deleted after a confirm; tool search puts name matches
// first.
func TestSessionsDayToDay(t *testing.T) {
	d := newDaemon(t)
	tb := newTab(t)
	tb.login(d)
	sessions := func() int {
		return eval[int](tb, `document.querySelectorAll('[data-testid=session-list] .session-item').length`)
	}

	// New session: nothing is created until a call.
	tb.click(tid("new-session"))
	before := sessions()
	tb.selectTool("fx.echo")
	tb.fill("text", "first call")
	tb.call(1)
	tb.waitFor("the new session in the list", `document.querySelectorAll('[data-testid=session-list] .session-item').length === `+itoa(before+1))
	tb.click(tid("new-session"))
	if n := sessions(); n != before+1 {
		t.Fatalf("New session alone created a session: %d sessions, want %d", n, before+1)
	}
	tb.waitFor("no session selected", `!document.querySelector('[data-testid=session-list] [aria-current=true]')`)
	tb.selectTool("fx.add")
	tb.fill("a", "1")
	tb.fill("b", "2")
	tb.call(1)
	tb.waitFor("the second session", `document.querySelectorAll('[data-testid=session-list] .session-item').length === `+itoa(before+2))

	// Rename the current session.
	tb.click(tid("rename-session"))
	tb.waitVisible(tid("rename-input"))
	tb.clearField(tid("rename-input"))
	tb.do("typing a title", chromedp.SendKeys(tid("rename-input"), "Adding things\n"))
	tb.waitFor("the new title in the head", `document.getElementById('transcript-heading').textContent === 'Adding things'`)
	tb.waitFor("the new title in the list", `[...document.querySelectorAll('[data-testid=session-list] .session-title')].some((e) => e.textContent === 'Adding things')`)

	// Search: by title, and by a tool a session called.
	search := func(q string, want int) {
		t.Helper()
		tb.clearField(tid("session-search"))
		if q != "" {
			tb.do("searching "+q, chromedp.SendKeys(tid("session-search"), q))
		}
		tb.waitFor("search "+q, `document.querySelectorAll('[data-testid=session-list] .session-item').length === `+itoa(want))
	}
	search("adding", 1)
	search("echo", 1)
	search("nothing-like-this", 0)
	tb.waitFor("the no-match text", `document.getElementById('session-empty').textContent.includes('nothing-like-this')`)
	search("", before+2)

	// Delete the renamed (current) session: Keep keeps it, Delete after
	// the question deletes it.
	tb.click(tid("delete-session"))
	tb.waitVisible(tid("delete-confirm-bar"))
	if txt := eval[string](tb, `document.getElementById('delete-confirm-text').textContent`); !strings.Contains(txt, "Adding things") || !strings.Contains(txt, "1 call") {
		t.Errorf("the question says %q", txt)
	}
	tb.click("#delete-confirm-no")
	if n := sessions(); n != before+2 {
		t.Fatalf("Keep deleted a session: %d", n)
	}
	tb.click(tid("delete-session"))
	tb.click(tid("delete-confirm"))
	tb.waitFor("the session gone", `document.querySelectorAll('[data-testid=session-list] .session-item').length === `+itoa(before+1))
	if strings.Contains(eval[string](tb, `document.getElementById('session-list').textContent`), "Adding things") {
		t.Error("the deleted session is still listed")
	}

	// Tool search: a name match before a description match.
	tb.clearField(tid("tool-search"))
	tb.do("searching tools", chromedp.SendKeys(tid("tool-search"), "echo"))
	tb.waitFor("search results", `document.querySelector('[data-testid=tool-list]').dataset.search === 'echo' && document.querySelectorAll('[data-testid=tool-list] .tool-item').length > 0`)
	first := eval[string](tb, `document.querySelector('[data-testid=tool-list] .tool-item')?.dataset.testid ?? ''`)
	if first != "tool-fx.echo" {
		t.Errorf("the first match of \"echo\" is %q, want tool-fx.echo", first)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
