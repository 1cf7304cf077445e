package webshell_test

// The official MCP Apps SDK (@modelcontextprotocol/ext-apps, its browser
// build from npm) run as an App inside the WebShell's real sandbox: it must
// accept the host's ui/initialize answer, get the tool input and result, and
// every message the host sends it must validate against the package's own
// schemas (its zod schemas in the browser, and its JSON Schema file here),
// so that a drift between the SDK and the bridge fails a test, not a user.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testbin"
)

const extAppsPkg = "@modelcontextprotocol/ext-apps"

// extAppsDir returns the installed ext-apps package's directory.
func extAppsDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(testbin.Interop(t, "../../..", extAppsPkg), "node_modules", extAppsPkg)
}

var bundleExport = regexp.MustCompile(`export\s*\{([^{}]*)\};?\s*$`)

// sdkBundle returns the SDK's self-contained browser build (app-with-deps.js)
// as a classic statement list that binds its exports to the constant __sdk,
// for inlining into an App's module script.
func sdkBundle(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(extAppsDir(t), "dist", "src", "app-with-deps.js"))
	if err != nil {
		t.Fatalf("reading the SDK's browser build: %v", err)
	}
	src := string(b)
	m := bundleExport.FindStringSubmatchIndex(src)
	if m == nil {
		t.Fatal("the SDK's browser build does not end in an export list; its layout changed")
	}
	var fields []string
	for _, part := range strings.Split(src[m[2]:m[3]], ",") {
		local, exported, ok := strings.Cut(strings.TrimSpace(part), " as ")
		if !ok {
			exported = local
		}
		fields = append(fields, fmt.Sprintf("%s: %s", strings.TrimSpace(exported), strings.TrimSpace(local)))
	}
	if strings.Contains(src, "</script") {
		t.Fatal("the SDK's browser build contains </script and cannot be inlined")
	}
	return src[:m[0]] + "\nconst __sdk = {" + strings.Join(fields, ", ") + "};\n"
}

// sdkProbe is the App's own code after the SDK: it records every message
// the host sends (raw, as received) and checks it with the SDK's zod
// schemas, connects with the SDK's App class, and reports through the SDK's
// sendLog.
const sdkProbe = `
const S = __sdk;
const received = [];
const problems = [];
const schemaOf = {
  'ui/notifications/tool-input': S.McpUiToolInputNotificationSchema,
  'ui/notifications/tool-input-partial': S.McpUiToolInputPartialNotificationSchema,
  'ui/notifications/tool-result': S.McpUiToolResultNotificationSchema,
  'ui/notifications/tool-cancelled': S.McpUiToolCancelledNotificationSchema,
  'ui/notifications/host-context-changed': S.McpUiHostContextChangedNotificationSchema,
  'ui/resource-teardown': S.McpUiResourceTeardownRequestSchema,
};
window.addEventListener('message', (e) => {
  if (e.source !== window.parent) return;
  const m = e.data;
  if (!m || typeof m !== 'object') return;
  received.push(JSON.parse(JSON.stringify(m)));
  let schema = schemaOf[m.method];
  let value = m;
  if (!m.method && m.result && m.result.hostContext) { schema = S.McpUiInitializeResultSchema; value = m.result; }
  if (m.method && !schema) { problems.push('no schema for ' + m.method); return; }
  if (!schema) return;
  const r = schema.safeParse(value);
  if (!r.success) problems.push((m.method || 'ui/initialize result') + ': ' + JSON.stringify(r.error.issues).slice(0, 800));
});
const app = new S.App({ name: 'sdk-probe', version: '1.0.0' }, {});
let input = null, result = null;
const contexts = [];
const report = (event) => app.sendLog({ level: 'info', data: {
  event, input, result, contexts, problems, received,
  hostContext: app.getHostContext() ?? null,
  hostCapabilities: app.getHostCapabilities() ?? null,
  hostVersion: app.getHostVersion() ?? null,
} });
app.ontoolinput = (p) => { input = p; };
app.ontoolresult = (p) => { result = p; report('sdk-result'); };
app.onhostcontextchanged = (p) => { contexts.push(p); report('sdk-context-' + contexts.length); };
app.onteardown = async () => ({});
await app.connect();
document.getElementById('state').textContent = 'connected';
`

