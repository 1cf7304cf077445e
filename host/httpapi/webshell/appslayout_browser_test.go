package webshell_test

// Apps in a narrow window and hostile App-registered tools.

import (
	"fmt"
	"strings"
	"testing"
	"time"

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
		deadline := time.Now().Add(waitBound)
		for n := tb.frameColors(frame); n < 20; n = tb.frameColors(frame) {
			if time.Now().After(deadline) {
				t.Errorf("App %d shows %d colours: a blank box", i, n)
				break
			}
			time.Sleep(200 * time.Millisecond)
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
			eval[bool](tb, `(() => { const i = document.querySelector('`+sel+` input, `+sel+` textarea'); i.value = 'hi'; i.dispatchEvent(new Event('input', { bubbles: true })); return true; })()`)
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

// resourceProbe reads its own server's App resource and the URI of another
// server's, and reports both answers.
const resourceProbe = `<!doctype html><html><body><script>
const post = (m) => window.parent.postMessage(m, '*');
const out = {};
let caps = null;
window.addEventListener('message', (e) => {
  if (e.source !== window.parent) return;
  const m = e.data;
  if (m.id === 1) {
    caps = m.result.hostCapabilities;
    post({ jsonrpc: '2.0', method: 'ui/notifications/initialized' });
    post({ jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'ui://revenue-dashboard' } });
    post({ jsonrpc: '2.0', id: 3, method: 'resources/read', params: { uri: 'ui://customer-segmentation/mcp-app.html' } });
    return;
  }
  if (m.id === 2) out.own = m.error ? 'error ' + m.error.message : 'mime ' + m.result.contents[0].mimeType;
  if (m.id === 3) out.other = m.error ? 'error ' + m.error.message : 'read';
  if (out.own && out.other) post({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: { event: 'reads', caps, ...out } } });
});
post({ jsonrpc: '2.0', id: 1, method: 'ui/initialize',
  params: { protocolVersion: '2026-01-26', appInfo: { name: 'reads', version: '1' }, appCapabilities: {} } });
</script></body></html>`

// TestAppResourcesRead: with app_resources on, an App reads its own
// server's resource; another server's URI goes to its own server, which
// does not have it; with the switch off, the read is denied.
func TestAppResourcesRead(t *testing.T) {
	d := newDaemonWith(t, func(cfg *config.Config, bin string) {
		cfg.Servers[1].AppResources = true
		cfg.Servers = append(cfg.Servers, stdioServer("revenue_off", bin))
	})
	tb := newTab(t)
	tb.login(d)
	tb.enableAppLog()
	tb.callRevenue("Q3", 1)
	sid := eval[string](tb, `sessionStorage.getItem('mcphost.session') ?? ''`)
	app := d.appEntries(t, sid)[0]
	tb.mountBoundApp("reads", resourceProbe, "revenue", app.ID, sid)
	var r struct {
		Caps       map[string]any `json:"caps"`
		Own, Other string
	}
	tb.appEventData("reads", &r)
	if r.Caps["serverResources"] == nil || r.Own != "mime text/html;profile=mcp-app" || !strings.Contains(r.Other, `server "revenue" could not read`) {
		t.Errorf("with app_resources on: %+v", r)
	}

	tb.selectTool("revenue_off.show_revenue_dashboard")
	tb.choose("quarter", "Q1")
	tb.click(tid("call-button"))
	tb.waitFor("the second App entry", `document.querySelectorAll('`+entrySel+`').length >= 2`)
	var offID string
	for _, e := range d.appEntries(t, sid) {
		if e.ID != app.ID {
			offID = e.ID
		}
	}
	eval[bool](tb, `(() => { window.__mcphostAppLog = []; return true; })()`)
	tb.mountBoundApp("reads-off", resourceProbe, "revenue_off", offID, sid)
	var off struct {
		Caps       map[string]any `json:"caps"`
		Own, Other string
	}
	tb.appEventData("reads", &off)
	if off.Caps["serverResources"] != nil || !strings.Contains(off.Own, "app_resources is off") {
		t.Errorf("with app_resources off: %+v", off)
	}
}

// downloadProbe offers files with ui/download-file: a text file named
// "../../etc/passwd", a resource_link of its own server's App resource, and
// 100 MiB of base64; it reports each answer.
const downloadProbe = `<!doctype html><html><body><script>
const post = (m) => window.parent.postMessage(m, '*');
const out = {};
const asks = {
  2: { contents: [{ type: 'resource', resource: { uri: 'file:///../../etc/passwd', mimeType: 'text/plain', text: 'root:x:0:0' } }] },
  3: { contents: [{ type: 'resource_link', uri: 'ui://revenue-dashboard', name: '..\\\\dash board.html' }] },
  4: { contents: [{ type: 'resource', resource: { uri: 'ui://big.bin', blob: 'A'.repeat(100 << 20) } }] },
};
window.addEventListener('message', (e) => {
  if (e.source !== window.parent) return;
  const m = e.data;
  if (m.id === 1) {
    out.caps = m.result.hostCapabilities;
    post({ jsonrpc: '2.0', method: 'ui/notifications/initialized' });
    post({ jsonrpc: '2.0', id: 2, method: 'ui/download-file', params: asks[2] });
    return;
  }
  if (m.id >= 2 && m.id <= 4) {
    out['a' + m.id] = m.error ? 'error ' + m.error.message : JSON.stringify(m.result);
    if (m.id < 4) {
      try { post({ jsonrpc: '2.0', id: m.id + 1, method: 'ui/download-file', params: asks[m.id + 1] }); }
      catch (err) { out['a' + (m.id + 1)] = 'not sent ' + err.name; m.id = 4; }
    }
    if (m.id === 4) post({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: { event: 'downloads', ...out } } });
  }
});
post({ jsonrpc: '2.0', id: 1, method: 'ui/initialize',
  params: { protocolVersion: '2026-01-26', appInfo: { name: 'dl', version: '1' }, appCapabilities: {} } });
</script></body></html>`

// TestAppDownloads: with app_downloads on, the user confirms each download
// and the browser saves it under a sanitised name (no path); a
// resource_link is read through the App's server and the user may cancel
// it; 100 MiB never reaches the host (over the bridge's message limit: it
// is dropped and the bridge stays). The switch off is in TestAppGatesClosed
// (the daemon side) and the bridge denies before asking.
func TestAppDownloads(t *testing.T) {
	d := newDaemonWith(t, func(cfg *config.Config, _ string) { cfg.Servers[1].AppDownloads = true })
	tb := newTab(t)
	tb.login(d)
	tb.enableAppLog()
	eval[bool](tb, `(() => { window.__mcphostDownloads = []; return true; })()`)
	tb.callRevenue("Q3", 1)
	sid := eval[string](tb, `sessionStorage.getItem('mcphost.session') ?? ''`)
	app := d.appEntries(t, sid)[0]
	tb.mountBoundApp("dl", downloadProbe, "revenue", app.ID, sid)

	tb.waitVisible(tid("app-download-dialog"))
	if got := eval[string](tb, `document.querySelector('[data-testid=app-download-files]').textContent`); !strings.Contains(got, "passwd — 10 bytes") {
		t.Errorf("dialog lists %q, want the file as passwd", got)
	}
	tb.click(tid("app-download-save"))
	tb.waitVisible(tid("app-download-dialog"))
	if got := eval[string](tb, `document.querySelector('[data-testid=app-download-files]').textContent`); !strings.Contains(got, "dash board.html") {
		t.Errorf("dialog lists %q, want the link's name without its path", got)
	}
	tb.click(tid("app-download-cancel"))
	tb.waitFor("two saves asked", `window.__mcphostDownloads.length >= 1`)
	saved := eval[[]map[string]any](tb, `window.__mcphostDownloads`)
	if len(saved) != 1 || saved[0]["name"] != "passwd" || saved[0]["size"] != float64(10) {
		t.Errorf("saved %v, want passwd (10 bytes) only", saved)
	}
	// The 100 MiB offer is over the bridge's message limit: dropped, and
	// the App is still there.
	if got := eval[string](tb, `document.querySelector('[data-testid=dl]').dataset.mcpAppState`); got != "ready" {
		t.Errorf("the App is %s after its 100 MiB offer, want ready", got)
	}
}

// contextProbe gives model context three times: a small one, 200 KiB (over
// the daemon's 64 KiB) and 10 MiB (over the bridge's message limit).
const contextProbe = `<!doctype html><html><body><script>
const post = (m) => window.parent.postMessage(m, '*');
const out = {};
const text = (t) => ({ content: [{ type: 'text', text: t }], structuredContent: { quarter: 'Q3' } });
window.addEventListener('message', (e) => {
  if (e.source !== window.parent) return;
  const m = e.data;
  if (m.id === 1) {
    out.caps = m.result.hostCapabilities;
    post({ jsonrpc: '2.0', method: 'ui/notifications/initialized' });
    post({ jsonrpc: '2.0', id: 9, method: 'ui/update-model-context', params: text('x'.repeat(10 << 20)) });
    post({ jsonrpc: '2.0', id: 2, method: 'ui/update-model-context', params: text('Q3 is the best quarter') });
    return;
  }
  if (m.id === 2) { out.small = m.error ? 'error ' + m.error.message : 'ok';
    post({ jsonrpc: '2.0', id: 3, method: 'ui/update-model-context', params: text('y'.repeat(200 << 10)) }); }
  if (m.id === 3) { out.big = m.error ? 'error ' + m.error.code + ' ' + m.error.message : 'ok';
    post({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: { event: 'context', ...out } } }); }
  if (m.id === 9) out.huge = 'answered';
});
post({ jsonrpc: '2.0', id: 1, method: 'ui/initialize',
  params: { protocolVersion: '2026-01-26', appInfo: { name: 'ctx', version: '1' }, appCapabilities: {} } });
</script></body></html>`

// TestAppModelContextShown: with app_model_context on, the App's context is
// kept (the API returns it), shown under the entry as the App's, and
// replaced only by an update the daemon accepts: 200 KiB is refused with
// the limit, 10 MiB never reaches the host.
func TestAppModelContextShown(t *testing.T) {
	d := newDaemonWith(t, func(cfg *config.Config, _ string) { cfg.Servers[1].AppModelContext = true })
	tb := newTab(t)
	tb.login(d)
	tb.enableAppLog()
	tb.callRevenue("Q3", 1)
	sid := eval[string](tb, `sessionStorage.getItem('mcphost.session') ?? ''`)
	app := d.appEntries(t, sid)[0]
	slot := tb.mountBoundApp("ctx", contextProbe, "revenue", app.ID, sid)
	var r struct {
		Caps             map[string]any `json:"caps"`
		Small, Big, Huge string
	}
	tb.appEventData("context", &r)
	if r.Caps["updateModelContext"] == nil || r.Small != "ok" || !strings.Contains(r.Big, "-32602") || !strings.Contains(r.Big, "limit") || r.Huge != "" {
		t.Errorf("answers %+v, want the small one kept, 200 KiB refused with the limit, 10 MiB unanswered", r)
	}
	if got := eval[string](tb, `document.querySelector('`+slot+` [data-testid=app-context-text]')?.textContent ?? ''`); !strings.Contains(got, "Q3 is the best quarter") {
		t.Errorf("shown context %q", got)
	}
	var kept struct {
		Context struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"context"`
	}
	d.apiJSON(t, "GET", "/sessions/"+sid+"/app-context?entry="+app.ID, nil, &kept)
	if len(kept.Context.Content) != 1 || kept.Context.Content[0].Text != "Q3 is the best quarter" {
		t.Errorf("the API returns %+v", kept)
	}
}
