package webshell_test

// Real-browser tests of the WebShell: a headless Chromium drives the page
// that an in-process daemon serves, with real fixture MCP servers behind it.

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mcphost/mcphost/host/internal/identity"
)

// entrySel is every stored entry card of the transcript.
const entrySel = `[data-testid=transcript] #entries [data-testid=entry]`

// shownEntry is what the tests read back from an entry card.
type shownEntry struct {
	ID     string `json:"id"`
	Seq    int64  `json:"seq"`
	Status string `json:"status"`
	CallID string `json:"callId"`
	Name   string `json:"name"`
	Result string `json:"result"` // the text of its content blocks
	Text   string `json:"text"`   // the card's whole textContent
}

// readEntries returns the transcript's entry cards in page order.
func (tb *tab) readEntries() []shownEntry {
	tb.t.Helper()
	return eval[[]shownEntry](tb, `[...document.querySelectorAll('`+entrySel+`')].map((e) => ({
  id: e.dataset.entryId, seq: Number(e.dataset.seq), status: e.dataset.status, callId: e.dataset.callId ?? '',
  name: e.querySelector('.entry-name')?.textContent ?? '',
  result: [...e.querySelectorAll('.entry-result .content-text')].map((p) => p.textContent).join('\n'),
  text: e.textContent,
}))`)
}

// shown reports whether the element matching the CSS selector is rendered
// (not merely without a hidden attribute).
func (tb *tab) shown(sel string) bool {
	tb.t.Helper()
	return eval[bool](tb, `document.querySelector(`+jsString(sel)+`)?.checkVisibility() === true`)
}

// login opens the sign-in link and waits until the app shows both fixture
// servers ready and the event stream is live.
func (tb *tab) login(d *daemon) {
	tb.t.Helper()
	tb.navigate(d.loginURL(aliceToken))
	tb.waitVisible(tid("principal"))
	tb.waitServerReady("fx")
	tb.waitServerReady("revenue")
	tb.waitFor("the event stream to be live", `document.getElementById('live')?.dataset.state === 'live'`)
}

func (tb *tab) waitServerReady(name string) {
	tb.t.Helper()
	tb.waitFor("server "+name+" to be ready",
		`document.querySelector('[data-testid=server-list] `+tid("server-"+name)+`')?.dataset.status === 'ready'`)
}

// selectTool clicks a tool in the tool list and waits for its form.
func (tb *tab) selectTool(key string) {
	tb.t.Helper()
	tb.click(`[data-testid=tool-list] ` + tid("tool-"+key))
	tb.waitVisible(tid("tool-form") + fmt.Sprintf(`[data-tool=%q]`, key))
}

// fieldID returns the id of the form control of an argument, found through
// its label in the selected tool's form.
func (tb *tab) fieldID(name string) string {
	tb.t.Helper()
	id := eval[string](tb, `(() => {
  const name = `+jsString(name)+`;
  const form = document.querySelector('[data-testid=tool-form]');
  for (const l of form?.querySelectorAll('label[for]') ?? []) {
    const code = l.querySelector('code.field-name');
    const text = l.querySelector('.label-text');
    if ((code ? code.textContent : text?.textContent) === name) return l.htmlFor;
  }
  return '';
})()`)
	if id == "" {
		tb.fatalf("the tool form has no field labelled %q", name)
	}
	return id
}

// fill types value into the argument's (emptied) field.
func (tb *tab) fill(name, value string) {
	tb.t.Helper()
	id := tb.fieldID(name)
	tb.clearField("#" + id)
	tb.do("filling "+name, chromedp.SendKeys(chromedp.ID(id), value))
	if got := eval[string](tb, `document.getElementById(`+jsString(id)+`).value`); got != value {
		tb.fatalf("field %s holds %q after typing %q", name, got, value)
	}
}

// clearField empties a text control. (chromedp's SetValue cannot set "":
// the empty argument is dropped on the way and the control gets
// "undefined".)
func (tb *tab) clearField(sel string) {
	tb.t.Helper()
	if !eval[bool](tb, `(() => {
  const el = document.querySelector(`+jsString(sel)+`);
  if (!el) return false;
  el.value = '';
  el.dispatchEvent(new Event('input', { bubbles: true }));
  return true;
})()`) {
		tb.fatalf("no element %s to clear", sel)
	}
}

