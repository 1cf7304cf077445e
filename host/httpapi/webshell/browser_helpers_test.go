package webshell_test

// The browser side of the WebShell tests: one headless Chromium per test
// process, a new tab per test, console and exception capture, and waits that
// poll the DOM (never sleeps).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/mcphost/mcphost/confine"
	"github.com/mcphost/mcphost/host/httpapi"
	"github.com/mcphost/mcphost/internal/pgtest"
	"github.com/mcphost/mcphost/internal/testbin"
)

// waitBound bounds every single wait or browser action, and testBound a
// whole test's tab; they only keep a broken test from hanging and are never
// timing assertions.
const (
	waitBound = 60 * time.Second
	testBound = 4 * time.Minute
)

func TestMain(m *testing.M) {
	confine.MaybeHelper() // the sandbox helper of the stdio servers the tests start
	httpapi.DisableDebugOutput()
	code := pgtest.Main(m)
	closeBrowser()
	testbin.Cleanup()
	os.Exit(code)
}

// browser is the one Chromium of the test process, started by the first
// test that needs it.
var browser struct {
	once        sync.Once
	ctx         context.Context // its chromedp context; each tab is a child
	cancel      context.CancelFunc
	allocCancel context.CancelFunc
	dir         string // --user-data-dir
	missing     error  // chromium is not installed
	err         error  // chromium is installed but did not start
}

// chromiumPath finds Debian's chromium.
func chromiumPath() (string, error) {
	const debian = "/usr/bin/chromium"
	if fi, err := os.Stat(debian); err == nil && !fi.IsDir() {
		return debian, nil
	}
	return exec.LookPath("chromium")
}

func startBrowser() {
	path, err := chromiumPath()
	if err != nil {
		browser.missing = err
		return
	}
	dir, err := os.MkdirTemp("", "webshell-chromium-")
	if err != nil {
		browser.err = err
		return
	}
	browser.dir = dir
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox, // the tests may run as root
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		// Names for the public-URL tests (TestAppBehindPublicURL): the
		// daemon on 127.0.0.1 under host names of its own.
		chromedp.Flag("host-resolver-rules", "MAP *.mcphost.test 127.0.0.1"),
		chromedp.UserDataDir(dir),
	)
	allocCtx, allocCancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	browser.ctx, browser.cancel, browser.allocCancel = ctx, cancel, allocCancel
	// The first Do starts the browser and binds its life to ctx, so ctx
	// must have no deadline; the wait for it is bounded here instead.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }()
	select {
	case err = <-started:
	case <-time.After(waitBound):
		err = errors.New("chromium did not start within " + waitBound.String())
	}
	if err != nil {
		browser.err = err
		closeBrowser()
	}
}

// closeBrowser ends Chromium and removes its profile. TestMain calls it.
func closeBrowser() {
	if browser.cancel != nil {
		browser.cancel()
		browser.allocCancel()
		browser.cancel, browser.allocCancel = nil, nil
	}
	if browser.dir != "" {
		os.RemoveAll(browser.dir)
		browser.dir = ""
	}
}

// cspReporter runs in every document before the page's own scripts and turns
// each Content Security Policy violation into a console error, which the tab
// reports as a problem. (DevTools-injected scripts are not subject to the
// page's CSP.)
const cspReporter = `document.addEventListener('securitypolicyviolation', (e) => {
  console.error('CSP violation: ' + e.violatedDirective + ' blocked ' + (e.blockedURI || '(inline)') +
    ' at ' + e.sourceFile + ':' + e.lineNumber);
});`

// tab is one browser tab of a test. Uncaught exceptions, console.error and
// console.assert calls, CSP violations and non-network browser log errors
// are problems that fail the test. Network errors (the 401, 400 and refused
// connections several tests cause on purpose) are only logged: all console
// output is shown when the test fails, or always with
// WEBSHELL_TEST_CONSOLE=1.
type tab struct {
	t   *testing.T
	ctx context.Context // the tab's context, bounded by testBound

	mu       sync.Mutex
	problems []string
	console  []string      // everything, shown when the test fails
	seen     chan struct{} // gets a value (without blocking) on each problem
}

// newTab opens a tab in the shared browser; it is closed at the end of the
// test, which then fails if the page had problems. Without chromium the test
// is skipped, except when the environment variable CI is set.
func newTab(t *testing.T) *tab {
	t.Helper()
	return newTabWith(t)
}

