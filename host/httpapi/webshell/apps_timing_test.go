package webshell_test

import (
	"flag"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mcphost/mcphost/host/config"
)

// appRenderRuns turns TestAppRenderTime on; it is a measurement for
// BENCHMARKS.md, not a check, so ordinary test runs skip it.
var appRenderRuns = flag.Int("app-render-runs", 0, "TestAppRenderTime: how many App renders to time (0 skips it)")

// TestAppRenderTime times, in the page, how long the revenue dashboard
// takes from its tool result reaching the WebShell (the entry card is in the
// DOM) to the App being ready (initialized) and to the App visible (it has
// drawn the chart and told the host), over N calls, each in a new session
// so that one App is mounted at a time. It reports the median, p90, minimum
// and maximum; it asserts nothing about them.
//
//	go test ./host/httpapi/webshell/ -run TestAppRenderTime -app-render-runs 30 -v
func TestAppRenderTime(t *testing.T) {
	if *appRenderRuns <= 0 {
		t.Skip("a measurement: run with -app-render-runs N")
	}
	d := newDaemon(t)
	tb := newTab(t)
	tb.login(d)
	tb.enableAppLog()
	tb.selectTool(revenueTool)
	tb.choose("quarter", "Q3")

	var ready, visible []time.Duration
	for i := range *appRenderRuns {
		tb.click(tid("new-session"))
		tb.waitFor("an empty transcript", `document.querySelectorAll('`+entrySel+`').length === 0 && document.querySelectorAll('iframe').length === 0`)
		eval[bool](tb, `(() => {
  const t = window.__appTiming = { t0: 0, ready: 0, drew: 0 };
  const entries = document.getElementById('entries');
  const mo = new MutationObserver(() => {
    const slot = entries.querySelector('[data-testid=app-slot]');
    if (!slot) return;
    if (!t.t0) t.t0 = performance.now();
    if (!t.ready && slot.dataset.mcpAppState === 'ready') t.ready = performance.now();
    if (t.ready) mo.disconnect();
  });
  mo.observe(entries, { childList: true, subtree: true, attributes: true, attributeFilter: ['data-mcp-app-state'] });
  const log = window.__mcphostAppLog = [];
  log.push = function (...recs) {
    for (const r of recs) if (!t.drew && r?.data?.event === 'drew') t.drew = performance.now();
    return Array.prototype.push.apply(this, recs);
  };
  return true;
})()`)
		tb.click(tid("call-button"))
		tb.waitFor(fmt.Sprintf("run %d: the App to draw", i+1), `window.__appTiming.drew > 0 && window.__appTiming.ready > 0`)
		ms := eval[[]float64](tb, `[window.__appTiming.ready - window.__appTiming.t0, window.__appTiming.drew - window.__appTiming.t0]`)
		ready = append(ready, time.Duration(ms[0]*float64(time.Millisecond)))
		visible = append(visible, time.Duration(ms[1]*float64(time.Millisecond)))
	}
	for _, m := range []struct {
		name string
		ds   []time.Duration
	}{{"tool result to App ready (initialized)", ready}, {"tool result to App visible (chart drawn)", visible}} {
		s := slices.Clone(m.ds)
		slices.Sort(s)
		q := func(p int) time.Duration { return s[min(len(s)-1, len(s)*p/100)].Round(100 * time.Microsecond) }
		t.Logf("%s, %d runs: median %v, p90 %v, min %v, max %v", m.name, len(s), q(50), q(90), s[0].Round(100*time.Microsecond), s[len(s)-1].Round(100*time.Microsecond))
	}
}

// TestAppRenderTimeOfficial times an official example App (the budget
// allocator from npm, on the official SDK) the same way: from its tool
// result reaching the WebShell to the App being ready (initialized, tool
// input and result sent) and to the App visible. The App's frame is out of
// process and says nothing when it has drawn, so "visible" is the first
// screenshot of its frame that shows the drawn chart (at least 60 colours);
// screenshots are taken back to back, so that figure is an upper bound, late
// by at most one screenshot. It asserts nothing about the figures.
//
//	go test ./host/httpapi/webshell/ -run TestAppRenderTimeOfficial -app-render-runs 30 -v
func TestAppRenderTimeOfficial(t *testing.T) {
	if *appRenderRuns <= 0 {
		t.Skip("a measurement: run with -app-render-runs N")
	}
	d := newDaemonWith(t, func(cfg *config.Config, _ string) {
		cfg.Servers = append(cfg.Servers, exampleServer(t, "budget", budgetPkg))
	})
	tb := newTab(t)
	tb.login(d)
	tb.do("a large window", chromedp.EmulateViewport(1280, 1000))
	tb.waitServerReady("budget")
	tb.selectTool("budget.get-budget-data")

	var ready, visible []time.Duration
	for i := range *appRenderRuns {
		tb.click(tid("new-session"))
		tb.waitFor("an empty transcript", `document.querySelectorAll('`+entrySel+`').length === 0 && document.querySelectorAll('iframe').length === 0`)
		eval[bool](tb, `(() => {
  const t = window.__appTiming = { t0: 0, ready: 0 };
  const entries = document.getElementById('entries');
  const mo = new MutationObserver(() => {
    const slot = entries.querySelector('[data-testid=app-slot]');
    if (!slot) return;
    if (!t.t0) t.t0 = performance.now();
    if (!t.ready && slot.dataset.mcpAppState === 'ready') { t.ready = performance.now(); mo.disconnect(); }
  });
  mo.observe(entries, { childList: true, subtree: true, attributes: true, attributeFilter: ['data-mcp-app-state'] });
  return true;
})()`)
		tb.click(tid("call-button"))
		tb.waitFor(fmt.Sprintf("run %d: the App to be ready", i+1), `window.__appTiming.ready > 0`)
		frame := `[data-testid=app-slot] iframe.app-frame`
		deadline := time.Now().Add(waitBound)
		for tb.frameColors(frame) < 60 {
			if time.Now().After(deadline) {
				t.Fatalf("run %d: the App did not draw", i+1)
			}
		}
		ms := eval[[]float64](tb, `[window.__appTiming.ready - window.__appTiming.t0, performance.now() - window.__appTiming.t0]`)
		ready = append(ready, time.Duration(ms[0]*float64(time.Millisecond)))
		visible = append(visible, time.Duration(ms[1]*float64(time.Millisecond)))
	}
	for _, m := range []struct {
		name string
		ds   []time.Duration
	}{{"budget allocator: tool result to App ready (initialized)", ready}, {"budget allocator: tool result to App visible (chart on screen, upper bound)", visible}} {
		s := slices.Clone(m.ds)
		slices.Sort(s)
		q := func(p int) time.Duration { return s[min(len(s)-1, len(s)*p/100)].Round(100 * time.Microsecond) }
		t.Logf("%s, %d runs: median %v, p90 %v, min %v, max %v", m.name, len(s), q(50), q(90), s[0].Round(100*time.Microsecond), s[len(s)-1].Round(100*time.Microsecond))
	}
}