// choose selects the option with the given text in the argument's select.
func (tb *tab) choose(name, option string) {
	tb.t.Helper()
	id := tb.fieldID(name)
	ok := eval[bool](tb, `(() => {
  const sel = document.getElementById(`+jsString(id)+`);
  const opt = [...(sel?.options ?? [])].find((o) => o.textContent === `+jsString(option)+`);
  if (!opt) return false;
  sel.value = opt.value;
  sel.dispatchEvent(new Event('input', { bubbles: true }));
  sel.dispatchEvent(new Event('change', { bubbles: true }));
  return true;
})()`)
	if !ok {
		tb.fatalf("field %s has no option %q", name, option)
	}
}

// call clicks the call button and waits for the n-th entry card (1-based)
// of the transcript; it returns that entry.
func (tb *tab) call(n int) shownEntry {
	tb.t.Helper()
	tb.click(tid("call-button"))
	tb.waitFor(fmt.Sprintf("entry %d", n), fmt.Sprintf(`document.querySelectorAll('%s').length >= %d`, entrySel, n))
	es := tb.readEntries()
	return es[n-1]
}

// TestLoginFromFragment signs in with the link `mcphost serve` prints.
func TestLoginFromFragment(t *testing.T) {
	d := newDaemon(t)
	tb := newTab(t)
	tb.navigate(d.loginURL(aliceToken))

	tb.waitVisible(tid("principal"))
	tb.waitFor("the principal's name", `document.querySelector('[data-testid=principal]')?.textContent.includes('alice')`)
	if got := eval[string](tb, `document.querySelector('[data-testid=principal]').textContent`); got != "Signed in as alice" {
		t.Errorf("principal shows %q, want %q", got, "Signed in as alice")
	}
	if got := eval[string](tb, `location.href`); got != d.base+"/" {
		t.Errorf("location.href = %q after sign-in, want %q (no fragment)", got, d.base+"/")
	}
	// The tab keeps the WebShell credential the token was exchanged for
	// (origin "user"), not the token.
	if got := eval[string](tb, `sessionStorage.getItem('mcphost.token') ?? ''`); !identity.IsWebShellCredential(got) || strings.Contains(got, aliceToken) {
		t.Errorf("sessionStorage holds %q, want the WebShell credential", got)
	}
	if got := eval[string](tb, `JSON.stringify(sessionStorage)`); strings.Contains(got, aliceToken) {
		t.Errorf("sessionStorage still holds the sign-in token: %s", got)
	}
	// The token must not stay reachable with Back either.
	hist := run(tb, "reading the history", chromedp.NavigationEntries())
	for _, e := range hist.Entries {
		if strings.Contains(e.URL, aliceToken) {
			t.Errorf("history entry %d still holds the token: %s", e.ID, redact(e.URL))
		}
	}

	tb.waitServerReady("fx")
	if got := eval[string](tb, `document.querySelector('[data-testid="server-fx"] .badge')?.textContent ?? ''`); got != "ready" {
		t.Errorf("server fx badge %q, want ready", got)
	}
	if !tb.shown("#app") {
		t.Error("the app is not shown")
	}
	for _, id := range []string{"login-page", "token-error-page", "unreachable-page"} {
		if tb.shown(tid(id)) {
			t.Errorf("%s is shown next to the app", id)
		}
	}
}

// TestTokenPages shows the token error page for a token the daemon does not
// know and the sign-in page when there is no token at all.
func TestTokenPages(t *testing.T) {
	d := newDaemon(t)
	t.Run("wrong token", func(t *testing.T) {
		tb := newTab(t)
		tb.navigate(d.loginURL("wrong"))
		tb.waitVisible(tid("token-error-page"))
		if tb.shown("#app") {
			t.Error("the app is shown with a refused token")
		}
		if got := eval[string](tb, `sessionStorage.getItem('mcphost.token') ?? ''`); got != "" {
			t.Errorf("the refused token stays in sessionStorage: %q", got)
		}
		if got := eval[string](tb, `location.href`); got != d.base+"/" {
			t.Errorf("location.href = %q, want the fragment removed", got)
		}
	})
	t.Run("no token", func(t *testing.T) {
		tb := newTab(t)
		tb.navigate(d.base + "/")
		tb.waitVisible(tid("login-page"))
		if tb.shown("#app") || tb.shown(tid("token-error-page")) {
			t.Error("another view is shown next to the sign-in page")
		}
	})
}

