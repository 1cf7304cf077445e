package webshell_test

// Real-browser tests of MCP Apps in the WebShell (docs/apps.md §9–11, §15 in
// the shared docs): the revenue demo's View mounted in the double sandboxed
// frame, its handshake, size, teardown, the compacted form and the frame's
// isolation. Everything is observed from the host page (the proxy and the
// App are out-of-process frames): data-mcp-app-state on the slot, the outer
// frame's height, and the test-mode log of the App's notifications/message.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

const (
	revenueTool = "revenue.show_revenue_dashboard"
	// appSlotSel is the app slot of the transcript's entry cards.
	appSlotSel = entrySel + ` [data-testid=app-slot]`
	// appFrameSel is the outer App frame in a slot.
	appFrameSel = appSlotSel + ` iframe[data-testid=app-frame]`
)

// sandboxRequests counts the page's requests of the sandbox proxy.
const sandboxRequests = `performance.getEntriesByType('resource').filter((e) => new URL(e.name).pathname === '/mcp-app-sandbox').length`

// appLogRecord is one notifications/message of an App, as the page keeps it
// in test mode (<html data-app-log="1">).
type appLogRecord struct {
	Server string          `json:"server"`
	Level  string          `json:"level"`
	Data   json.RawMessage `json:"data"`
}

// drewData is what the demo View reports after drawing a result.
type drewData struct {
	Event    string   `json:"event"`
	Kind     string   `json:"kind"`
	Quarter  string   `json:"quarter"`
	Region   string   `json:"region"`
	Currency string   `json:"currency"`
	Months   []string `json:"months"`
	Total    float64  `json:"total"`
}

// teardownData is what the demo View reports on ui/resource-teardown.
type teardownData struct {
	Event  string `json:"event"`
	Reason string `json:"reason"`
}

// revenueResult is the model-visible result of show_revenue_dashboard.
type revenueResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent struct {
		Quarter  string `json:"quarter"`
		Region   string `json:"region"`
		Currency string `json:"currency"`
		Months   []struct {
			Label   string `json:"label"`
			Revenue int64  `json:"revenue"`
		} `json:"months"`
		Total int64 `json:"total"`
	} `json:"structuredContent"`
	IsError bool `json:"isError"`
}

// appDisplay is the display record of an entry (apps.md §6).
type appDisplay struct {
	Type          string          `json:"type"`
	ServerName    string          `json:"serverName"`
	ResourceURI   string          `json:"resourceUri"`
	HTML          string          `json:"html"`
	ToolArguments json.RawMessage `json:"toolArguments"`
	ToolResult    json.RawMessage `json:"toolResult"`
	FallbackText  string          `json:"fallbackText"`
	Warning       string          `json:"warning"`
}

// appEntry is an entry with its result and display record.
type appEntry struct {
	ID      string          `json:"id"`
	Status  string          `json:"status"`
	Tool    string          `json:"tool"`
	Result  json.RawMessage `json:"result"`
	Display *appDisplay     `json:"display"`
}

func (d *daemon) appEntries(t *testing.T, sessionID string) []appEntry {
	t.Helper()
	var r struct {
		Entries []appEntry `json:"entries"`
	}
	d.apiJSON(t, http.MethodGet, "/sessions/"+sessionID+"/entries?limit=500", nil, &r)
	return r.Entries
}

// getNoAuth fetches url without a token and returns the response (body
// read) and its body.
func getNoAuth(t *testing.T, rawURL string) (*http.Response, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", rawURL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", rawURL, err)
	}
	return resp, string(b)
}

// screenshot saves a full-page PNG as evidence (out-of-process frames are
// composited into it) when WEBSHELL_TEST_SCREENSHOTS names a directory.
func (tb *tab) screenshot(name string) {
	tb.t.Helper()
	dir := os.Getenv("WEBSHELL_TEST_SCREENSHOTS")
	if dir == "" {
		return
	}
	png := run(tb, "taking a screenshot", chromedp.FullScreenshot(100))
	path := filepath.Join(dir, tb.t.Name()+"-"+name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		tb.t.Errorf("saving the screenshot: %v", err)
		return
	}
	tb.t.Logf("screenshot: %s", path)
}