// newTabWith is newTab with more options for the tab's context, such as
// chromedp.WithNewBrowserContext() for a tab in a browser of its own (its
// own cookies).
func newTabWith(t *testing.T, opts ...chromedp.ContextOption) *tab {
	t.Helper()
	requireBrowser(t)
	tb := &tab{t: t, seen: make(chan struct{}, 1)}
	tabCtx, closeTab := chromedp.NewContext(browser.ctx, append(opts, chromedp.WithListener(tb.listen))...)
	// Open the tab with no deadline (its life is bound to tabCtx) and
	// install the CSP reporter before any navigation.
	opened := make(chan error, 1)
	go func() {
		_, err := chromedp.Call(tabCtx, page.AddScriptToEvaluateOnNewDocument,
			page.AddScriptToEvaluateOnNewDocumentParams{Source: cspReporter})
		opened <- err
	}()
	var err error
	select {
	case err = <-opened:
	case <-time.After(waitBound):
		err = errors.New("timed out")
	}
	if err != nil {
		closeTab()
		t.Fatalf("opening a tab: %v", err)
	}
	ctx, cancel := context.WithTimeout(tabCtx, testBound)
	tb.ctx = ctx
	t.Cleanup(func() {
		cancel()
		closeTab()
		tb.mu.Lock()
		defer tb.mu.Unlock()
		for _, p := range tb.problems {
			t.Errorf("page problem: %s", p)
		}
		if t.Failed() || os.Getenv("WEBSHELL_TEST_CONSOLE") != "" {
			for _, c := range tb.console {
				t.Logf("browser console: %s", c)
			}
		}
	})
	return tb
}

// requireBrowser starts the shared browser if needed. Without chromium it
// skips the test, or fails it when the environment variable CI is set.
func requireBrowser(t *testing.T) {
	t.Helper()
	browser.once.Do(startBrowser)
	if browser.missing != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is required in CI: apt-get install -y chromium")
		}
		t.Skipf("chromium is not installed (%v); apt-get install -y chromium", browser.missing)
	}
	if browser.err != nil {
		t.Fatalf("starting chromium: %v", browser.err)
	}
}

// listen runs in the tab's event loop: it must return fast and send no
// command.
func (tb *tab) listen(ev any) {
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		tb.record(true, "uncaught exception: "+exceptionText(ev.ExceptionDetails))
	case *runtime.EventConsoleAPICalled:
		msg := fmt.Sprintf("console.%s: %s", ev.Type, consoleArgs(ev.Args))
		tb.record(ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert, msg)
	case *log.EventEntryAdded:
		e := ev.Entry
		msg := fmt.Sprintf("log %s/%s: %s %s", e.Source, e.Level, e.Text, e.URL)
		csp := e.Source == log.EntrySourceSecurity || strings.Contains(e.Text, "Content Security Policy")
		// Over plain http a host name that is not loopback is not a
		// trustworthy origin, and Chromium says that it ignores the
		// daemon's Cross-Origin-Opener-Policy there (TestAppBehindPublicURL's
		// names; a deployment serves its public URL over https).
		untrustworthy := strings.Contains(e.Text, "Cross-Origin-Opener-Policy header has been ignored") && strings.Contains(e.URL, ".mcphost.test:")
		tb.record(csp || (e.Level == log.EntryLevelError && e.Source != log.EntrySourceNetwork && !untrustworthy), msg)
	}
}

func (tb *tab) record(problem bool, msg string) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.console = append(tb.console, msg)
	if problem {
		tb.problems = append(tb.problems, msg)
		select {
		case tb.seen <- struct{}{}:
		default:
		}
	}
}

// problemSeen waits until a problem has been recorded since the last call,
// or at most d.
func (tb *tab) problemSeen(d time.Duration) {
	select {
	case <-tb.seen:
	case <-time.After(d):
	}
}

// takeProblems returns the problems seen so far and forgets them.
func (tb *tab) takeProblems() []string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	p := tb.problems
	tb.problems = nil
	return p
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d == nil {
		return "(no details)"
	}
	s := d.Text
	if d.Exception != nil && d.Exception.Description != "" {
		s += " " + d.Exception.Description
	}
	return fmt.Sprintf("%s (%s:%d:%d)", s, d.URL, d.LineNumber+1, d.ColumnNumber+1)
}

func consoleArgs(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		var s string
		switch {
		case a == nil:
			s = "null"
		case len(a.Value) > 0 && json.Unmarshal(a.Value, &s) == nil:
		case len(a.Value) > 0:
			s = string(a.Value)
		default:
			s = a.Description
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// do runs browser actions, each bounded by waitBound, failing the test on
// an error.
func (tb *tab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitBound)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tb.fatalf("%s: %v", what, err)
	}
}

// run runs a browser action that returns a value, bounded by waitBound,
// failing the test on an error.
func run[T any](tb *tab, what string, action chromedp.Action[T]) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitBound)
	defer cancel()
	v, err := chromedp.Run(ctx, action)
	if err != nil {
		tb.fatalf("%s: %v", what, err)
	}
	return v
}

// eval evaluates a JavaScript expression and decodes its value.
func eval[T any](tb *tab, expr string) T {
	tb.t.Helper()
	return run(tb, "evaluating "+expr, chromedp.Evaluate[T](expr))
}

