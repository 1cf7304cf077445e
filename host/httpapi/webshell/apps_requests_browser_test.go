package webshell_test

// Real-browser tests of what comes after the first slice of MCP Apps
// (docs/apps.md §12, §14–16 in the shared docs): the gated App requests
// (tools/call, ui/open-link, ui/message) closed and open, and the revenue
// demo's broken variants run as real stdio servers: wrong MIME type,
// oversized and unavailable resources, a server that does not advertise the
// extension under apps = "auto" and "advertised", a malicious View, a
// spoofer next to a well-behaved App, and a View that never initializes.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/mcphost/mcphost/host/config"
)

// variantServer runs the revenue demo's variant as server name.
func variantServer(name, revenueBin, variant string) config.Server {
	s := stdioServer(name, revenueBin)
	s.Args = []string{"-variant", variant}
	return s
}

// callVariant selects server.show_revenue_dashboard, picks quarter, calls it
// and returns the n-th entry (1-based).
func (tb *tab) callVariant(server, quarter string, n int) shownEntry {
	tb.t.Helper()
	tb.selectTool(server + ".show_revenue_dashboard")
	tb.choose("quarter", quarter)
	return tb.call(n)
}

// cardSel is the selector of the n-th entry card (1-based).
func cardSel(n int) string { return fmt.Sprintf(`%s:nth-child(%d)`, entrySel, n) }

// TestAppVariantsShowText calls the demo's broken variants from the form:
// a wrong MIME type, an oversized and an unavailable resource show the
// ordinary text result with a warning and no frame; a server that links its
// App without advertising the extension renders under apps = "auto" and is
// plain text under apps = "advertised" (apps.md §14 rows 11, 12, 14, 16).
func TestAppVariantsShowText(t *testing.T) {
	d := newDaemonWith(t, func(cfg *config.Config, bin string) {
		strict := variantServer("unadv_strict", bin, "unadvertised")
		strict.Apps = config.AppsAdvertised
		cfg.Servers = append(cfg.Servers,
			variantServer("wrongmime", bin, "wrong-mime"),
			variantServer("oversized", bin, "oversized"),
			variantServer("unavailable", bin, "unavailable"),
			variantServer("unadv_auto", bin, "unadvertised"),
			strict)
	})
	tb := newTab(t)
	tb.login(d)
	tb.enableAppLog()

	want := "Revenue Q3 2026 (all regions): $4.98M total"
	for i, tc := range []struct {
		server, warning string
	}{
		{"wrongmime", "wrong MIME type"},
		{"oversized", "too large (1048577 bytes, limit 1048576)"},
		{"unavailable", "read error"},
	} {
		t.Run(tc.server, func(t *testing.T) {
			e := tb.callVariant(tc.server, "Q3", i+1)
			if e.Status != "ok" || !strings.HasPrefix(e.Result, want) {
				t.Errorf("entry %+v, want ok with the tool's text", e)
			}
			sel := cardSel(i+1) + ` [data-testid=app-slot]`
			tb.waitFor("the fallback of "+tc.server, `document.querySelector('`+sel+`')?.dataset.mcpAppState === 'fallback'`)
			warning := eval[string](tb, `document.querySelector('`+sel+` [data-testid=app-warning]')?.textContent ?? ''`)
			if !strings.Contains(warning, tc.warning) || !strings.Contains(warning, `"ui://revenue-dashboard"`) || !strings.Contains(warning, `"`+tc.server+`"`) {
				t.Errorf("warning %q, want one naming the resource, the server and %q", warning, tc.warning)
			}
			fallback := eval[string](tb, `document.querySelector('`+sel+` [data-testid=app-fallback]')?.textContent ?? ''`)
			if !strings.HasPrefix(fallback, "Warning: ") || !strings.Contains(fallback, want) {
				t.Errorf("fallback %q, want the warning and then the tool's text", fallback)
			}
			if n := eval[int](tb, `document.querySelectorAll('`+cardSel(i+1)+` iframe').length`); n != 0 {
				t.Errorf("%d frames for %s, want none", n, tc.server)
			}
		})
	}

	t.Run("unadvertised, auto", func(t *testing.T) {
		tb.callVariant("unadv_auto", "Q1", 4)
		sel := cardSel(4) + ` [data-testid=app-slot]`
		tb.waitFor("the App to be ready", `document.querySelector('`+sel+`')?.dataset.mcpAppState === 'ready'`)
		rec := tb.waitAppEvent("drew")
		if rec.Server != "unadv_auto" || !strings.Contains(string(rec.Data), `"quarter":"Q1"`) {
			t.Errorf("App log %s from %q, want the Q1 chart of unadv_auto", rec.Data, rec.Server)
		}
	})
	t.Run("unadvertised, advertised", func(t *testing.T) {
		e := tb.callVariant("unadv_strict", "Q1", 5)
		if e.Status != "ok" || !strings.HasPrefix(e.Result, "Revenue Q1 2026") {
			t.Errorf("entry %+v, want ok with the tool's text", e)
		}
		if n := eval[int](tb, `document.querySelectorAll('`+cardSel(5)+` [data-testid=app-slot]').length`); n != 0 {
			t.Errorf("%d App slots under apps = \"advertised\", want plain text", n)
		}
	})
	if n := eval[int](tb, `document.querySelectorAll('iframe').length`); n != 1 {
		t.Errorf("%d frames in the page, want only unadv_auto's App", n)
	}
	tb.screenshot("variants", entrySel)
}

