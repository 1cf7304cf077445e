package webshell_test

// The official MCP Apps example servers from npm (built on
// @modelcontextprotocol/ext-apps 2.x, pinned in testdata/interop), run as
// real stdio servers behind the real daemon and rendered in the WebShell:
// a chart (customer segmentation), an App that calls its server's tools
// (system monitor), an App that registers App-side tools (budget
// allocator) and an App that asks for a display mode (shadertoy). Each
// renders, draws and works with the server's App switches on, and is refused
// with a readable message with them off.

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testbin"
)

// The example servers of the tests, by npm package.
const (
	segmentationPkg = "@modelcontextprotocol/server-customer-segmentation"
	monitorPkg      = "@modelcontextprotocol/server-system-monitor"
	budgetPkg       = "@modelcontextprotocol/server-budget-allocator"
	shadertoyPkg    = "@modelcontextprotocol/server-shadertoy"
)

// exampleServer is the server block of an official example server run with
// node over stdio (`node dist/index.js --stdio`, as its README says).
func exampleServer(t *testing.T, name, pkg string) config.Server {
	t.Helper()
	dir := testbin.Interop(t, "../../..", pkg)
	s := stdioServer(name, "node")
	s.Args = []string{filepath.Join(dir, "node_modules", pkg, "dist", "index.js"), "--stdio"}
	s.Sandbox.Read = []string{dir} // node runs the script and its node_modules
	return s
}

// callExample selects server.tool in the tool list, calls it with the form's
// defaults and returns its entry (Apps add entries of their own calls, so
// it is the newest entry of that tool, not the newest of all).
func (tb *tab) callExample(server, tool string) shownEntry {
	tb.t.Helper()
	return tb.callExampleWith(server, tool, nil)
}

// callExampleWith is callExample with the form's fields named in fields
// filled in first (the rest keep their defaults).
func (tb *tab) callExampleWith(server, tool string, fields map[string]string) shownEntry {
	tb.t.Helper()
	tb.waitServerReady(server)
	tb.selectTool(server + "." + tool)
	for name, value := range fields {
		tb.fill(name, value)
	}
	name := server + "." + tool
	mine := func() []shownEntry {
		var out []shownEntry
		for _, e := range tb.readEntries() {
			if e.Name == name {
				out = append(out, e)
			}
		}
		return out
	}
	before := len(mine())
	tb.click(tid("call-button"))
	tb.waitFor("the entry of "+name, fmt.Sprintf(`[...document.querySelectorAll('%s')].filter((e) => e.querySelector('.entry-name')?.textContent === %s && e.dataset.status !== 'running').length > %d`,
		entrySel, jsString(name), before))
	all := mine()
	e := all[len(all)-1]
	if e.Status != "ok" {
		tb.fatalf("%s.%s: entry %+v, want ok", server, tool, e)
	}
	return e
}

// frameColors counts the distinct colours of the App frame matching sel,
// from a screenshot of the viewport (the sandbox's frames are out of
// process, composited into it): a frame the App has drawn a chart in has
// dozens, a blank one a handful.
func (tb *tab) frameColors(sel string) int {
	tb.t.Helper()
	seen := map[[3]uint32]bool{}
	tb.framePixels(sel, func(r, g, b uint32) { seen[[3]uint32{r, g, b}] = true })
	return len(seen)
}

