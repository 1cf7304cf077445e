package host_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/apps"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// appServer is an MCP server with one tool, show, that links ui://app and
// serves it with the given MIME type and HTML; advertise decides whether it
// lists the io.modelcontextprotocol/ui extension.
func appServer(t *testing.T, advertise bool, mime, html string) string {
	return appServerMeta(t, advertise, mime, html, nil)
}

// appServerMeta is appServer with ui (when not nil) as the _meta.ui of the
// App resource's contents: what an App declares (csp, permissions, and
// whatever else it likes).
func appServerMeta(t *testing.T, advertise bool, mime, html string, ui map[string]any) string {
	opts := &mcp.ServerOptions{}
	if advertise {
		opts.Capabilities = &mcp.ServerCapabilities{}
		opts.Capabilities.AddExtension(apps.Extension, map[string]any{"mimeTypes": []any{apps.MIMEType}})
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "appserver", Version: "1"}, opts)
	s.AddTool(&mcp.Tool{
		Name:        "show",
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Meta:        mcp.Meta{"ui": map[string]any{"resourceUri": "ui://app"}},
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the model-visible text"}}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "ui://app", Name: "app", MIMEType: mime}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		c := &mcp.ResourceContents{URI: "ui://app", MIMEType: mime, Text: html}
		if ui != nil {
			c.Meta = mcp.Meta{"ui": ui}
		}
		if b, ok := strings.CutPrefix(html, "blob:"); ok { // base64 on the wire, bytes as given
			c.Text, c.Blob = "", []byte(b)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// callInSession runs one call through the host's call pipeline.
func callInSession(t *testing.T, h *host.Host, server, tool, args string) *store.Entry {
	t.Helper()
	p := host.Principal{Name: "owner"}
	sess, err := h.CreateSession(t.Context(), p, "apps")
	if err != nil {
		t.Fatal(err)
	}
	e, err := h.Call(t.Context(), host.SessionCall{Principal: p, SessionID: sess.ID, Server: server, Tool: tool, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestAppDisplayRecords(t *testing.T) {
	const page = "<!doctype html><title>app</title><p>hello</p>"
	tests := []struct {
		name       string
		advertise  bool
		mime, html string
		mode       string
		wantHTML   bool
		wantRecord bool
		wantAdmit  string
		wantWarn   string
	}{
		{"advertised, auto", true, apps.MIMEType, page, config.AppsAuto, true, true, "advertised", ""},
		{"not advertised, exact MIME, auto renders", false, apps.MIMEType, page, config.AppsAuto, true, true, "mime", ""},
		{"not advertised, advertised mode shows text", false, apps.MIMEType, page, config.AppsAdvertised, false, false, "", ""},
		{"apps off", true, apps.MIMEType, page, config.AppsOff, false, false, "", ""},
		{"advertised, wrong MIME", true, "text/html", page, config.AppsAuto, false, true, "", "wrong MIME type"},
		{"not advertised, wrong MIME is plain text", false, "text/html", page, config.AppsAuto, false, false, "", ""},
		{"too large", true, apps.MIMEType, strings.Repeat("x", 1<<20+1), config.AppsAuto, false, true, "", "too large"},
		{"invalid UTF-8 in a blob", true, apps.MIMEType, "blob:<p>\xff\xfe</p>", config.AppsAuto, false, true, "", "invalid UTF-8"},
		{"base64 blob renders", true, apps.MIMEType, "blob:" + page, config.AppsAuto, true, true, "advertised", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url := appServer(t, tc.advertise, tc.mime, tc.html)
			st, err := store.Open(t.Context(), t.TempDir()+"/m.db", nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			s := remoteServer("app", config.TransportStreamableHTTP, url)
			s.Apps = tc.mode
			s.AppResourceMaxBytes = apps.DefaultMaxBytes
			s.AppResourceTimeout = 5e9
			h := startHost(t, host.Options{Store: st}, s)
			e := callInSession(t, h, "app", "show", `{}`)
			if e.Status != store.StatusOK {
				t.Fatalf("status %s: %s", e.Status, e.Error)
			}
			// The model-visible result is what the server sent, App or not.
			var res mcp.CallToolResult
			if err := json.Unmarshal(e.Result, &res); err != nil || textOf(&res) != "the model-visible text" {
				t.Fatalf("result %s (%v)", e.Result, err)
			}
			if !tc.wantRecord {
				if len(e.Display) != 0 && string(e.Display) != "null" {
					t.Fatalf("display = %s, want none", e.Display)
				}
				return
			}
			var d apps.Display
			if err := json.Unmarshal(e.Display, &d); err != nil {
				t.Fatalf("display %s: %v", e.Display, err)
			}
			if d.Type != "mcp_app" || d.ResourceURI != "ui://app" || d.ServerName != "app" {
				t.Errorf("record %+v", d)
			}
			if (d.HTML != "") != tc.wantHTML {
				t.Errorf("html present = %v, want %v (warning %q)", d.HTML != "", tc.wantHTML, d.Warning)
			}
			if d.AdmittedBy != tc.wantAdmit && tc.wantHTML {
				t.Errorf("admittedBy = %q, want %q", d.AdmittedBy, tc.wantAdmit)
			}
			if !strings.Contains(d.Warning, tc.wantWarn) || (tc.wantWarn == "") != (d.Warning == "") {
				t.Errorf("warning = %q, want %q", d.Warning, tc.wantWarn)
			}
			if !strings.Contains(d.FallbackText, "the model-visible text") {
				t.Errorf("fallbackText = %q", d.FallbackText)
			}
			// The record carries the whole tool definition, for the App's
			// hostContext.toolInfo.tool.
			var tool mcp.Tool
			if err := json.Unmarshal(d.Tool, &tool); err != nil || tool.Name != "show" || tool.InputSchema == nil {
				t.Errorf("tool = %s (%v), want the tool as listed", d.Tool, err)
			} else if m, _ := tool.Meta["ui"].(map[string]any); m["resourceUri"] != "ui://app" {
				t.Errorf("tool._meta = %v, want the tool's _meta", tool.Meta)
			}
		})
	}
}

// TestRevenueAppAndCompaction: the demo's dashboard becomes a display record
// over stdio, and compaction empties its HTML but keeps the fallback text.
func TestRevenueAppAndCompaction(t *testing.T) {
	bin := testbin.Build(t, revenuePkg)
	st, err := store.Open(t.Context(), t.TempDir()+"/m.db", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := stdioServer("revenue", bin)
	s.Apps = config.AppsAuto
	s.AppResourceMaxBytes = apps.DefaultMaxBytes
	s.AppResourceTimeout = 5e9
	h := startHost(t, host.Options{Store: st}, s)
	e := callInSession(t, h, "revenue", "show_revenue_dashboard", `{"quarter":"Q3"}`)
	var d apps.Display
	if err := json.Unmarshal(e.Display, &d); err != nil || !strings.Contains(d.HTML, "<") || d.AdmittedBy != "advertised" {
		t.Fatalf("display %.200s (%v)", e.Display, err)
	}
	if !strings.Contains(d.FallbackText, "$4.98M") {
		t.Errorf("fallbackText = %q", d.FallbackText)
	}
	n, err := h.CompactSession(t.Context(), host.Principal{Name: "owner"}, e.SessionID)
	if err != nil || n != 1 {
		t.Fatalf("compacted %d, %v", n, err)
	}
	if _, err := h.CompactSession(t.Context(), host.Principal{Name: "mallory"}, e.SessionID); err == nil {
		t.Error("another principal compacted the session")
	}
	entries, _, err := h.Entries(t.Context(), host.Principal{Name: "owner"}, e.SessionID, 0, 10)
	if err != nil || len(entries) != 1 {
		t.Fatal(entries, err)
	}
	var c apps.Display
	if err := json.Unmarshal(entries[0].Display, &c); err != nil {
		t.Fatal(err)
	}
	if c.HTML != "" || c.Type != "mcp_app" || c.FallbackText != d.FallbackText {
		t.Errorf("compacted record %+v", c)
	}
	if string(entries[0].Result) != string(e.Result) {
		t.Error("compaction changed the model-visible result")
	}
}