// sdkApp returns the HTML of an App built on the official SDK with probe as
// its code (in a block of its own, apart from the bundle's names).
func sdkApp(t *testing.T, probe string) string {
	return "<!doctype html><html><head><meta charset=\"utf-8\"><title>SDK probe</title></head><body>" +
		"<p id=\"state\">loading</p><script type=\"module\">\n" + sdkBundle(t) + "{\n" + probe + "\n}\n</script></body></html>"
}

// sdkTool is the tool definition of the probe's display record: a full MCP
// tool, as the daemon puts it in the record.
const sdkTool = `{"name": "get-report", "title": "Get a report", "description": "Reports.",
  "inputSchema": {"type": "object", "properties": {"quarter": {"type": "string", "enum": ["Q1", "Q2"]}}, "required": ["quarter"]},
  "annotations": {"readOnlyHint": true},
  "_meta": {"ui": {"resourceUri": "ui://sdk/probe"}}}`

// mountRecordApp mounts html with the tool definition toolJSON (JSON, or
// "" for none) through the page's bridge in a slot of its own; it returns
// the slot's selector.
func (tb *tab) mountRecordApp(id, html, toolJSON string) string {
	tb.t.Helper()
	tool := "undefined"
	if toolJSON != "" {
		tool = toolJSON
	}
	ok := run(tb, "mounting an App", chromedp.Evaluate[bool](`(async () => {
  const m = await import('/assets/appbridge.js');
  const { ok, rec } = m.checkDisplay({
    type: 'mcp_app', serverName: 'sdk', resourceUri: 'ui://sdk/probe', html: `+jsString(html)+`,
    fallbackText: 'the probe fallback', toolArguments: { quarter: 'Q1' }, tool: `+tool+`,
    toolResult: { content: [{ type: 'text', text: 'Q1: 42' }], structuredContent: { quarter: 'Q1', total: 42 } },
  });
  if (!ok) return false;
  const slot = document.createElement('div');
  slot.className = 'app-slot';
  slot.dataset.testid = `+jsString(id)+`;
  document.body.append(slot);
  m.mountApp(slot, rec, { url: m.sandboxURL(location, undefined), tool: 'get-report' });
  return true;
})()`, chromedp.EvalAwaitPromise))
	if !ok {
		tb.fatalf("the App's record did not pass checkDisplay")
	}
	return tid(id)
}

type sdkReport struct {
	Event            string            `json:"event"`
	Input            map[string]any    `json:"input"`
	Result           map[string]any    `json:"result"`
	Contexts         []map[string]any  `json:"contexts"`
	Problems         []string          `json:"problems"`
	Received         []json.RawMessage `json:"received"`
	HostContext      map[string]any    `json:"hostContext"`
	HostCapabilities map[string]any    `json:"hostCapabilities"`
	HostVersion      map[string]any    `json:"hostVersion"`
}

// setColorScheme emulates prefers-color-scheme: scheme for the tab.
func (tb *tab) setColorScheme(scheme string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitBound)
	defer cancel()
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
	}); err != nil {
		tb.fatalf("emulating prefers-color-scheme %s: %v", scheme, err)
	}
}

// extAppsSchemas resolves the package's JSON Schema definitions by name.
func extAppsSchemas(t *testing.T) func(name string) *jsonschema.Resolved {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(extAppsDir(t), "dist", "src", "generated", "schema.json"))
	if err != nil {
		t.Fatalf("reading the SDK's schema.json: %v", err)
	}
	var doc struct {
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("decoding schema.json: %v", err)
	}
	return func(name string) *jsonschema.Resolved {
		t.Helper()
		if _, ok := doc.Defs[name]; !ok {
			t.Fatalf("schema.json has no definition %s", name)
		}
		// Each definition is a schema of its own, with its own $defs.
		var s jsonschema.Schema
		if err := json.Unmarshal(doc.Defs[name], &s); err != nil {
			t.Fatalf("schema %s: %v", name, err)
		}
		r, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("resolving schema %s: %v", name, err)
		}
		return r
	}
}