// requesterView is a test App that makes the three gated requests of
// apps.md §12 once it has its result and reports every answer through
// notifications/message {event: "answers"}: a tools/call of the revenue
// tool, a ui/message, then three ui/open-link requests (the test confirms
// the first and cancels the second; the third is a javascript: URL).
const requesterView = `<!doctype html>
<meta charset="utf-8">
<p>requester</p>
<script>
(function () {
  "use strict";
  var pending = {}, nextId = 1, caps = null, ran = false;
  function post(m) { window.parent.postMessage(m, "*"); }
  function notify(method, params) { post({ jsonrpc: "2.0", method: method, params: params }); }
  function req(method, params) {
    return new Promise(function (resolve) {
      var id = "r" + (nextId++);
      pending[id] = resolve;
      post({ jsonrpc: "2.0", id: id, method: method, params: params });
    });
  }
  function answer(r) { return r.error ? { code: r.error.code, message: r.error.message } : { result: r.result }; }
  window.addEventListener("message", function (e) {
    if (e.source !== window.parent) return;
    var m = e.data;
    if (!m || m.jsonrpc !== "2.0") return;
    if (typeof m.method !== "string") {
      var cb = pending[m.id]; delete pending[m.id]; if (cb) cb(m); return;
    }
    if (m.id !== undefined) { post({ jsonrpc: "2.0", id: m.id, result: {} }); return; }
    if (m.method === "ui/notifications/tool-result" && !ran) { ran = true; run(); }
  });
  async function run() {
    var out = { event: "answers", caps: caps };
    out.call = answer(await req("tools/call", { name: "show_revenue_dashboard", arguments: { quarter: "Q2" } }));
    out.message = answer(await req("ui/message", { role: "user", content: [{ type: "text", text: "Hello from the requester App" }] }));
    notify("notifications/message", { level: "info", data: { event: "links" } });
    out.link1 = answer(await req("ui/open-link", { url: "https://example.com/docs?from=app" }));
    out.link2 = answer(await req("ui/open-link", { url: "https://example.org/second" }));
    out.link3 = answer(await req("ui/open-link", { url: "javascript:alert(1)" }));
    notify("notifications/message", { level: "info", data: out });
  }
  req("ui/initialize", { protocolVersion: "2026-01-26", appInfo: { name: "requester", version: "1" }, appCapabilities: {} }).then(function (r) {
    caps = r.result && r.result.hostCapabilities;
    notify("ui/notifications/initialized", {});
  });
})();
</script>`

// rpcAnswer is a JSON-RPC answer as the requester View reports it.
type rpcAnswer struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Result  json.RawMessage `json:"result"`
}

type requesterReport struct {
	Caps    map[string]any `json:"caps"`
	Call    rpcAnswer      `json:"call"`
	Message rpcAnswer      `json:"message"`
	Link1   rpcAnswer      `json:"link1"`
	Link2   rpcAnswer      `json:"link2"`
	Link3   rpcAnswer      `json:"link3"`
}