// TestCallFromGeneratedForm fills the forms generated from the tools' input
// schemas and calls the tools.
func TestCallFromGeneratedForm(t *testing.T) {
	d := newDaemon(t)
	tb := newTab(t)
	tb.login(d)

	tb.selectTool("fx.add")
	tb.fill("a", "2")
	tb.fill("b", "3")
	e := tb.call(1)
	if e.Name != "fx.add" || e.Status != "ok" || e.Result != "5" || !strings.Contains(e.Text, "5") {
		t.Errorf("add entry = %+v, want fx.add ok with result 5", e)
	}

	tb.selectTool("revenue.show_revenue_dashboard")
	tb.choose("quarter", "Q3")
	e = tb.call(2)
	if e.Name != "revenue.show_revenue_dashboard" || e.Status != "ok" || !strings.Contains(e.Text, "$4.98M") {
		t.Errorf("revenue entry = %+v, want ok with $4.98M", e)
	}

	// What the page shows is what the daemon stored.
	sid := eval[string](tb, `sessionStorage.getItem('mcphost.session') ?? ''`)
	stored := d.entries(t, sid)
	shown := tb.readEntries()
	if len(stored) != 2 || len(shown) != 2 {
		t.Fatalf("stored %d entries, shown %d; want 2 and 2", len(stored), len(shown))
	}
	for i := range stored {
		if stored[i].ID != shown[i].ID || stored[i].Seq != shown[i].Seq || stored[i].Status != shown[i].Status {
			t.Errorf("entry %d: stored %+v, shown %+v", i, stored[i], shown[i])
		}
	}
}

// TestProgressAndCancel follows a slow call's progress and cancels it.
func TestProgressAndCancel(t *testing.T) {
	d := newDaemon(t)
	tb := newTab(t)
	tb.login(d)

	tb.selectTool("fx.slow")
	tb.fill("ms", "60000")
	tb.click(tid("call-button"))
	tb.waitVisible(tid("entry-running"))
	callID := eval[string](tb, `document.querySelector('[data-testid=entry-running]').dataset.callId`)
	running := tid("entry-running") + fmt.Sprintf(`[data-call-id=%q]`, callID)

	tb.waitVisible(running + " " + tid("progress"))
	tb.waitFor("progress above 0", `Number(document.querySelector('`+running+` [data-testid=progress]')?.dataset.progress) > 0`)
	if got := eval[string](tb, `document.querySelector('`+running+` [data-testid=progress]').dataset.total`); got != "60000" {
		t.Errorf("progress data-total = %q, want 60000", got)
	}

	tb.click(running + " " + tid("cancel-button"))
	cancelled := entrySel + fmt.Sprintf(`[data-call-id=%q]`, callID)
	tb.waitFor("the cancelled entry", `document.querySelector('`+cancelled+`')?.dataset.status === 'cancelled'`)
	tb.waitFor("the running card to go", `document.querySelector('`+running+`') === null`)
	if n := eval[int](tb, `document.querySelectorAll('`+entrySel+`').length`); n != 1 {
		t.Errorf("%d entries after the cancel, want 1", n)
	}
	e := tb.readEntries()[0]
	if e.Name != "fx.slow" || !strings.Contains(e.Text, "Cancelled") {
		t.Errorf("cancelled entry = %+v", e)
	}
}