// checkContainerDimensions checks and removes hostContext.containerDimensions
// (in an initialize result or a host-context-changed notification) from v.
// The package's JSON Schema writes it as the allOf of two anyOf lists of
// closed objects ({height} | {maxHeight}, and {width} | {maxWidth}), which no
// object with both a height and a width key satisfies; the SDK itself checks
// it with zod (non-strict), which the probe runs in the browser. Here it is
// checked by hand: a number for height or maxHeight, one for width or
// maxWidth, no other key.
func checkContainerDimensions(t *testing.T, name string, v any) {
	t.Helper()
	m, _ := v.(map[string]any)
	var holder map[string]any
	switch name {
	case "McpUiInitializeResult":
		holder, _ = m["hostContext"].(map[string]any)
	case "McpUiHostContextChangedNotification":
		holder, _ = m["params"].(map[string]any)
	}
	raw, ok := holder["containerDimensions"]
	if !ok {
		return
	}
	delete(holder, "containerDimensions")
	dims, _ := raw.(map[string]any)
	isNum := func(k string) bool { _, ok := dims[k].(float64); return ok }
	if dims == nil || !(isNum("height") || isNum("maxHeight")) || !(isNum("width") || isNum("maxWidth")) || len(dims) != 2 {
		t.Errorf("%s: containerDimensions %v, want a number for height or maxHeight and one for width or maxWidth", name, raw)
	}
}

// validateHostMessages checks every message the App received against the
// package's JSON Schema of its method (the ui/initialize answer against
// McpUiInitializeResult).
func validateHostMessages(t *testing.T, msgs []json.RawMessage) {
	t.Helper()
	schemas := extAppsSchemas(t)
	byMethod := map[string]string{
		"ui/notifications/tool-input":           "McpUiToolInputNotification",
		"ui/notifications/tool-result":          "McpUiToolResultNotification",
		"ui/notifications/host-context-changed": "McpUiHostContextChangedNotification",
		"ui/resource-teardown":                  "McpUiResourceTeardownRequest",
		"ui/notifications/tool-cancelled":       "McpUiToolCancelledNotification",
	}
	sawInit := false
	for _, raw := range msgs {
		var m struct {
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Errorf("message %s: %v", raw, err)
			continue
		}
		name, value := byMethod[m.Method], any(nil)
		switch {
		case m.Method == "" && len(m.Result) > 0 && strings.Contains(string(m.Result), `"hostContext"`):
			name, sawInit = "McpUiInitializeResult", true
			json.Unmarshal(m.Result, &value)
		case m.Method == "":
			continue // the answer to one of the App's other requests
		case name == "":
			t.Errorf("the host sent %s, which has no schema in %s", m.Method, extAppsPkg)
			continue
		default:
			// The schemas describe method and params; the JSON-RPC
			// envelope is not theirs.
			var env map[string]any
			json.Unmarshal(raw, &env)
			delete(env, "jsonrpc")
			value = env
		}
		checkContainerDimensions(t, name, value)
		if err := schemas(name).Validate(value); err != nil {
			t.Errorf("%s does not validate against %s: %v\nmessage: %.2000s", name, extAppsPkg, err, raw)
		}
	}
	if !sawInit {
		t.Error("the App never received a ui/initialize answer")
	}
}