// mountBoundApp mounts html as the App of a real transcript entry (so its
// gated requests go to the API in that entry's name), in a slot of its own.
func (tb *tab) mountBoundApp(id, html, server, entryID, sessionID string) string {
	tb.t.Helper()
	ok := run(tb, "mounting a bound test App", chromedp.Evaluate[bool](`(async () => {
  const m = await import('/assets/appbridge.js');
  const { ok, rec } = m.checkDisplay({
    type: 'mcp_app', serverName: `+jsString(server)+`, resourceUri: 'ui://revenue-dashboard', html: `+jsString(html)+`,
    fallbackText: 'requester fallback', toolArguments: {}, toolResult: { content: [{ type: 'text', text: 'go' }] },
  });
  if (!ok) return false;
  const slot = document.createElement('div');
  slot.className = 'app-slot';
  slot.dataset.testid = `+jsString(id)+`;
  document.body.append(slot);
  m.mountApp(slot, rec, { url: m.sandboxURL(location, undefined), tool: 'show_revenue_dashboard',
    entryId: `+jsString(entryID)+`, sessionId: `+jsString(sessionID)+` });
  return true;
})()`, chromedp.EvalAwaitPromise))
	if !ok {
		tb.fatalf("the test App's record did not pass checkDisplay")
	}
	return tid(id)
}

// appEventData decodes the data of the last App log record with data.event.
func (tb *tab) appEventData(event string, v any) {
	tb.t.Helper()
	rec := tb.waitAppEvent(event)
	if err := json.Unmarshal(rec.Data, v); err != nil {
		tb.t.Fatalf("decoding %s: %v", rec.Data, err)
	}
}

