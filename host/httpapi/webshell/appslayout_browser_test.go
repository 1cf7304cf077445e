package webshell_test

// Apps in a narrow window and hostile App-registered tools.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/mcphost/mcphost/host/config"
)

// TestAppsAt700px opens the WebShell in a window 700 px wide, calls the
// revenue dashboard three times and checks every App further down the page:
// each is ready, its frame lies inside the window and uses most of its
// width, and it has drawn its chart (not a blank box).
func TestAppsAt700px(t *testing.T) {
	d := newDaemon(t)
	tb := newTab(t)
	tb.do("a narrow window", chromedp.EmulateViewport(700, 900))
	tb.login(d)
	for i, q := range []string{"Q1", "Q2", "Q3"} {
		tb.callRevenue(q, i+1)
	}
	for i := 1; i <= 3; i++ {
		sel := cardSel(i)
		tb.waitFor(fmt.Sprintf("App %d to be ready", i), `document.querySelector('`+sel+` [data-testid=app-slot]')?.dataset.mcpAppState === 'ready'`)
		frame := sel + ` iframe.app-frame`
		tb.do("scrolling to the App", chromedp.ScrollIntoView(chromedp.CSS(frame)))
		r := eval[[]float64](tb, `(() => { const r = document.querySelector('`+frame+`').getBoundingClientRect(); return [r.left, r.right, r.width, r.height]; })()`)
		if r[0] < 0 || r[1] > 700 || r[2] < 400 || r[3] < 120 {
			t.Errorf("App %d: frame at left %v right %v, %v × %v px; want it inside the 700 px window and at least 400 px wide", i, r[0], r[1], r[2], r[3])
		}
		if n := tb.frameColors(frame); n < 20 {
			t.Errorf("App %d shows %d colours: a blank box", i, n)
		}
	}
	tb.screenshot("narrow", cardSel(3))
}

// appToolsProbe is an App that registers tools by hand (as the SDK does):
// "echo" answers, "never" never does, and "big" answers with 2 MiB, which
// the bridge drops.
const appToolsProbe = `<!doctype html><html><body><script>
const post = (m) => window.parent.postMessage(m, '*');
window.addEventListener('message', (e) => {
  if (e.source !== window.parent) return;
  const m = e.data;
  if (m && m.result && m.result.hostContext) { post({ jsonrpc: '2.0', method: 'ui/notifications/initialized' }); return; }
  if (m.method === 'tools/list') {
    post({ jsonrpc: '2.0', id: m.id, result: { tools: [
      { name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
      { name: 'never', inputSchema: { type: 'object' } },
      { name: 'big', inputSchema: { type: 'object' } },
      { name: 'bad schema', inputSchema: 'not an object' },
    ] } });
    return;
  }
  if (m.method === 'tools/call') {
    if (m.params.name === 'echo') post({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'echo: ' + m.params.arguments.text }] } });
    if (m.params.name === 'big') post({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'x'.repeat(2 << 20) }] } });
  }
});
post({ jsonrpc: '2.0', id: 1, method: 'ui/initialize',
  params: { protocolVersion: '2026-01-26', appInfo: { name: 'tools', version: '1' }, appCapabilities: { tools: {} } } });
</script></body></html>`

// TestHostileAppTools: an App's tools are listed under its entry (one with
// a bad schema left out, and said so), one that answers works, and one that
// never answers or answers too much ends with an error within the (test
// mode) timeout instead of hanging the form.
func TestHostileAppTools(t *testing.T) {
	d := newDaemonWith(t, func(cfg *config.Config, _ string) { cfg.Servers[1].AppTools = true })
	tb := newTab(t)
	tb.login(d)
	tb.enableAppLog()
	eval[bool](tb, `(() => { document.documentElement.dataset.appToolTimeoutMs = '1500'; return true; })()`)
	tb.callRevenue("Q3", 1)
	sid := eval[string](tb, `sessionStorage.getItem('mcphost.session') ?? ''`)
	app := d.appEntries(t, sid)[0]
	slot := tb.mountBoundApp("tools", appToolsProbe, "revenue", app.ID, sid)
	tb.waitFor("the App's tools", `!!document.querySelector('`+slot+` [data-testid="app-tool-never"]')`)
	if note := eval[string](tb, `document.querySelector('`+slot+` [data-testid=app-tools]').textContent`); !strings.Contains(note, "1 tool(s) the App offered could not be shown") {
		t.Errorf("tools panel %q, want the left-out tool counted", note)
	}
	callTool := func(name string) {
		sel := slot + ` [data-testid="app-tool-` + name + `"]`
		tb.click(sel + ` > summary`)
		if name == "echo" {
			eval[bool](tb, `(() => { const i = document.querySelector('`+sel+` input'); i.value = 'hi'; i.dispatchEvent(new Event('input', { bubbles: true })); return true; })()`)
		}
		tb.click(sel + ` [data-testid=app-tool-call]`)
	}
	callTool("echo")
	tb.waitFor("the echo", `(document.querySelector('`+slot+` [data-testid="app-tool-echo"] [data-testid=app-tool-result]')?.textContent ?? '') === 'echo: hi'`)
	for _, name := range []string{"never", "big"} {
		callTool(name)
		tb.waitFor(name+" to fail", `(document.querySelector('`+slot+` [data-testid="app-tool-`+name+`"] [data-testid=app-tool-error]')?.textContent ?? '').includes('no reply within')`)
	}
}