// TestOfficialAppSDK runs the official SDK's App class inside the real
// sandbox: it connects (accepting the host's answer), gets the tool input and
// result, gets host-context-changed on a theme change and a resize, and
// every message the host sent validates against the package's schemas.
func TestOfficialAppSDK(t *testing.T) {
	html := sdkApp(t, sdkProbe)
	d := newDaemon(t)
	tb := newTab(t)
	tb.login(d)
	tb.enableAppLog()
	slot := tb.mountRecordApp("sdk-slot", html, sdkTool)
	tb.waitFor("the SDK App to be ready", `document.querySelector('`+slot+`')?.dataset.mcpAppState === 'ready'`)

	var r sdkReport
	tb.appEventData("sdk-result", &r)
	if q, _ := r.Input["arguments"].(map[string]any); q["quarter"] != "Q1" {
		t.Errorf("tool input %v, want arguments {quarter: Q1}", r.Input)
	}
	if sc, _ := r.Result["structuredContent"].(map[string]any); sc["total"] != float64(42) {
		t.Errorf("tool result %v, want structuredContent.total 42", r.Result)
	}
	hc := r.HostContext
	tool, _ := hc["toolInfo"].(map[string]any)["tool"].(map[string]any)
	if tool["name"] != "get-report" || tool["title"] != "Get a report" {
		t.Errorf("hostContext.toolInfo.tool = %v, want the tool definition", tool)
	}
	if schema, _ := tool["inputSchema"].(map[string]any); schema["type"] != "object" || schema["required"] == nil {
		t.Errorf("toolInfo.tool.inputSchema = %v, want the tool's schema", tool["inputSchema"])
	}
	for _, k := range []string{"theme", "locale", "timeZone", "platform", "displayMode", "availableDisplayModes", "containerDimensions"} {
		if hc[k] == nil {
			t.Errorf("hostContext.%s is missing: %v", k, hc)
		}
	}
	if dims, _ := hc["containerDimensions"].(map[string]any); dims["width"] == nil || dims["maxHeight"] != float64(640) {
		t.Errorf("containerDimensions = %v, want the width and maxHeight 640", dims)
	}
	if r.HostCapabilities["logging"] == nil || r.HostCapabilities["sandbox"] == nil {
		t.Errorf("hostCapabilities = %v, want logging and sandbox", r.HostCapabilities)
	}
	if r.HostVersion["name"] != "mcphost" {
		t.Errorf("hostInfo = %v", r.HostVersion)
	}

	// A theme change and a resize reach the App as host-context-changed.
	theme := "dark"
	if hc["theme"] == "dark" {
		theme = "light"
	}
	tb.setColorScheme(theme)
	var c1 sdkReport
	tb.appEventData("sdk-context-1", &c1)
	if c1.Contexts[0]["theme"] != theme || c1.HostContext["theme"] != theme {
		t.Errorf("after the theme change: contexts %v, merged context theme %v, want %s", c1.Contexts, c1.HostContext["theme"], theme)
	}
	eval[bool](tb, `(() => { document.querySelector('`+slot+`').style.width = '400px'; return true; })()`)
	var c2 sdkReport
	tb.appEventData("sdk-context-2", &c2)
	if dims, _ := c2.Contexts[1]["containerDimensions"].(map[string]any); dims["width"] == nil || dims["width"].(float64) > 400 {
		t.Errorf("after the resize: %v, want containerDimensions with the new width", c2.Contexts[1])
	}
	if len(c2.Problems) > 0 {
		t.Errorf("the SDK's schemas refused host messages: %v", c2.Problems)
	}
	validateHostMessages(t, c2.Received)

	// Teardown (the SDK's onteardown answers it).
	run(tb, "tearing the SDK App down", chromedp.Evaluate[bool](`(async () => { const m = await import('/assets/appbridge.js');
  await m.teardownSlot(document.querySelector('`+slot+`'), 'test'); return true; })()`, chromedp.EvalAwaitPromise))
	tb.waitFor("the SDK App to be torn down", `document.querySelector('`+slot+`')?.dataset.mcpAppState === 'torn-down'`)
}