// TestAppRequestGates drives a test App that makes each gated request, with
// the revenue server's switches at their defaults (closed) and all on (open).
func TestAppRequestGates(t *testing.T) {
	t.Run("closed", func(t *testing.T) {
		d := newDaemon(t)
		tb := newTab(t)
		tb.login(d)
		tb.enableAppLog()
		tb.callRevenue("Q3", 1)
		sid := eval[string](tb, `sessionStorage.getItem('mcphost.session') ?? ''`)
		app := d.appEntries(t, sid)[0]

		// The page's own call above went to POST …/calls too: only the
		// requests from here on are the App's.
		before := len(d.seen())
		tb.mountBoundApp("requester", requesterView, "revenue", app.ID, sid)
		var r requesterReport
		tb.appEventData("answers", &r)
		if caps, _ := json.Marshal(r.Caps); string(caps) != `{"logging":{},"sandbox":{}}` {
			t.Errorf("hostCapabilities %s, want only logging and the sandbox with every gate closed", caps)
		}
		for name, a := range map[string]rpcAnswer{"tools/call": r.Call, "ui/message": r.Message, "ui/open-link": r.Link1} {
			if a.Code != deniedCode || !strings.HasPrefix(a.Message, "denied by host policy: ") {
				t.Errorf("%s answered %+v, want %d denied by host policy", name, a, deniedCode)
			}
		}
		if n := eval[int](tb, `document.querySelectorAll('[data-testid=app-link-dialog]').length`); n != 0 {
			t.Errorf("%d link dialogs with the gate closed", n)
		}
		if got := d.appEntries(t, sid); len(got) != 1 {
			t.Errorf("%d entries after the denied requests, want only the App's", len(got))
		}
		for _, req := range d.seen() {
			if req.Path == "/api/v1/sessions/"+sid+"/app-messages" || req.Path == "/api/v1/sessions/"+sid+"/app-links" {
				t.Errorf("the page asked the API although the gate is closed: %+v", req)
			}
		}
		// The App reports its answers only after the page answered its
		// tools/call, so a call let through would be in the log by now.
		for _, req := range d.seen()[before:] {
			if req.Method == http.MethodPost && strings.HasSuffix(req.Path, "/calls") {
				t.Errorf("the App's tools/call reached the API although the gate is closed: %+v", req)
			}
		}
	})

	t.Run("open", func(t *testing.T) {
		d := newDaemonWith(t, func(cfg *config.Config, _ string) {
			rev := &cfg.Servers[1]
			rev.AppToolCalls, rev.AppOpenLinks, rev.AppMessages = true, true, true
		})
		tb := newTab(t)
		tb.login(d)
		tb.enableAppLog()
		tb.callRevenue("Q3", 1)
		sid := eval[string](tb, `sessionStorage.getItem('mcphost.session') ?? ''`)
		app := d.appEntries(t, sid)[0]
		// Record window.open instead of opening a tab.
		eval[bool](tb, `(() => { window.__opened = []; window.open = (...a) => { window.__opened.push(a); return null; }; return true; })()`)

		tb.mountBoundApp("requester", requesterView, "revenue", app.ID, sid)
		tb.waitAppEvent("links")

		// The first link: the dialog names the server and shows the URL.
		tb.waitFor("the link dialog", `document.querySelector('[data-testid=app-link-dialog]')?.open === true`)
		if got := eval[string](tb, `document.querySelector('[data-testid=app-link-url]').textContent`); got != "https://example.com/docs?from=app" {
			t.Errorf("dialog URL %q", got)
		}
		if got := eval[string](tb, `document.querySelector('[data-testid=app-link-server]').textContent`); got != "revenue" {
			t.Errorf("dialog server %q", got)
		}
		if got := eval[string](tb, `document.activeElement?.dataset.testid ?? ''`); got != "app-link-cancel" {
			t.Errorf("focus on %q, want the cancel button", got)
		}
		tb.screenshot("link-dialog", tid("app-link-dialog"))
		tb.click(tid("app-link-open"))
		// The second: cancelled.
		tb.waitFor("the second link dialog", `(() => {
  const u = document.querySelector('[data-testid=app-link-dialog]');
  return u?.open === true && u.querySelector('[data-testid=app-link-url]').textContent === 'https://example.org/second';
})()`)
		tb.click(tid("app-link-cancel"))

		var r requesterReport
		tb.appEventData("answers", &r)
		caps, _ := json.Marshal(r.Caps)
		if string(caps) != `{"logging":{},"message":{},"openLinks":{},"sandbox":{},"serverTools":{}}` {
			t.Errorf("hostCapabilities %s, want logging, serverTools, openLinks and message", caps)
		}
		var ctr revenueResult
		if err := json.Unmarshal(r.Call.Result, &ctr); err != nil || r.Call.Code != 0 || ctr.StructuredContent.Quarter != "Q2" {
			t.Errorf("tools/call answered %+v, want the Q2 result", r.Call)
		}
		if r.Message.Code != 0 || string(r.Message.Result) != "{}" {
			t.Errorf("ui/message answered %+v, want {}", r.Message)
		}
		if r.Link1.Code != 0 || string(r.Link1.Result) != "{}" {
			t.Errorf("confirmed ui/open-link answered %+v, want {}", r.Link1)
		}
		for name, a := range map[string]rpcAnswer{"cancelled": r.Link2, "javascript:": r.Link3} {
			if a.Code != 0 || string(a.Result) != `{"isError":true}` {
				t.Errorf("%s ui/open-link answered %+v, want {isError: true}", name, a)
			}
		}
		opened := eval[[][]string](tb, `window.__opened`)
		if want := [][]string{{"https://example.com/docs?from=app", "_blank", "noopener,noreferrer"}}; !slices.EqualFunc(opened, want, slices.Equal) {
			t.Errorf("window.open calls %q, want %q", opened, want)
		}

		// The transcript: the App's call (origin app, no App of its own) and
		// its message, shown as the App's.
		var stored []struct {
			ID         string          `json:"id"`
			Kind       string          `json:"kind"`
			Origin     string          `json:"origin"`
			Tool       string          `json:"tool"`
			AppEntryID string          `json:"appEntryId"`
			Display    json.RawMessage `json:"display"`
			Message    json.RawMessage `json:"message"`
		}
		var page struct {
			Entries json.RawMessage `json:"entries"`
		}
		d.apiJSON(t, http.MethodGet, "/sessions/"+sid+"/entries", nil, &page)
		if err := json.Unmarshal(page.Entries, &stored); err != nil {
			t.Fatal(err)
		}
		if len(stored) != 3 {
			t.Fatalf("stored %d entries, want the App, its call and its message", len(stored))
		}
		if c := stored[1]; c.Kind != "call" || c.Origin != "app" || c.AppEntryID != app.ID || c.Tool != "show_revenue_dashboard" || string(c.Display) != "null" {
			t.Errorf("the App's call is stored as %+v", c)
		}
		if m := stored[2]; m.Kind != "app_message" || m.Origin != "app" || m.AppEntryID != app.ID || !strings.Contains(string(m.Message), "Hello from the requester App") {
			t.Errorf("the App's message is stored as %+v", m)
		}
		tb.waitFor("the App message card", `!!document.querySelector('`+entrySel+`[data-kind=app_message]')`)
		text := eval[string](tb, `document.querySelector('`+entrySel+`[data-kind=app_message]').textContent`)
		for _, want := range []string{"revenue App", "App message", "Sent by the MCP App of server revenue", "ui://revenue-dashboard", "not by you", "Hello from the requester App"} {
			if !strings.Contains(text, want) {
				t.Errorf("App message card %q lacks %q", text, want)
			}
		}
		callCard := eval[string](tb, `[...document.querySelectorAll('`+entrySel+`')].find((e) => e.dataset.entryId === `+jsString(stored[1].ID)+`)?.textContent ?? ''`)
		if !strings.Contains(callCard, "via app") {
			t.Errorf("the App's call card %q does not say it came from the App", callCard)
		}
		if n := eval[int](tb, `[...document.querySelectorAll('`+entrySel+`')].filter((e) => e.dataset.entryId === `+jsString(stored[1].ID)+` && e.querySelector('[data-testid=app-slot]')).length`); n != 0 {
			t.Error("the App's own call mounted another App")
		}
		tb.screenshot("app-message", entrySel+`[data-kind=app_message]`)
	})
}