// TestTranscriptSurvivesReloadAndRestart reloads the page, then restarts
// the whole daemon on the same data directory.
func TestTranscriptSurvivesReloadAndRestart(t *testing.T) {
	d := newDaemon(t)
	tb := newTab(t)
	tb.login(d)

	tb.selectTool("fx.echo")
	tb.fill("text", "first")
	tb.call(1)
	tb.fill("text", "second")
	tb.call(2)
	before := tb.readEntries()
	if got := []string{before[0].Result, before[1].Result}; !slices.Equal(got, []string{"first", "second"}) {
		t.Fatalf("results %q, want first, second", got)
	}
	sid := eval[string](tb, `sessionStorage.getItem('mcphost.session') ?? ''`)
	if sid == "" {
		t.Fatal("no session selected after two calls")
	}

	same := func(when string) {
		t.Helper()
		tb.waitFor("two entries "+when, `document.querySelectorAll('`+entrySel+`').length === 2`)
		after := tb.readEntries()
		for i := range after {
			if after[i].ID != before[i].ID || after[i].Seq != before[i].Seq || after[i].Result != before[i].Result {
				t.Errorf("%s: entry %d is %+v, want %+v", when, i, after[i], before[i])
			}
		}
		if after[0].Seq >= after[1].Seq {
			t.Errorf("%s: seqs %d, %d are not ascending", when, after[0].Seq, after[1].Seq)
		}
	}

	tb.reload()
	tb.waitVisible(tid("principal"))
	same("after a reload")

	if moved := d.restart(t); moved {
		// A new origin has its own sessionStorage: sign in again and pick
		// the session.
		tb.login(d)
		tb.click(`[data-testid=session-list] ` + tid("session-"+sid))
	} else {
		tb.reload()
		tb.waitVisible(tid("principal"))
	}
	same("after a daemon restart")
	tb.waitVisible(`[data-testid=session-list] ` + tid("session-"+sid))
}

// pwn is tool output that would run script if it were put into the page as
// markup.
const pwn = `<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"><b>bold</b>`

// TestScriptOutputIsText checks that tool output is shown as text.
func TestScriptOutputIsText(t *testing.T) {
	d := newDaemon(t)
	tb := newTab(t)
	tb.login(d)

	tb.selectTool("fx.echo")
	tb.fill("text", pwn)
	e := tb.call(1)
	if e.Status != "ok" || e.Result != pwn {
		t.Errorf("entry = %+v, want ok with the literal text", e)
	}
	if !strings.Contains(e.Text, "<script>") {
		t.Errorf("the entry's text lacks the literal <script>: %q", e.Text)
	}
	if got := eval[string](tb, `typeof window.__pwned`); got != "undefined" {
		t.Errorf("typeof window.__pwned = %q: the output ran as script", got)
	}
	markup := eval[[]string](tb, `[...document.querySelector('`+entrySel+`').querySelectorAll('script, img, b')].map((n) => n.outerHTML)`)
	if len(markup) != 0 {
		t.Errorf("the entry holds elements made from the output: %q", markup)
	}
	if n := eval[int](tb, `document.querySelectorAll('img[src="x"], script:not([src])').length`); n != 0 {
		t.Errorf("the page holds %d img/script elements made from the output", n)
	}
}

// TestValidationErrorInRawJSON sends arguments that do not match the
// schema from the raw JSON editor.
func TestValidationErrorInRawJSON(t *testing.T) {
	d := newDaemon(t)
	tb := newTab(t)
	tb.login(d)

	tb.selectTool("fx.echo")
	tb.click(tid("raw-json-toggle"))
	tb.waitVisible(tid("raw-json"))
	tb.clearField(tid("raw-json"))
	tb.do("typing raw JSON", chromedp.SendKeys(chromedp.CSS(tid("raw-json")), `{"text": 5}`))
	tb.click(tid("call-button"))
	tb.waitVisible(tid("form-error"))
	msg := eval[string](tb, `document.querySelector('[data-testid=form-error]').textContent`)
	t.Logf("form-error: %s", msg)
	if !strings.Contains(msg, "do not match the tool's schema") || !strings.Contains(msg, "text") {
		t.Errorf("form-error = %q, want the invalid_arguments message about text", msg)
	}

	// The failed call added nothing, on the page or in the store.
	if n := eval[int](tb, `document.querySelectorAll('`+entrySel+`, [data-testid=entry-running]').length`); n != 0 {
		t.Errorf("%d entries shown after a refused call, want 0", n)
	}
	for _, s := range d.sessions(t) {
		if s.Entries != 0 {
			t.Errorf("session %s has %d entries after a refused call, want 0", s.ID, s.Entries)
		}
		if es := d.entries(t, s.ID); len(es) != 0 {
			t.Errorf("session %s stored %+v", s.ID, es)
		}
	}
}