// enableAppLog switches the page's App log on (test mode) and empties it.
func (tb *tab) enableAppLog() {
	tb.t.Helper()
	eval[bool](tb, `(() => { document.documentElement.dataset.appLog = '1'; window.__mcphostAppLog = []; return true; })()`)
}

// appLog returns the App messages the page has logged.
func (tb *tab) appLog() []appLogRecord {
	tb.t.Helper()
	return eval[[]appLogRecord](tb, `Array.isArray(window.__mcphostAppLog) ? window.__mcphostAppLog : []`)
}

// waitAppEvent waits until the App has logged an event (data.event) and
// returns the last such record.
func (tb *tab) waitAppEvent(event string) appLogRecord {
	tb.t.Helper()
	tb.waitFor("the App to log "+event,
		`(window.__mcphostAppLog ?? []).some((r) => r?.data?.event === `+jsString(event)+`)`)
	var last appLogRecord
	for _, r := range tb.appLog() {
		var ev struct {
			Event string `json:"event"`
		}
		if json.Unmarshal(r.Data, &ev) == nil && ev.Event == event {
			last = r
		}
	}
	return last
}

// waitAppState waits until the (first) app slot has the state.
func (tb *tab) waitAppState(state string) {
	tb.t.Helper()
	tb.waitFor("app slot state "+state,
		`document.querySelector('`+appSlotSel+`')?.dataset.mcpAppState === `+jsString(state))
}

// callRevenue calls the revenue dashboard for quarter from the form and
// returns the n-th entry (1-based) it produced.
func (tb *tab) callRevenue(quarter string, n int) shownEntry {
	tb.t.Helper()
	tb.selectTool(revenueTool)
	tb.choose("quarter", quarter)
	e := tb.call(n)
	if e.Name != revenueTool || e.Status != "ok" {
		tb.fatalf("revenue entry = %+v, want %s ok", e, revenueTool)
	}
	return e
}