// TestAppFailureShownAtOnce mounts an App that throws on the host's
// ui/initialize answer: the slot shows the App's own error as soon as it
// happens, not the 30-second "did not start in time", and the text fallback
// stays. An SDK App that throws after it has connected keeps running, and
// the error shows in its log pane.
func TestAppFailureShownAtOnce(t *testing.T) {
	d := newDaemon(t)
	tb := newTab(t)
	tb.login(d)
	tb.enableAppLog()
	const thrower = `<!doctype html><html><body><script>
window.addEventListener('message', (e) => {
  if (e.source !== window.parent || !e.data || !e.data.result) return;
  throw new Error('the View rejects this answer');
});
window.parent.postMessage({ jsonrpc: '2.0', id: 1, method: 'ui/initialize',
  params: { protocolVersion: '2026-01-26', appInfo: { name: 'thrower', version: '1' }, appCapabilities: {} } }, '*');
</script></body></html>`
	slot := tb.mountRecordApp("thrower", thrower, sdkTool)
	tb.waitFor("the thrower's fallback", `document.querySelector('`+slot+`')?.dataset.mcpAppState === 'fallback'`)
	note := eval[string](tb, `document.querySelector('`+slot+` [data-testid=app-note]')?.textContent ?? ''`)
	if !strings.Contains(note, "the View rejects this answer") || !strings.Contains(note, "failed to start") {
		t.Errorf("note %q, want the App's error", note)
	}
	if got := eval[string](tb, `document.querySelector('`+slot+` [data-testid=app-fallback]')?.textContent ?? ''`); got != "the probe fallback" {
		t.Errorf("fallback %q", got)
	}

	// An error after initialization (here: an SDK App that connects, then
	// throws) does not unmount the App: it goes to the entry's App log pane.
	strict := sdkApp(t, `
const app = new __sdk.App({ name: 'strict', version: '1' }, {});
await app.connect();
throw new Error('strict probe: connected, but refuses to go on: ' + (app.getHostContext()?.toolInfo?.tool?.name ?? '?'));
`)
	slot2 := tb.mountRecordApp("strict", strict, sdkTool)
	tb.waitFor("the strict App's fallback or ready state", `['fallback', 'ready'].includes(document.querySelector('`+slot2+`')?.dataset.mcpAppState)`)
	note2 := eval[string](tb, `document.querySelector('`+slot2+` [data-testid=app-note]')?.textContent ?? document.querySelector('`+slot2+` [data-testid=app-log]')?.textContent ?? ''`)
	state := eval[string](tb, `document.querySelector('`+slot2+`').dataset.mcpAppState`)
	if state != "ready" {
		t.Errorf("the SDK App is %s (%q), want ready: it accepted the answer", state, note2)
	}
	tb.waitFor("the strict App's error in its log", `(document.querySelector('`+slot2+` [data-testid=app-log]')?.textContent ?? '').includes('refuses to go on: get-report')`)
}

// displayModeProbe is an App on the official SDK that walks through the
// display modes, waiting for the test's user actions in between, and
// reports every answer: fullscreen; (the user presses Escape) fullscreen
// again at once (refused: the user just left); pip after the cool-down;
// (the user clicks the close button) then a loop of 20 requests.
const displayModeProbe = `
const app = new __sdk.App({ name: 'modes', version: '1' }, {});
const steps = [];
const contexts = [];
let waiter = null;
app.onhostcontextchanged = (p) => { contexts.push(p.displayMode ?? null); if (waiter && p.displayMode === waiter.mode) { waiter.resolve(); waiter = null; } };
const until = (mode) => new Promise((resolve) => { waiter = { mode, resolve }; });
const log = (event, extra) => app.sendLog({ level: 'info', data: { event, steps, contexts, available: app.getHostContext()?.availableDisplayModes ?? null, ...extra } });
const ask = async (mode) => { try { const r = await app.requestDisplayMode({ mode }); steps.push(mode + '->' + r.mode); return r.mode; } catch (e) { steps.push(mode + '->error ' + e.message); return 'error'; } };
await app.connect();
if (await ask('fullscreen') === 'fullscreen') {
  log('modes-fullscreen');
  await until('inline');
  await ask('fullscreen');
  await new Promise((r) => setTimeout(r, 1700));
  await ask('pip');
  log('modes-pip');
  await until('inline');
  const answers = [];
  for (let i = 0; i < 20; i++) answers.push(await ask(i % 2 ? 'inline' : 'fullscreen'));
  await ask('inline');
  await ask('maximised');
  log('modes-done', { answers });
} else {
  log('modes-refused');
}
`

