package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/apps"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// appToolServer is an MCP server with an App and tools an App may or may
// not call: show (links ui://app), add (no link, visible to both), model_only
// (visibility ["model"]) and app_only (visibility ["app"]).
func appToolServer(t *testing.T) string {
	t.Helper()
	opts := &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Resources: &mcp.ResourceCapabilities{}}}
	opts.Capabilities.AddExtension(apps.Extension, map[string]any{"mimeTypes": []any{apps.MIMEType}})
	s := mcp.NewServer(&mcp.Implementation{Name: "appserver", Version: "1"}, opts)
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	s.AddTool(&mcp.Tool{
		Name: "show", InputSchema: json.RawMessage(`{"type":"object"}`),
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://app"}},
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("shown"), nil })
	s.AddTool(&mcp.Tool{
		Name:        "add",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`),
		Meta:        mcp.Meta{"ui": map[string]any{"visibility": []any{"model", "app"}}},
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args struct{ A, B float64 }
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return nil, err
		}
		return text(fmt.Sprint(args.A + args.B)), nil
	})
	for name, vis := range map[string]string{"model_only": "model", "app_only": "app"} {
		s.AddTool(&mcp.Tool{
			Name: name, InputSchema: json.RawMessage(`{"type":"object"}`),
			Meta: mcp.Meta{"ui": map[string]any{"visibility": []any{vis}}},
		}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text(name), nil })
	}
	s.AddResource(&mcp.Resource{URI: "ui://app", Name: "app", MIMEType: apps.MIMEType},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "ui://app", MIMEType: apps.MIMEType, Text: "<p>app</p>"}}}, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// appEnv runs the App server twice: as "closed" with every App gate at its
// default (closed) and as "open" with every gate on.
func appEnv(t *testing.T) *testEnv {
	t.Helper()
	url := appToolServer(t)
	block := func(name string, open bool) config.Server {
		return config.Server{
			Name: name, Transport: config.TransportStreamableHTTP, URL: url,
			VersionNegotiation: config.NegotiationLegacy, DiscoveryTimeout: 20 * time.Second, CallTimeout: time.Minute,
			Apps: config.AppsAuto, AppResourceMaxBytes: apps.DefaultMaxBytes, AppResourceTimeout: 10 * time.Second,
			Enabled: true, AppToolCalls: open, AppOpenLinks: open, AppMessages: open, AppDisplayModes: open, AppTools: open, AppResources: open, AppDownloads: open, AppModelContext: open,
		}
	}
	return newEnvWith(t, block("closed", false), block("open", true))
}

// showApp calls server.show from the WebShell and returns the App's entry.
func (e *testEnv) showApp(t *testing.T, sid, server string) store.Entry {
	t.Helper()
	en := e.call(t, e.aliceWS, sid, callBody{Server: server, Tool: "show", Origin: "user"})
	if en.Status != store.StatusOK || !strings.Contains(string(en.Display), `"mcp_app"`) {
		t.Fatalf("%s.show: %+v, want an entry with an App display record", server, en)
	}
	return en
}

// appCall is the body of an App-initiated call.
type appCall struct {
	Server     string `json:"server"`
	Tool       string `json:"tool"`
	Arguments  any    `json:"arguments,omitempty"`
	Origin     string `json:"origin"`
	AppEntryID string `json:"appEntryId,omitempty"`
}

func appMessagesPath(sid string) string { return "/api/v1/sessions/" + sid + "/app-messages" }
func appLinksPath(sid string) string    { return "/api/v1/sessions/" + sid + "/app-links" }
func appRequestsPath(sid string) string { return "/api/v1/sessions/" + sid + "/app-requests" }

const helloMessage = `{"role":"user","content":[{"type":"text","text":"hello from the App"}]}`

// messageBody is an app-messages body for App entry id.
func messageBody(id, params string) string {
	var p map[string]json.RawMessage
	if err := json.Unmarshal([]byte(params), &p); err != nil {
		panic(err)
	}
	p["appEntryId"] = json.RawMessage(mustJSON(id))
	return mustJSON(p)
}

// TestAppGatesClosed: with the server's switches at their defaults, each
// App request is refused with 403 "denied" before anything happens, and
// nothing is recorded.
func TestAppGatesClosed(t *testing.T) {
	t.Parallel()
	e := appEnv(t)
	sid := e.createSession(t, e.aliceWS, "closed").ID
	app := e.showApp(t, sid, "closed")

	caps := decode[host.AppCapabilities](t, e.do(t, "GET", "/api/v1/servers/closed/app-capabilities", e.aliceWS, ""))
	if caps != (host.AppCapabilities{}) {
		t.Errorf("capabilities of closed = %+v, want all false", caps)
	}
	for _, tc := range []struct {
		name, path, body, reason string
	}{
		{"tools/call", callPath(sid), mustJSON(appCall{Server: "closed", Tool: "add", Arguments: map[string]int{"a": 1, "b": 2}, Origin: "app", AppEntryID: app.ID}), "app_tool_calls is off"},
		{"ui/message", appMessagesPath(sid), messageBody(app.ID, helloMessage), "app_messages is off"},
		{"ui/open-link", appLinksPath(sid), mustJSON(map[string]string{"appEntryId": app.ID, "url": "https://example.com/"}), "app_open_links is off"},
		{"fullscreen", appRequestsPath(sid), mustJSON(map[string]string{"appEntryId": app.ID, "kind": "ui/request-display-mode", "detail": "fullscreen"}), "app_display_modes is off"},
		{"pip", appRequestsPath(sid), mustJSON(map[string]string{"appEntryId": app.ID, "kind": "ui/request-display-mode", "detail": "pip"}), "app_display_modes is off"},
		{"App tool", appRequestsPath(sid), mustJSON(map[string]string{"appEntryId": app.ID, "kind": "app-tools/call", "detail": "set-total"}), "app_tools is off"},
		{"resources/read", "/api/v1/sessions/" + sid + "/app-resources", mustJSON(map[string]string{"appEntryId": app.ID, "uri": "ui://app"}), "app_resources is off"},
		{"download", appRequestsPath(sid), mustJSON(map[string]string{"appEntryId": app.ID, "kind": "ui/download-file", "detail": "report.csv"}), "app_downloads is off"},
		{"model context", "/api/v1/sessions/" + sid + "/app-context", `{"appEntryId":"` + app.ID + `","content":[{"type":"text","text":"x"}]}`, "app_model_context is off"},
		{"download link", "/api/v1/sessions/" + sid + "/app-resources", mustJSON(map[string]string{"appEntryId": app.ID, "uri": "ui://app", "purpose": "download"}), "app_downloads is off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(t, "POST", tc.path, e.aliceWS, tc.body)
			ae := wantError(t, r, http.StatusForbidden, "denied")
			if !strings.HasPrefix(ae.Error.Message, "denied by host policy: ") || !strings.Contains(ae.Error.Message, tc.reason) {
				t.Errorf("message %q, want denied by host policy naming %q", ae.Error.Message, tc.reason)
			}
		})
	}
	if got := e.entries(t, e.aliceWS, sid, "").Entries; len(got) != 1 {
		t.Errorf("%d entries after the refused requests, want only the App's", len(got))
	}
}

// TestAppGatesOpen: with every switch on, an App calls its own server's
// tools (recorded with origin "app" and its entry), adds messages (an
// app_message entry) and gets links checked; what the gate and the checks
// refuse still fails.
func TestAppGatesOpen(t *testing.T) {
	t.Parallel()
	e := appEnv(t)
	sid := e.createSession(t, e.aliceWS, "open").ID
	app := e.showApp(t, sid, "open")
	closedApp := e.showApp(t, sid, "closed")

	caps := decode[host.AppCapabilities](t, e.do(t, "GET", "/api/v1/servers/open/app-capabilities", e.aliceWS, ""))
	if caps != (host.AppCapabilities{ToolCalls: true, OpenLinks: true, Messages: true, DisplayModes: true, Tools: true, Resources: true, Downloads: true, ModelContext: true}) {
		t.Errorf("capabilities of open = %+v, want all true", caps)
	}
	wantError(t, e.do(t, "GET", "/api/v1/servers/nope/app-capabilities", e.aliceWS, ""), 404, "not_found")

	t.Run("tools/call", func(t *testing.T) {
		r := e.do(t, "POST", callPath(sid), e.aliceWS, mustJSON(appCall{Server: "open", Tool: "add", Arguments: map[string]int{"a": 2, "b": 40}, Origin: "app", AppEntryID: app.ID}))
		wantStatus(t, r, 200)
		got := decode[store.Entry](t, r)
		if got.Origin != "app" || got.AppEntryID != app.ID || got.Kind != store.KindCall || got.Status != store.StatusOK ||
			!strings.Contains(string(got.Result), `"42"`) {
			t.Errorf("App call entry %+v", got)
		}
		// An App calling an App tool gets the result, but no App of its own.
		r = e.do(t, "POST", callPath(sid), e.aliceWS, mustJSON(appCall{Server: "open", Tool: "show", Origin: "app", AppEntryID: app.ID}))
		wantStatus(t, r, 200)
		if got := decode[store.Entry](t, r); string(got.Display) != "null" || got.Status != store.StatusOK {
			t.Errorf("App call of an App tool: display %s status %s, want no display record", got.Display, got.Status)
		}
		r = e.do(t, "POST", callPath(sid), e.aliceWS, mustJSON(appCall{Server: "open", Tool: "app_only", Origin: "app", AppEntryID: app.ID}))
		wantStatus(t, r, 200)
	})
	t.Run("refused calls", func(t *testing.T) {
		before := len(e.entries(t, e.aliceWS, sid, "").Entries)
		for _, tc := range []struct {
			name   string
			body   any
			status int
			code   string
			msg    string
		}{
			{"tool hidden from Apps", appCall{Server: "open", Tool: "model_only", Origin: "app", AppEntryID: app.ID}, 403, "denied", "not visible to Apps"},
			{"another server's tool", appCall{Server: "closed", Tool: "add", Arguments: map[string]int{"a": 1, "b": 1}, Origin: "app", AppEntryID: app.ID}, 403, "denied", "only that server's tools"},
			{"closed server's App", appCall{Server: "closed", Tool: "add", Arguments: map[string]int{"a": 1, "b": 1}, Origin: "app", AppEntryID: closedApp.ID}, 403, "denied", "app_tool_calls is off"},
			{"no appEntryId", appCall{Server: "open", Tool: "add", Arguments: map[string]int{"a": 1, "b": 1}, Origin: "app"}, 400, "bad_request", "appEntryId"},
			{"appEntryId with origin user", appCall{Server: "open", Tool: "add", Arguments: map[string]int{"a": 1, "b": 1}, Origin: "user", AppEntryID: app.ID}, 400, "bad_request", "appEntryId"},
			{"unknown entry", appCall{Server: "open", Tool: "add", Arguments: map[string]int{"a": 1, "b": 1}, Origin: "app", AppEntryID: "e_0000000000000000"}, 400, "bad_request", "names no MCP App"},
			{"schema still checked", appCall{Server: "open", Tool: "add", Arguments: map[string]string{"a": "x"}, Origin: "app", AppEntryID: app.ID}, 400, "invalid_arguments", "input schema"},
			{"unknown tool", appCall{Server: "open", Tool: "nope", Origin: "app", AppEntryID: app.ID}, 404, "not_found", "no tool"},
			{"unknown origin", appCall{Server: "open", Tool: "add", Origin: "robot"}, 400, "bad_request", "origin"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ae := wantError(t, e.do(t, "POST", callPath(sid), e.aliceWS, mustJSON(tc.body)), tc.status, tc.code)
				if !strings.Contains(ae.Error.Message, tc.msg) && !strings.Contains(ae.Error.Message, strings.ReplaceAll(tc.msg, "names no", "does not name an")) {
					t.Errorf("message %q, want one with %q", ae.Error.Message, tc.msg)
				}
			})
		}
		// An entry that is not an App's is no appEntryId.
		plain := e.call(t, e.aliceWS, sid, callBody{Server: "open", Tool: "add", Arguments: map[string]int{"a": 1, "b": 1}})
		wantError(t, e.do(t, "POST", callPath(sid), e.aliceWS, mustJSON(appCall{Server: "open", Tool: "add", Arguments: map[string]int{"a": 1, "b": 1}, Origin: "app", AppEntryID: plain.ID})), 400, "bad_request")
		if got := len(e.entries(t, e.aliceWS, sid, "").Entries); got != before+1 {
			t.Errorf("%d entries after the refused calls, want %d (only the plain call)", got, before+1)
		}
	})
	t.Run("ui/message", func(t *testing.T) {
		r := e.do(t, "POST", appMessagesPath(sid), e.aliceWS, messageBody(app.ID, helloMessage))
		wantStatus(t, r, http.StatusCreated)
		raw := decode[map[string]any](t, r)
		got := decode[store.Entry](t, r)
		if got.Kind != store.KindAppMessage || got.Origin != "app" || got.AppEntryID != app.ID || got.Server != "open" ||
			got.Tool != "" || got.Status != store.StatusOK || string(got.Result) != "null" {
			t.Errorf("App message entry %s", r.body)
		}
		msg, _ := raw["message"].(map[string]any)
		if diff := fmt.Sprint(msg); !strings.Contains(diff, "hello from the App") || msg["resourceUri"] != "ui://app" || msg["role"] != nil {
			t.Errorf("message %v, want the text and the resourceUri and no role", msg)
		}
		list := e.entries(t, e.aliceWS, sid, "").Entries
		if last := list[len(list)-1]; last.ID != got.ID || last.Kind != store.KindAppMessage {
			t.Errorf("last entry %+v, want the App message", last)
		}
		var plainID string
		for _, en := range e.entries(t, e.aliceWS, sid, "").Entries {
			if string(en.Display) == "null" {
				plainID = en.ID
			}
		}
		for _, tc := range []struct{ name, body, code string }{
			{"image block", messageBody(app.ID, `{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`), "bad_request"},
			{"assistant role", messageBody(app.ID, `{"role":"assistant","content":[{"type":"text","text":"x"}]}`), "bad_request"},
			{"no content", mustJSON(map[string]string{"appEntryId": app.ID}), "bad_request"},
			{"unknown key", messageBody(app.ID, `{"content":[{"type":"text","text":"x"}],"_meta":{}}`), "bad_request"},
			{"not an App", messageBody(plainID, helloMessage), "bad_request"},
			{"closed server's App", messageBody(closedApp.ID, helloMessage), "denied"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				status := 400
				if tc.code == "denied" {
					status = 403
				}
				wantError(t, e.do(t, "POST", appMessagesPath(sid), e.aliceWS, tc.body), status, tc.code)
			})
		}
		// Another principal cannot use alice's App, nor see her session.
		bobSid := e.createSession(t, e.bobWS, "bob").ID
		wantError(t, e.do(t, "POST", appMessagesPath(bobSid), e.bobWS, messageBody(app.ID, helloMessage)), 400, "bad_request")
		wantError(t, e.do(t, "POST", appMessagesPath(sid), e.bobWS, messageBody(app.ID, helloMessage)), 404, "not_found")
	})
	t.Run("ui/open-link", func(t *testing.T) {
		r := e.do(t, "POST", appLinksPath(sid), e.aliceWS, mustJSON(map[string]string{"appEntryId": app.ID, "url": "HTTPS://example.com/a?b=c"}))
		wantStatus(t, r, 200)
		if got := decode[map[string]string](t, r); got["url"] != "https://example.com/a?b=c" {
			t.Errorf("checked link %v", got)
		}
		for _, bad := range []string{"javascript:alert(1)", "data:text/html,x", "file:///etc/passwd", "https://user@example.com/", "/relative"} {
			wantError(t, e.do(t, "POST", appLinksPath(sid), e.aliceWS, mustJSON(map[string]string{"appEntryId": app.ID, "url": bad})), 400, "bad_request")
		}
		wantError(t, e.do(t, "POST", appLinksPath(sid), e.aliceWS, mustJSON(map[string]string{"appEntryId": closedApp.ID, "url": "https://example.com/"})), 403, "denied")
	})
}

// TestAppChecks: the App requests the WebShell carries out itself (a
// display mode, calling a tool the App registered) are allowed with the
// switches on, and malformed ones are refused with the reason.
func TestAppChecks(t *testing.T) {
	t.Parallel()
	e := appEnv(t)
	sid := e.createSession(t, e.aliceWS, "checks").ID
	app := e.showApp(t, sid, "open")
	body := func(kind, detail string) string {
		return mustJSON(map[string]string{"appEntryId": app.ID, "kind": kind, "detail": detail})
	}
	for _, tc := range []struct {
		name, body string
		status     int
		msg        string
	}{
		{"fullscreen", body("ui/request-display-mode", "fullscreen"), 200, ""},
		{"pip", body("ui/request-display-mode", "pip"), 200, ""},
		{"App tool", body("app-tools/call", "set-total"), 200, ""},
		{"download", body("ui/download-file", "report.csv"), 200, ""},
		{"download with a path", body("ui/download-file", "../etc/passwd"), 400, "plain file name"},
		{"download of a dot file", body("ui/download-file", ".bashrc"), 400, "plain file name"},
		{"inline needs no check", body("ui/request-display-mode", "inline"), 400, "fullscreen"},
		{"unknown mode", body("ui/request-display-mode", "maximised"), 400, "fullscreen"},
		{"no tool name", body("app-tools/call", ""), 400, "tool's name"},
		{"tool name too long", body("app-tools/call", strings.Repeat("x", 129)), 400, "tool's name"},
		{"unknown kind", body("sampling/createMessage", "x"), 400, "kind"},
		{"not an App entry", mustJSON(map[string]string{"appEntryId": "e_0000000000000000", "kind": "ui/request-display-mode", "detail": "pip"}), 400, "MCP App"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(t, "POST", appRequestsPath(sid), e.aliceWS, tc.body)
			if tc.status == 200 {
				wantStatus(t, r, 200)
				return
			}
			ae := wantError(t, r, tc.status, "bad_request")
			if !strings.Contains(ae.Error.Message, tc.msg) {
				t.Errorf("message %q, want one with %q", ae.Error.Message, tc.msg)
			}
		})
	}
}

// TestAppResourceRead: an App reads resources of its own server only; a
// URI of another server is asked of the App's own server, which does not
// have it.
func TestAppResourceRead(t *testing.T) {
	t.Parallel()
	e := appEnv(t)
	sid := e.createSession(t, e.aliceWS, "reads").ID
	app := e.showApp(t, sid, "open")
	path := "/api/v1/sessions/" + sid + "/app-resources"
	body := func(uri string) string { return mustJSON(map[string]string{"appEntryId": app.ID, "uri": uri}) }

	r := e.do(t, "POST", path, e.aliceWS, body("ui://app"))
	wantStatus(t, r, 200)
	res := decode[mcp.ReadResourceResult](t, r)
	if len(res.Contents) != 1 || res.Contents[0].Text != "<p>app</p>" {
		t.Errorf("read %+v, want the App's own resource", res)
	}
	for _, tc := range []struct{ name, body, msg string }{
		{"another server's resource", body("ui://revenue-dashboard"), `server "open" could not read`},
		{"no uri", body(""), "uri"},
		{"uri too long", body("ui://" + strings.Repeat("x", 2048)), "uri"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ae := wantError(t, e.do(t, "POST", path, e.aliceWS, tc.body), 400, "bad_request")
			if !strings.Contains(ae.Error.Message, tc.msg) {
				t.Errorf("message %q, want %q", ae.Error.Message, tc.msg)
			}
		})
	}
}

// TestAppModelContext: an App's ui/update-model-context is kept with its
// entry, replaced on each update and returned by the API; what is not text
// or too large is refused with the reason.
func TestAppModelContext(t *testing.T) {
	t.Parallel()
	e := appEnv(t)
	sid := e.createSession(t, e.aliceWS, "context").ID
	app := e.showApp(t, sid, "open")
	path := "/api/v1/sessions/" + sid + "/app-context"
	wantError(t, e.do(t, "GET", path+"?entry="+app.ID, e.aliceWS, ""), 404, "not_found")
	for _, text := range []string{"first", "second"} {
		r := e.do(t, "POST", path, e.aliceWS, `{"appEntryId":"`+app.ID+`","content":[{"type":"text","text":"`+text+`"}],"structuredContent":{"n":1}}`)
		wantStatus(t, r, 200)
	}
	got := decode[store.AppContext](t, e.do(t, "GET", path+"?entry="+app.ID, e.aliceWS, ""))
	if got.EntryID != app.ID || !strings.Contains(string(got.Context), `"second"`) || strings.Contains(string(got.Context), "first") || !strings.Contains(string(got.Context), `"n":1`) {
		t.Errorf("context %+v, want the second update only", got)
	}
	for _, tc := range []struct{ name, body, msg string }{
		{"not text", `{"appEntryId":"` + app.ID + `","content":[{"type":"image","data":"x","mimeType":"image/png"}]}`, "not a text block"},
		{"structuredContent not an object", `{"appEntryId":"` + app.ID + `","structuredContent":[1]}`, "structuredContent"},
		{"too large", `{"appEntryId":"` + app.ID + `","content":[{"type":"text","text":"` + strings.Repeat("x", 70<<10) + `"}]}`, "limit"},
		{"not an App entry", `{"appEntryId":"e_0000000000000000","content":[]}`, "MCP App"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(t, "POST", path, e.aliceWS, tc.body)
			if r.status != 400 && r.status != 413 {
				t.Fatalf("status %d, want 400 or 413: %s", r.status, r.body)
			}
			if r.status == 400 && !strings.Contains(string(r.body), tc.msg) {
				t.Errorf("body %s, want %q", r.body, tc.msg)
			}
		})
	}
}