// TestUnreachableWhenDaemonStops stops the daemon under an open page, which
// then shows the unreachable page and keeps retrying; it comes back once the
// daemon is there again.
func TestUnreachableWhenDaemonStops(t *testing.T) {
	d := newDaemon(t)
	tb := newTab(t)
	tb.login(d)
	tb.selectTool("fx.echo")
	tb.fill("text", "before the outage")
	before := tb.call(1)
	sid := eval[string](tb, `sessionStorage.getItem('mcphost.session') ?? ''`)
	port := d.port

	d.stop(t)
	tb.waitVisible(tid("unreachable-page"))
	if tb.shown("#app") {
		t.Error("the app is still shown next to the unreachable page")
	}
	// The first retry comes after about a second and fails too.
	tb.waitFor("a second attempt", `/attempt ([2-9]|\d\d)/.test(document.getElementById('unreachable-status')?.textContent ?? '')`)
	status := eval[string](tb, `document.getElementById('unreachable-status').textContent`)
	if m := regexp.MustCompile(`Trying again in (\d+) s \(attempt (\d+)\)`).FindStringSubmatch(status); m == nil {
		t.Errorf("unreachable status %q does not say when it retries", status)
	} else if n, _ := strconv.Atoi(m[2]); n < 2 {
		t.Errorf("unreachable status %q, want attempt ≥ 2", status)
	}

	if err := d.start(t, port); err != nil {
		// Another process took the port; the page cannot find the daemon
		// anywhere else, so the recovery cannot be checked.
		t.Logf("port %d cannot be bound again (%v); the recovery is not checked", port, err)
		return
	}
	// A call the page cannot have heard of: it was made while the page had
	// no event stream (or just as it got one back).
	missed := d.callEcho(t, sid, "while the page was away")
	tb.click("#unreachable-retry")
	tb.waitVisible(tid("principal"))
	tb.waitFor("the event stream to be live again", `document.getElementById('live')?.dataset.state === 'live'`)
	tb.waitServerReady("fx")
	if tb.shown(tid("unreachable-page")) {
		t.Error("the unreachable page is still shown after the daemon came back")
	}
	// The transcript is brought up to date, without duplicates.
	tb.waitFor("the missed entry", `document.querySelectorAll('`+entrySel+`').length >= 2`)
	after := tb.readEntries()
	if len(after) != 2 || after[0].ID != before.ID || after[1].ID != missed.ID || after[1].Result != "while the page was away" {
		t.Errorf("entries after the outage %+v, want %s then %s", after, before.ID, missed.ID)
	}
}

// TestHarnessSeesPageProblems checks that the tab really reports CSP
// violations and uncaught exceptions, so that the other tests' silence
// means something.
func TestHarnessSeesPageProblems(t *testing.T) {
	d := newDaemon(t)
	tb := newTab(t)
	tb.login(d)

	eval[chromedp.Void](tb, `(() => {
  const s = document.createElement('script');
  s.textContent = 'window.__inline = 1';
  document.body.append(s);
  setTimeout(() => { throw new Error('harness check'); }, 0);
})()`)
	if eval[bool](tb, `'__inline' in window`) {
		t.Error("an inline script ran despite the CSP")
	}
	// The reports arrive as events, independently of the page's state, so
	// this waits on what the tab has collected.
	var csp, exc bool
	deadline := time.Now().Add(waitBound)
	for !(csp && exc) && time.Now().Before(deadline) {
		for _, p := range tb.takeProblems() {
			csp = csp || strings.Contains(p, "CSP violation") || strings.Contains(p, "Content Security Policy")
			exc = exc || strings.Contains(p, "harness check")
		}
		if !(csp && exc) {
			tb.problemSeen(waitBound)
		}
	}
	if !csp {
		t.Error("the CSP violation was not reported")
	}
	if !exc {
		t.Error("the uncaught exception was not reported")
	}
}