// TestAppRevenueDashboard calls the revenue dashboard from the form: the
// View is mounted, initialized and draws the figures of structuredContent;
// the frame follows its size; the model-visible text is unchanged.
func TestAppRevenueDashboard(t *testing.T) {
	d := newDaemon(t)
	tb := newTab(t)
	tb.login(d)
	tb.enableAppLog()

	shown := tb.callRevenue("Q3", 1)
	tb.waitAppState("ready")
	rec := tb.waitAppEvent("drew")

	sid := eval[string](tb, `sessionStorage.getItem('mcphost.session') ?? ''`)
	stored := d.appEntries(t, sid)
	if len(stored) != 1 {
		t.Fatalf("stored %d entries, want 1", len(stored))
	}
	e := stored[0]
	if e.Display == nil || e.Display.Type != "mcp_app" || e.Display.HTML == "" || e.Display.ResourceURI != "ui://revenue-dashboard" {
		t.Fatalf("stored display record %+v, want an mcp_app with html", e.Display)
	}
	var res revenueResult
	if err := json.Unmarshal(e.Result, &res); err != nil {
		t.Fatalf("decoding the result: %v", err)
	}
	sc := res.StructuredContent

	// What the App drew is what the tool returned.
	if rec.Server != "revenue" || rec.Level != "info" {
		t.Errorf("App log record from %q at %q, want revenue at info", rec.Server, rec.Level)
	}
	var drew drewData
	if err := json.Unmarshal(rec.Data, &drew); err != nil {
		t.Fatalf("decoding %s: %v", rec.Data, err)
	}
	var labels []string
	for _, m := range sc.Months {
		labels = append(labels, m.Label)
	}
	if drew.Kind != "chart" || drew.Quarter != "Q3" || drew.Quarter != sc.Quarter || drew.Region != sc.Region ||
		drew.Currency != sc.Currency || !slices.Equal(drew.Months, labels) || drew.Total != float64(sc.Total) {
		t.Errorf("the App drew %+v, want the figures of %+v", drew, sc)
	}
	if !slices.Equal(labels, []string{"Jul", "Aug", "Sep"}) {
		t.Errorf("structuredContent months %q, want Jul, Aug, Sep", labels)
	}
	// tool-input came once, before the result, and the View drew once.
	var drawn int
	for _, r := range tb.appLog() {
		if strings.Contains(string(r.Data), `"drew"`) {
			drawn++
		}
	}
	if drawn != 1 {
		t.Errorf("the App drew %d times, want 1", drawn)
	}

	// The frame follows size-changed, clamped to 120–640 px.
	tb.waitFor("the App's size", `document.querySelector('`+appSlotSel+`')?.dataset.appHeight !== undefined`)
	tb.waitFor("the frame to take the App's height", `(() => {
  const slot = document.querySelector('`+appSlotSel+`');
  const f = slot?.querySelector('iframe[data-testid=app-frame]');
  return f && Math.round(f.getBoundingClientRect().height) === Number(slot.dataset.appHeight);
})()`)
	height := eval[float64](tb, `document.querySelector('`+appFrameSel+`').getBoundingClientRect().height`)
	if height < 120 || height > 640 {
		t.Errorf("frame height %v, want within 120–640", height)
	}
	t.Logf("frame height %v px after size-changed", height)
	// The sandbox request shows up in the page's resource timing, so its
	// absence for a compacted entry (TestAppReloadAndCompaction) means
	// something.
	if n := eval[int](tb, sandboxRequests); n != 1 {
		t.Errorf("the page requested the sandbox %d times, want 1", n)
	}
	tb.screenshot("revenue-dashboard")

	// The model-visible result is unchanged: the card's result text is the
	// tool's text block, which is also the record's fallback text.
	if len(res.Content) != 1 || res.Content[0].Type != "text" {
		t.Fatalf("result content %+v, want one text block", res.Content)
	}
	text := res.Content[0].Text
	if shown.Result != text || !strings.Contains(text, "$4.98M") {
		t.Errorf("card result %q, want the tool's text %q", shown.Result, text)
	}
	if e.Display.FallbackText != text {
		t.Errorf("fallbackText %q, want the tool's text %q", e.Display.FallbackText, text)
	}
	var fromDisplay, fromEntry any
	if err := json.Unmarshal(e.Display.ToolResult, &fromDisplay); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(e.Result, &fromEntry); err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(fromDisplay)
	b, _ := json.Marshal(fromEntry)
	if string(a) != string(b) {
		t.Errorf("display.toolResult %s differs from the entry's result %s", a, b)
	}
	// The App's HTML is nowhere in the host page.
	if eval[bool](tb, `document.documentElement.outerHTML.includes('mcphost-revenue-dashboard')`) {
		t.Error("the App's HTML reached the host page's DOM")
	}
	if n := eval[int](tb, `document.querySelectorAll('iframe').length`); n != 1 {
		t.Errorf("%d iframes in the page, want 1 (the inner one lives in the proxy)", n)
	}
}

// TestAppTeardownOnSessionSwitch switches to a new session under a mounted
// App: the App is told (ui/resource-teardown with the reason), then its
// frame goes and the slot is torn-down.
func TestAppTeardownOnSessionSwitch(t *testing.T) {
	d := newDaemon(t)
	tb := newTab(t)
	tb.login(d)
	tb.enableAppLog()

	tb.callRevenue("Q1", 1)
	tb.waitAppState("ready")
	tb.waitAppEvent("drew")
	eval[bool](tb, `(() => { window.__appSlot = document.querySelector('`+appSlotSel+`'); return !!window.__appSlot; })()`)

	tb.click(tid("new-session"))
	tb.waitFor("the old slot to be torn down", `window.__appSlot?.dataset.mcpAppState === 'torn-down'`)
	// The App saw the teardown before its frame went: its log record came
	// in through the frame before the state changed.
	var got []teardownData
	for _, r := range tb.appLog() {
		var td teardownData
		if json.Unmarshal(r.Data, &td) == nil && td.Event == "teardown" {
			got = append(got, td)
		}
	}
	if len(got) != 1 || got[0].Reason != "session switch" {
		t.Errorf("the App logged teardowns %+v, want one with reason %q", got, "session switch")
	}
	tb.waitFor("every App frame to go", `document.querySelectorAll('iframe').length === 0`)
	if eval[bool](tb, `window.__appSlot.isConnected`) {
		t.Error("the old slot is still in the page")
	}
	if n := eval[int](tb, `document.querySelectorAll('`+entrySel+`').length`); n != 0 {
		t.Errorf("%d entries shown in the new session, want 0", n)
	}
}