// waitDrawn waits until measure, a count taken from a screenshot of an
// App's frame, reaches least (Apps draw on animation frames, after their
// handshake), and fails naming what and the last count when it does not.
func (tb *tab) waitDrawn(what string, least int, measure func() int) {
	tb.t.Helper()
	deadline := time.Now().Add(waitBound)
	for n := measure(); n < least; n = measure() {
		if time.Now().After(deadline) {
			tb.fatalf("%s: %d, want at least %d", what, n, least)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// framePixels calls each with the 8-bit colour of every other pixel of
// every other row of the App frame matching sel, from a screenshot of the
// viewport.
func (tb *tab) framePixels(sel string, each func(r, g, b uint32)) {
	tb.t.Helper()
	tb.do("scrolling the App into view", chromedp.ScrollIntoView(chromedp.CSS(sel)))
	r := eval[[]float64](tb, `(() => { const r = document.querySelector(`+jsString(sel)+`).getBoundingClientRect();
  return [r.x, r.y, r.width, r.height]; })()`)
	shot := run(tb, "capturing the viewport", chromedp.CaptureScreenshot())
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		tb.fatalf("decoding the screenshot: %v", err)
	}
	box := image.Rect(int(r[0]), int(r[1]), int(r[0]+r[2]), int(r[1]+r[3])).Intersect(img.Bounds())
	for y := box.Min.Y; y < box.Max.Y; y += 2 {
		for x := box.Min.X; x < box.Max.X; x += 2 {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			each(cr>>8, cg>>8, cb>>8)
		}
	}
}

// appCalls returns the App-initiated calls (origin "app") of server.tool
// made by the App of entry appEntry, as the daemon recorded them.
func (d *daemon) appCalls(t *testing.T, appEntry, tool string) int {
	t.Helper()
	var r struct {
		Entries []struct {
			Origin     string `json:"origin"`
			Tool       string `json:"tool"`
			AppEntryID string `json:"appEntryId"`
			Status     string `json:"status"`
		} `json:"entries"`
	}
	d.apiJSON(t, http.MethodGet, "/sessions/"+d.sessions(t)[0].ID+"/entries?limit=500", nil, &r)
	n := 0
	for _, e := range r.Entries {
		if e.Origin == "app" && e.Tool == tool && e.AppEntryID == appEntry && e.Status == "ok" {
			n++
		}
	}
	return n
}

// waitAppCalls waits until the App of entry appEntry has made at least n
// calls of tool through the daemon.
func (tb *tab) waitAppCalls(d *daemon, appEntry, tool string, n int) {
	tb.t.Helper()
	deadline := time.Now().Add(waitBound)
	for d.appCalls(tb.t, appEntry, tool) < n {
		if time.Now().After(deadline) {
			tb.fatalf("the App of %s made fewer than %d calls of %s", appEntry, n, tool)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// exampleServers returns the four example servers as server blocks, their
// App switches all on or all at their defaults (off).
func exampleServers(t *testing.T, on bool) []config.Server {
	var out []config.Server
	for _, s := range []struct{ name, pkg string }{
		{"segmentation", segmentationPkg}, {"monitor", monitorPkg}, {"budget", budgetPkg}, {"shadertoy", shadertoyPkg},
	} {
		srv := exampleServer(t, s.name, s.pkg)
		srv.AppToolCalls, srv.AppTools, srv.AppDisplayModes = on, on, on
		out = append(out, srv)
	}
	return out
}

// entryOf is the selector of the card of entry id.
func entryOf(id string) string { return `[data-entry-id="` + id + `"]` }

// waitReady waits until the App of the entry card sel is initialized.
func (tb *tab) waitReady(sel string) {
	tb.t.Helper()
	tb.waitFor("the App of "+sel+" to be ready", `document.querySelector('`+sel+` [data-testid=app-slot]')?.dataset.mcpAppState === 'ready'`)
}

// appLogText is the text of the App log pane of the entry card sel.
func (tb *tab) appLogText(sel string) string {
	tb.t.Helper()
	return eval[string](tb, `document.querySelector('`+sel+` [data-testid=app-log]')?.textContent ?? ''`)
}

// TestOfficialExamples runs the four example servers with their App
// switches on: the chart draws the data its App fetched through its
// server's tool, the system monitor polls its App-only tool, the budget
// allocator's App tools are listed and called from the WebShell, and
// shadertoy goes fullscreen and back (close button, Escape).
func TestOfficialExamples(t *testing.T) {
	d := newDaemonWith(t, func(cfg *config.Config, _ string) {
		cfg.Servers = append(cfg.Servers, exampleServers(t, true)...)
	})
	tb := newTab(t)
	tb.login(d)
	tb.do("a large window", chromedp.EmulateViewport(1280, 1000))

	t.Run("chart", func(t *testing.T) {
		e := tb.callExample("segmentation", "get-customer-data")
		sel := entryOf(e.ID)
		tb.waitReady(sel)
		// The App loads its data with its server's tool, then draws.
		tb.waitAppCalls(d, e.ID, "get-customer-data", 1)
		tb.waitDrawn("the chart's colours", 60, func() int { return tb.frameColors(sel + ` iframe.app-frame`) })
		tb.screenshot("chart", sel)
	})

	t.Run("server tools", func(t *testing.T) {
		e := tb.callExample("monitor", "get-system-info")
		tb.waitReady(entryOf(e.ID))
		// It polls poll-system-stats, a tool only Apps may call.
		tb.waitAppCalls(d, e.ID, "poll-system-stats", 2)
		tb.screenshot("monitor", entryOf(e.ID))
	})

	t.Run("App tools", func(t *testing.T) {
		e := tb.callExample("budget", "get-budget-data")
		sel := entryOf(e.ID)
		tb.waitReady(sel)
		tb.waitFor("the App's tools", `!!document.querySelector('`+sel+` [data-testid="app-tool-set-total-budget"]')`)
		tool := sel + ` [data-testid="app-tool-set-total-budget"]`
		tb.click(tool + ` > summary`)
		eval[bool](tb, `(() => { const i = document.querySelector('`+tool+` input');
  i.value = '250000'; i.dispatchEvent(new Event('input', { bubbles: true })); return true; })()`)
		tb.click(tool + ` [data-testid=app-tool-call]`)
		tb.waitFor("the App tool's result", `(document.querySelector('`+tool+` [data-testid=app-tool-result]')?.textContent ?? '').includes('250,000')`)
		get := sel + ` [data-testid="app-tool-get-allocations"]`
		tb.click(get + ` > summary`)
		tb.click(get + ` [data-testid=app-tool-call]`)
		tb.waitFor("the allocations", `(document.querySelector('`+get+` [data-testid=app-tool-result]')?.textContent ?? '').includes('250000')`)
		tb.screenshot("budget", sel)
	})

	t.Run("display mode App", func(t *testing.T) {
		// shadertoy asks for fullscreen from a button of its own; the host
		// logic of display modes is tested with the official SDK in
		// TestAppDisplayModes. Here: it renders with WebGL, draws, and its
		// App tool compiles a new shader.
		e := tb.callExample("shadertoy", "render-shadertoy")
		sel := entryOf(e.ID)
		tb.waitReady(sel)
		// WebGL draws on animation frames after the handshake: a frame
		// caught before the first one is still blank.
		tb.waitDrawn("the shader's colours", 60, func() int { return tb.frameColors(sel + ` iframe.app-frame`) })
		tool := sel + ` [data-testid="app-tool-get-shader-info"]`
		tb.waitFor("the App's tools", `!!document.querySelector('`+tool+`')`)
		tb.click(tool + ` > summary`)
		tb.click(tool + ` [data-testid=app-tool-call]`)
		// The call is over when its button is enabled again and its
		// result or its error is shown.
		tb.waitFor("the shader info", `(() => {
  const q = (s) => document.querySelector('`+tool+` ' + s);
  return q('[data-testid=app-tool-call]')?.disabled === false &&
    (q('[data-testid=app-tool-result]')?.hidden === false || q('[data-testid=app-tool-error]')?.hidden === false);
})()`)
		if got := eval[string](tb, `document.querySelector('`+tool+` [data-testid=app-tool-result]')?.textContent ?? ''`); !strings.Contains(got, "mainImage") {
			t.Errorf("get-shader-info answered %q (error %q), want the shader's source", got,
				eval[string](tb, `document.querySelector('`+tool+` [data-testid=app-tool-error]')?.textContent ?? ''`))
		}
		tb.screenshot("shadertoy", sel)
	})
}

// TestOfficialExamplesRefused runs the same servers with every App switch
// off: each App still renders, and what it may not do is refused with a
// readable message in its entry.
func TestOfficialExamplesRefused(t *testing.T) {
	d := newDaemonWith(t, func(cfg *config.Config, _ string) {
		cfg.Servers = append(cfg.Servers, exampleServers(t, false)...)
	})
	tb := newTab(t)
	tb.login(d)
	for _, c := range []struct{ server, tool string }{
		{"segmentation", "get-customer-data"}, {"monitor", "get-system-info"},
	} {
		e := tb.callExample(c.server, c.tool)
		sel := entryOf(e.ID)
		tb.waitReady(sel)
		want := fmt.Sprintf(`refused: the Apps of server "%s" may not call tools (app_tool_calls is off)`, c.server)
		tb.waitFor("the refusal in the App's log", `(document.querySelector('`+sel+` [data-testid=app-log]')?.textContent ?? '').includes(`+jsString(want)+`)`)
		if n := d.appCalls(t, e.ID, ""); n != 0 {
			t.Errorf("%s: %d App calls recorded", c.server, n)
		}
	}
	e := tb.callExample("budget", "get-budget-data")
	sel := entryOf(e.ID)
	tb.waitReady(sel)
	tb.waitFor("the App tools note", `(document.querySelector('`+sel+` [data-testid=app-tools]')?.textContent ?? '').includes('may not offer tools (app_tools is off)')`)
	if n := eval[int](tb, `document.querySelectorAll('`+sel+` [data-testid=app-tool-call]').length`); n != 0 {
		t.Errorf("%d App tools offered with app_tools off", n)
	}
	if log := tb.appLogText(sel); strings.Contains(log, "tools/list") {
		t.Errorf("the App was asked for its tools: %s", log)
	}
}