type modesReport struct {
	Steps     []string `json:"steps"`
	Contexts  []any    `json:"contexts"`
	Available []string `json:"available"`
	Answers   []string `json:"answers"`
}

// TestAppDisplayModes drives ui/request-display-mode from the official SDK:
// with app_display_modes on, fullscreen is an overlay over the whole window
// that Escape closes, pip a docked frame that stays in view while the page
// scrolls and that its close button ends, the App is told each change, a
// request right after the user left is refused, a loop gets at most five
// changes, and every answer is the mode in effect. With the switch off the
// App stays inline and the entry's log says why.
func TestAppDisplayModes(t *testing.T) {
	html := sdkApp(t, displayModeProbe)
	d := newDaemonWith(t, func(cfg *config.Config, bin string) {
		cfg.Servers[1].AppDisplayModes = true // revenue
		cfg.Servers = append(cfg.Servers, stdioServer("revenue_off", bin))
	})
	tb := newTab(t)
	tb.login(d)
	tb.enableAppLog()
	tb.callRevenue("Q3", 1)
	sid := eval[string](tb, `sessionStorage.getItem('mcphost.session') ?? ''`)
	app := d.appEntries(t, sid)[0]

	slot := tb.mountBoundApp("modes", html, "revenue", app.ID, sid)
	var r modesReport
	tb.appEventData("modes-fullscreen", &r)
	if !slices.Equal(r.Available, []string{"inline", "fullscreen", "pip"}) {
		t.Errorf("availableDisplayModes %v, want inline, fullscreen and pip", r.Available)
	}
	wrap := slot + ` .app-frame-wrap`
	if !eval[bool](tb, `(() => { const r = document.querySelector('`+wrap+`').getBoundingClientRect();
  return r.left === 0 && r.top === 0 && r.width === innerWidth && r.height === innerHeight; })()`) {
		t.Error("the fullscreen App does not cover the window")
	}
	if got := eval[string](tb, `document.querySelector('`+wrap+` [data-testid=app-mode-bar]')?.textContent ?? ''`); !strings.Contains(got, "revenue MCP App") {
		t.Errorf("fullscreen bar %q, want the server's name", got)
	}
	tb.do("pressing Escape", chromedp.KeyEvent(kb.Escape))

	tb.appEventData("modes-pip", &r)
	if len(r.Steps) < 3 || r.Steps[1] != "fullscreen->inline" || r.Steps[2] != "pip->pip" {
		t.Errorf("steps %v, want fullscreen refused right after Escape, then pip", r.Steps)
	}
	// The docked frame stays in view while the page scrolls.
	eval[bool](tb, `(() => { window.scrollTo(0, document.body.scrollHeight); document.querySelectorAll('*').forEach((e) => { if (e.scrollHeight > e.clientHeight) e.scrollTop = e.scrollHeight; }); return true; })()`)
	if !eval[bool](tb, `(() => { const r = document.querySelector('`+wrap+`').getBoundingClientRect();
  return r.bottom <= innerHeight && r.right <= innerWidth && r.top >= 0 && r.width < innerWidth; })()`) {
		t.Error("the picture-in-picture frame is not docked inside the window")
	}
	tb.click(wrap + ` [data-testid=app-mode-close]`)

	tb.appEventData("modes-done", &r)
	changes := 0
	for i, a := range r.Answers {
		if a != "inline" && a != "fullscreen" {
			t.Errorf("answer %d is %q, want a mode", i, a)
		}
		if i > 0 && a != r.Answers[i-1] {
			changes++
		}
	}
	if changes > 5 {
		t.Errorf("a loop of requests changed the mode %d times: %v", changes, r.Answers)
	}
	if last := r.Steps[len(r.Steps)-1]; !strings.HasPrefix(last, "maximised->error") {
		t.Errorf("an unknown mode got %q, want an error", last)
	}
	for _, want := range []string{"fullscreen", "inline", "pip", "inline"} {
		if !slices.Contains(r.Contexts, any(want)) {
			t.Errorf("host-context-changed displayModes %v, want %s among them", r.Contexts, want)
		}
	}

	// With app_display_modes off: inline only, and the log says why.
	tb.selectTool("revenue_off.show_revenue_dashboard")
	tb.choose("quarter", "Q1")
	tb.click(tid("call-button"))
	tb.waitFor("the second App entry", `document.querySelectorAll('`+entrySel+`').length >= 2`)
	off := d.appEntries(t, sid)
	var offID string
	for _, e := range off {
		if e.ID != app.ID {
			offID = e.ID
		}
	}
	slot2 := tb.mountBoundApp("modes-off", html, "revenue_off", offID, sid)
	tb.appEventData("modes-refused", &r)
	if !slices.Equal(r.Available, []string{"inline"}) || !slices.Equal(r.Steps, []string{"fullscreen->inline"}) {
		t.Errorf("with the switch off: available %v, steps %v; want inline only", r.Available, r.Steps)
	}
	tb.waitFor("the refusal in the log", `(document.querySelector('`+slot2+` [data-testid=app-log]')?.textContent ?? '').includes('app_display_modes is off')`)
}