// TestAppReloadAndCompaction reloads the page (a stored entry mounts its App
// again with a fresh handshake), then compacts the session: the entry shows
// its fallback text and no frame at all.
func TestAppReloadAndCompaction(t *testing.T) {
	d := newDaemon(t)
	tb := newTab(t)
	tb.login(d)

	shown := tb.callRevenue("Q2", 1)
	tb.waitAppState("ready")
	sid := eval[string](tb, `sessionStorage.getItem('mcphost.session') ?? ''`)

	tb.reload()
	tb.waitVisible(tid("principal"))
	tb.enableAppLog()
	tb.waitAppState("ready")
	tb.waitAppEvent("drew")

	var r struct {
		Compacted int `json:"compacted"`
	}
	d.apiJSON(t, http.MethodPost, "/sessions/"+sid+"/compact", map[string]any{}, &r)
	if r.Compacted != 1 {
		t.Errorf("compacted %d records, want 1", r.Compacted)
	}
	stored := d.appEntries(t, sid)
	if len(stored) != 1 || stored[0].Display == nil || stored[0].Display.HTML != "" || stored[0].Display.FallbackText == "" {
		t.Fatalf("after compaction the stored entries are %+v, want one with an empty html and fallback text", stored)
	}
	fallback := stored[0].Display.FallbackText

	tb.reload()
	tb.waitVisible(tid("principal"))
	tb.waitFor("the entry", `document.querySelectorAll('`+entrySel+`').length === 1`)
	tb.waitAppState("fallback")
	if n := eval[int](tb, `document.querySelectorAll('iframe').length`); n != 0 {
		t.Errorf("%d iframes for a compacted entry, want none", n)
	}
	if got := eval[string](tb, `document.querySelector('`+appSlotSel+` [data-testid=app-fallback]')?.textContent ?? ''`); got != fallback {
		t.Errorf("fallback shown %q, want %q", got, fallback)
	}
	if n := eval[int](tb, sandboxRequests); n != 0 {
		t.Errorf("the page requested the sandbox %d times for a compacted entry", n)
	}
	after := tb.readEntries()
	if len(after) != 1 || after[0].Result != shown.Result {
		t.Errorf("after compaction the card's result is %+v, want %q unchanged", after, shown.Result)
	}
}