// maliciousReport is the malicious variant's report.
type maliciousReport struct {
	Event          string   `json:"event"`
	SessionStorage string   `json:"sessionStorage"`
	LocalStorage   string   `json:"localStorage"`
	Cookie         string   `json:"cookie"`
	ParentDocument string   `json:"parentDocument"`
	TopDocument    string   `json:"topDocument"`
	TopToken       string   `json:"topToken"`
	Targets        int      `json:"targets"`
	Fetches        []string `json:"fetches"`
}

// TestMaliciousAppVariant runs the malicious variant as a real server with
// app_messages on: every probe fails, the CSP sources it declared for the
// daemon are dropped, the daemon gets no request from the App, and its
// report arrives as an App message (apps.md §14 rows 28, 29).
func TestMaliciousAppVariant(t *testing.T) {
	d := newDaemonWith(t, func(cfg *config.Config, bin string) {
		evil := variantServer("evil", bin, "malicious")
		evil.AppMessages = true
		cfg.Servers = append(cfg.Servers, evil)
	})
	tb := newTab(t)
	tb.login(d)
	tb.enableAppLog()
	tb.selectTool("evil.show_revenue_dashboard")
	tb.choose("quarter", "Q4")
	tb.fill("probe", d.base)
	before := len(d.seen())
	tb.call(1)
	sid := eval[string](tb, `sessionStorage.getItem('mcphost.session') ?? ''`)

	var r maliciousReport
	tb.appEventData("report", &r)
	t.Logf("malicious report: %+v", r)
	for name, v := range map[string]string{"sessionStorage": r.SessionStorage, "localStorage": r.LocalStorage, "cookie": r.Cookie,
		"parent.document": r.ParentDocument, "top.document": r.TopDocument, "top.sessionStorage": r.TopToken} {
		if v != "threw SecurityError" {
			t.Errorf("%s from the App: %q, want a SecurityError", name, v)
		}
	}
	if r.Targets != 3 || len(r.Fetches) != 3 {
		t.Fatalf("the App probed %d targets (%q), want 3", r.Targets, r.Fetches)
	}
	for _, f := range r.Fetches {
		if !strings.HasPrefix(f, "failed") {
			t.Errorf("a fetch of the daemon from the App: %q, want it to fail", f)
		}
	}

	// The report also arrived as an App message, never as the user's.
	tb.waitFor("the App's report in the transcript", `!!document.querySelector('`+entrySel+`[data-kind=app_message]')`)
	msg := eval[string](tb, `document.querySelector('`+entrySel+`[data-kind=app_message] [data-testid=app-message-text]').textContent`)
	if !strings.HasPrefix(msg, "Malicious App report: ") || !strings.Contains(msg, "SecurityError") {
		t.Errorf("App message %q", msg)
	}

	// The server declared the daemon's origins as connectDomains: dropped.
	var page struct {
		Entries []struct {
			Display *struct {
				CSP     *struct{ ConnectDomains []string } `json:"csp"`
				Dropped []string                           `json:"dropped"`
			} `json:"display"`
		} `json:"entries"`
	}
	d.apiJSON(t, http.MethodGet, "/sessions/"+sid+"/entries", nil, &page)
	dsp := page.Entries[0].Display
	if dsp == nil || dsp.CSP == nil || len(dsp.CSP.ConnectDomains) != 0 || len(dsp.Dropped) != 2 ||
		!strings.Contains(strings.Join(dsp.Dropped, " "), fmt.Sprintf("127.0.0.1:%d", d.port)) {
		t.Errorf("display record CSP %+v, want the daemon's origins dropped", dsp)
	}

	// No request from the App reached the daemon: every API request came
	// with the page's token, and none from an opaque origin.
	for _, req := range d.seen()[before:] {
		if req.Origin == "null" || strings.HasPrefix(req.Path, "/api/") && !req.Authorized {
			t.Errorf("a request from the App reached the daemon: %+v", req)
		}
	}
	tb.screenshot("malicious", entrySel)
}