// waitFor polls a JavaScript expression until it is truthy. The expression
// must not throw (use ?. for elements that may be missing).
func (tb *tab) waitFor(what, expr string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitBound+5*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr,
		chromedp.WithPollingInterval(50*time.Millisecond),
		chromedp.WithPollingTimeout(waitBound)))
	if err != nil {
		tb.fatalf("waiting for %s: %v", what, err)
	}
}

// waitVisible waits until an element matching the CSS selector is visible.
func (tb *tab) waitVisible(sel string) {
	tb.t.Helper()
	tb.do("waiting for "+sel+" to be visible", chromedp.WaitVisible(chromedp.CSS(sel)))
}

// click clicks the first element matching the CSS selector, once it is
// visible and has stopped moving, and makes sure the click reached it. A
// real mouse click goes to whatever is under the pointer: on a narrow
// screen the WebShell scrolls smoothly (picking a tool scrolls its form into
// view), and Apps above resize as they draw, so a click aimed while the
// element moved landed on something else, or in an App's frame. A click
// that landed elsewhere is tried again, up to three times, each miss logged.
func (tb *tab) click(sel string) {
	tb.t.Helper()
	tb.waitVisible(sel)
	for attempt := 1; ; attempt++ {
		// In the middle of its scroller, away from sticky heads and
		// footers (a click at the edge went to the transcript's head).
		eval[bool](tb, `(() => { window.__mcphostStill = '';
  document.querySelector(`+jsString(sel)+`)?.scrollIntoView({ block: 'center', inline: 'nearest' }); return true; })()`)
		tb.waitFor(sel+" to stand still", `(() => {
  const el = document.querySelector(`+jsString(sel)+`);
  if (!el) return false;
  const r = el.getBoundingClientRect(), k = [r.x, r.y, r.width, r.height].join();
  const still = window.__mcphostStill === k;
  window.__mcphostStill = k;
  return still;
})()`)
		eval[bool](tb, clickArm)
		tb.do("clicking "+sel, chromedp.Click(chromedp.CSS(sel)))
		missed := tb.clickMissed(sel)
		if missed == "" {
			return
		}
		if attempt == 3 {
			tb.fatalf("clicking %s: the click landed on %s, three times", sel, missed)
		}
		tb.t.Logf("clicking %s: the click landed on %s; clicking again", sel, missed)
	}
}

// clickArm notes the target of the next click the document sees (the
// first one: a label's click also clicks its control).
const clickArm = `(() => {
  if (!window.__mcphostClickListener) {
    window.__mcphostClickListener = true;
    document.addEventListener('click', (e) => {
      const c = window.__mcphostClick;
      if (c && !c.target) c.target = e.target;
    }, true);
  }
  window.__mcphostClick = { target: null };
  return true;
})()`

// clickMissed says where the click armed by clickArm went when it missed
// the element matching sel, or "" when it reached it, removed it, or
// replaced the document (a navigation).
func (tb *tab) clickMissed(sel string) string {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitBound)
	defer cancel()
	missed, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
  const c = window.__mcphostClick;
  if (!c) return '';
  const el = document.querySelector(`+jsString(sel)+`);
  if (!el) return '';
  if (!c.target) return 'no element of the page (an App frame?)';
  if (el === c.target || el.contains(c.target) || !c.target.isConnected) return '';
  const t = c.target;
  return '<' + t.tagName.toLowerCase() + (t.dataset?.testid ? ' data-testid=' + t.dataset.testid : '') + (t.className && typeof t.className === 'string' ? ' class=' + t.className : '') + '>';
})()`))
	if err != nil {
		// The click navigated while the check ran: it reached the page.
		return ""
	}
	return missed
}

// navigate loads url and waits for its load event.
func (tb *tab) navigate(url string) {
	tb.t.Helper()
	tb.do("navigating to "+redact(url), chromedp.Navigate(url))
}

// reload reloads the page and waits for its load event.
func (tb *tab) reload() {
	tb.t.Helper()
	tb.do("reloading", chromedp.Reload())
}

// fatalf fails the test with a short picture of the page.
func (tb *tab) fatalf(format string, args ...any) {
	tb.t.Helper()
	msg := fmt.Sprintf(format, args...)
	ctx, cancel := context.WithTimeout(tb.ctx, 5*time.Second)
	defer cancel()
	state, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
  const view = ['login-page', 'token-error-page', 'unreachable-page', 'app']
    .filter((id) => !document.getElementById(id)?.hidden).join(',');
  return 'location: ' + location.href + '\nvisible view: ' + view + '\npage text:\n' +
    (document.body?.innerText ?? '').slice(0, 3000);
})()`))
	if err != nil {
		state = fmt.Sprintf("(page state unavailable: %v)", err)
	}
	tb.t.Fatalf("%s\n%s", msg, state)
}

// redact hides a token in a sign-in link.
func redact(url string) string {
	if i := strings.Index(url, "#token="); i >= 0 {
		return url[:i] + "#token=…"
	}
	return url
}

// tid is the CSS selector of a data-testid.
func tid(id string) string { return fmt.Sprintf("[data-testid=%q]", id) }

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}