// TestAppFrameIsolation checks the structural guarantees that keep an App
// away from the WebShell's token: the outer frame's attributes, the loopback
// origin swap, its opacity from the page, the proxy's headers and the page's
// own CSP.
func TestAppFrameIsolation(t *testing.T) {
	d := newDaemon(t)
	tb := newTab(t)
	tb.login(d)
	tb.callRevenue("Q4", 1)
	tb.waitAppState("ready")

	type frameAttrs struct {
		Sandbox        string   `json:"sandbox"`
		Allow          *string  `json:"allow"`
		Referrerpolicy string   `json:"referrerpolicy"`
		Title          string   `json:"title"`
		Src            string   `json:"src"`
		Attributes     []string `json:"attributes"`
		OpaqueDocument bool     `json:"opaqueDocument"`
		LocationThrows bool     `json:"locationThrows"`
		StorageThrows  bool     `json:"storageThrows"`
	}
	f := eval[frameAttrs](tb, `(() => {
  const f = document.querySelector('`+appFrameSel+`');
  let locationThrows = false, storageThrows = false;
  try { void f.contentWindow.location.href; } catch { locationThrows = true; }
  try { void f.contentWindow.sessionStorage; } catch { storageThrows = true; }
  return {
    sandbox: f.getAttribute('sandbox'), allow: f.getAttribute('allow'),
    referrerpolicy: f.getAttribute('referrerpolicy'), title: f.getAttribute('title'), src: f.src,
    attributes: f.getAttributeNames(), opaqueDocument: f.contentDocument === null,
    locationThrows, storageThrows,
  };
})()`)
	if f.Sandbox != "allow-scripts allow-forms" {
		t.Errorf("sandbox = %q, want exactly %q", f.Sandbox, "allow-scripts allow-forms")
	}
	for _, bad := range []string{"allow-same-origin", "allow-popups", "allow-top-navigation", "allow-modals"} {
		if strings.Contains(f.Sandbox, bad) {
			t.Errorf("sandbox %q holds %s", f.Sandbox, bad)
		}
	}
	if f.Allow != nil {
		t.Errorf("the frame has an allow attribute %q", *f.Allow)
	}
	if f.Referrerpolicy != "origin" || f.Title != "revenue MCP App" {
		t.Errorf("referrerpolicy %q, title %q; want origin and %q", f.Referrerpolicy, f.Title, "revenue MCP App")
	}
	if slices.Contains(f.Attributes, "srcdoc") {
		t.Error("the outer frame has a srcdoc: the App's HTML must only reach the proxy")
	}
	if !f.OpaqueDocument || !f.LocationThrows || !f.StorageThrows {
		t.Errorf("the page can reach into the frame: contentDocument null %v, location throws %v, storage throws %v",
			f.OpaqueDocument, f.LocationThrows, f.StorageThrows)
	}

	// The loopback origin swap: page on 127.0.0.1:P, proxy on localhost:P.
	u, err := url.Parse(f.Src)
	if err != nil {
		t.Fatalf("frame src %q: %v", f.Src, err)
	}
	if u.Scheme != "http" || u.Host != fmt.Sprintf("localhost:%d", d.port) || u.Path != "/mcp-app-sandbox" {
		t.Errorf("frame src %q, want http://localhost:%d/mcp-app-sandbox", f.Src, d.port)
	}
	if got := u.Query().Get("hostOrigin"); got != d.base {
		t.Errorf("hostOrigin = %q, want %q", got, d.base)
	}

	// The proxy, fetched without a token as the frame does: opaque by its
	// own header, framable only by this page, no 'self'.
	resp, body := getNoAuth(t, f.Src)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET the frame's src: status %d: %s", resp.StatusCode, body)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"sandbox allow-scripts allow-forms", "frame-ancestors " + d.base, "connect-src 'none'", "default-src 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("proxy CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "'self'") || strings.Contains(csp, "allow-same-origin") {
		t.Errorf("proxy CSP %q holds 'self' or allow-same-origin", csp)
	}
	if resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Error("the proxy answers with Access-Control-Allow-Origin")
	}
	if strings.Contains(body, aliceToken) || strings.Contains(body, "mcphost-revenue-dashboard") {
		t.Error("the proxy page holds the token or the App's HTML")
	}

	// The WebShell page itself cannot be framed, and frames only the
	// daemon's loopback origins.
	resp, _ = getNoAuth(t, d.base+"/")
	page := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(page, "frame-ancestors 'none'") {
		t.Errorf("WebShell CSP %q lacks frame-ancestors 'none'", page)
	}
	var frameSrc string
	for _, dir := range strings.Split(page, ";") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(dir), "frame-src "); ok {
			frameSrc = v
		}
	}
	if !slices.Contains(strings.Fields(frameSrc), fmt.Sprintf("http://localhost:%d", d.port)) || strings.Contains(frameSrc, "*") {
		t.Errorf("WebShell frame-src %q, want the loopback origins of port %d and no wildcard", frameSrc, d.port)
	}
}

// TestAppFromLocalhostPage opens the WebShell at http://localhost:P: the
// proxy then comes from 127.0.0.1:P, and the App still mounts.
func TestAppFromLocalhostPage(t *testing.T) {
	d := newDaemon(t)
	tb := newTab(t)
	local := fmt.Sprintf("http://localhost:%d", d.port)
	tb.navigate(local + "/#token=" + aliceToken)
	tb.waitVisible(tid("principal"))
	tb.waitServerReady("revenue")
	tb.enableAppLog()
	tb.callRevenue("Q3", 1)
	tb.waitAppState("ready")
	tb.waitAppEvent("drew")
	src := eval[string](tb, `document.querySelector('`+appFrameSel+`').src`)
	u, err := url.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	if u.Host != fmt.Sprintf("127.0.0.1:%d", d.port) || u.Query().Get("hostOrigin") != local {
		t.Errorf("frame src %q, want the proxy on 127.0.0.1:%d with hostOrigin %s", src, d.port, local)
	}
}