// TestSpooferAndSilentApps mounts the revenue App, the spoofer variant's App
// (which posts forged results at every frame it can name) and the silent
// variant's App (which never initializes): the revenue App draws only its
// own result, the spoofer's messages change nothing, and the silent App
// falls back to text after the initialization timeout (apps.md §14 rows 24,
// 31).
func TestSpooferAndSilentApps(t *testing.T) {
	d := newDaemonWith(t, func(cfg *config.Config, bin string) {
		cfg.Servers = append(cfg.Servers, variantServer("spoof", bin, "spoofer"), variantServer("silent", bin, "silent"))
	})
	tb := newTab(t)
	tb.login(d)
	tb.enableAppLog()
	// Test mode: the silent App is given up after 1.5 s instead of 30 s.
	eval[bool](tb, `(() => { document.documentElement.dataset.appInitTimeoutMs = '1500'; return true; })()`)

	tb.callRevenue("Q3", 1)
	tb.waitFor("the revenue App", `document.querySelector('`+cardSel(1)+` [data-testid=app-slot]')?.dataset.mcpAppState === 'ready'`)
	tb.waitAppEvent("drew")
	tb.callVariant("spoof", "Q1", 2)
	var spoofed struct {
		Targets int `json:"targets"`
	}
	tb.appEventData("spoofed", &spoofed)
	// top, its own parent (proxy), the revenue App's proxy and View.
	if spoofed.Targets < 4 {
		t.Errorf("the spoofer reached %d windows, want at least 4 (else it tested little)", spoofed.Targets)
	}

	e := tb.callVariant("silent", "Q2", 3)
	sel := cardSel(3) + ` [data-testid=app-slot]`
	tb.waitFor("the silent App's fallback", `document.querySelector('`+sel+`')?.dataset.mcpAppState === 'fallback'`)
	if note := eval[string](tb, `document.querySelector('`+sel+` [data-testid=app-note]')?.textContent ?? ''`); !strings.Contains(note, "did not start in time") {
		t.Errorf("note %q, want the initialization timeout", note)
	}
	if fb := eval[string](tb, `document.querySelector('`+sel+` [data-testid=app-fallback]')?.textContent ?? ''`); fb != e.Result {
		t.Errorf("fallback %q, want the tool's text %q", fb, e.Result)
	}
	if n := eval[int](tb, `document.querySelectorAll('`+cardSel(3)+` iframe').length`); n != 0 {
		t.Errorf("%d frames after the timeout, want 0", n)
	}

	// A round trip to the revenue App after the forged messages: its
	// teardown. It drew once, its own figures.
	tb.click(tid("new-session"))
	tb.waitAppEvent("teardown")
	var drew []drewData
	for _, r := range tb.appLog() {
		var dd drewData
		if r.Server == "revenue" && json.Unmarshal(r.Data, &dd) == nil && dd.Event == "drew" {
			drew = append(drew, dd)
		}
	}
	if len(drew) != 1 || drew[0].Quarter != "Q3" || drew[0].Currency != "USD" || !slices.Equal(drew[0].Months, []string{"Jul", "Aug", "Sep"}) {
		t.Errorf("the revenue App drew %+v, want once, its own Q3 figures", drew)
	}
	for _, r := range tb.appLog() {
		if strings.Contains(string(r.Data), "FORGED") || strings.Contains(string(r.Data), "Q9") {
			t.Errorf("a forged message had an effect: %s from %s", r.Data, r.Server)
		}
	}
}