// TestAppRequestsTeardown: an App that asks to be closed
// (ui/notifications/request-teardown) gets ui/resource-teardown, its frame
// goes, and the entry's text shows in its place.
func TestAppRequestsTeardown(t *testing.T) {
	d := newDaemon(t)
	tb := newTab(t)
	tb.login(d)
	const closer = `<!doctype html><html><body><script>
let tornDown = false;
window.addEventListener('message', (e) => {
  if (e.source !== window.parent || !e.data) return;
  const m = e.data;
  if (m.id === 1 && m.result) {
    window.parent.postMessage({ jsonrpc: '2.0', method: 'ui/notifications/initialized', params: {} }, '*');
    setTimeout(() => window.parent.postMessage({ jsonrpc: '2.0', method: 'ui/notifications/request-teardown', params: {} }, '*'), 50);
  } else if (m.method === 'ui/resource-teardown') {
    tornDown = true;
    window.parent.postMessage({ jsonrpc: '2.0', id: m.id, result: {} }, '*');
  }
});
window.parent.postMessage({ jsonrpc: '2.0', id: 1, method: 'ui/initialize',
  params: { protocolVersion: '2026-01-26', appInfo: { name: 'closer', version: '1' }, appCapabilities: {} } }, '*');
</script></body></html>`
	slot := tb.mountRecordApp("closer", closer, sdkTool)
	tb.waitFor("the App closed, its text shown", `document.querySelector('`+slot+`')?.dataset.mcpAppState === 'fallback'`)
	if note := eval[string](tb, `document.querySelector('`+slot+` [data-testid=app-note]')?.textContent ?? ''`); note != "The App closed itself." {
		t.Errorf("note %q", note)
	}
	if n := eval[int](tb, `document.querySelectorAll('`+slot+` iframe').length`); n != 0 {
		t.Errorf("%d frames left in the slot", n)
	}
	if got := eval[string](tb, `document.querySelector('`+slot+` [data-testid=app-fallback]')?.textContent ?? ''`); got != "the probe fallback" {
		t.Errorf("fallback %q", got)
	}
}
