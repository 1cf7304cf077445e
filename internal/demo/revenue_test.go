package demo

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connect runs the revenue server and a go-sdk client over in-memory
// transports at protocolVersion.
func connect(t *testing.T, protocolVersion string) *mcp.ClientSession {
	t.Helper()
	return connectTo(t, NewRevenueServer("test"), protocolVersion)
}

// connectTo runs srv and a go-sdk client over in-memory transports at
// protocolVersion.
func connectTo(t *testing.T, srv *mcp.Server, protocolVersion string) *mcp.ClientSession {
	t.Helper()
	ctx := t.Context()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "demo-test", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		t.Fatalf("client connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// remarshal converts a decoded JSON value into out.
func remarshal(t *testing.T, in, out any) {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
}

func TestCapabilities(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2025-06-18", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			cs := connect(t, version)
			caps := cs.InitializeResult().Capabilities
			var got map[string]any
			remarshal(t, caps.Extensions[AppExtension], &got)
			want := map[string]any{"mimeTypes": []any{AppMIMEType}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("extension %s (-want +got):\n%s", AppExtension, diff)
			}
			if caps.Tools == nil || caps.Resources == nil {
				t.Errorf("capabilities tools=%v resources=%v, want both", caps.Tools, caps.Resources)
			}
		})
	}
}

func TestListings(t *testing.T) {
	cs := connect(t, "2025-11-25")
	ctx := t.Context()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 1 {
		t.Fatalf("got %d tools, want 1", len(tools.Tools))
	}
	tool := tools.Tools[0]
	type toolView struct {
		Name, Title     string
		Meta            map[string]any
		ReadOnly        bool
		OpenWorld       *bool
		Required        []string
		QuarterEnum     []string
		DescriptionSet  bool
		OutputSchemaSet bool
	}
	var schema struct {
		Required   []string `json:"required"`
		Properties struct {
			Quarter struct {
				Enum []string `json:"enum"`
			} `json:"quarter"`
		} `json:"properties"`
	}
	remarshal(t, tool.InputSchema, &schema)
	var meta map[string]any
	remarshal(t, tool.Meta, &meta)
	f := false
	got := toolView{
		Name: tool.Name, Title: tool.Title, Meta: meta,
		Required: schema.Required, QuarterEnum: schema.Properties.Quarter.Enum,
		DescriptionSet: tool.Description != "", OutputSchemaSet: tool.OutputSchema != nil,
	}
	if tool.Annotations != nil {
		got.ReadOnly, got.OpenWorld = tool.Annotations.ReadOnlyHint, tool.Annotations.OpenWorldHint
	}
	want := toolView{
		Name:  RevenueToolName,
		Title: "Revenue dashboard",
		Meta: map[string]any{
			"ui":             map[string]any{"resourceUri": RevenueResourceURI},
			"ui/resourceUri": RevenueResourceURI,
		},
		ReadOnly:        true,
		OpenWorld:       &f,
		Required:        []string{"quarter"},
		QuarterEnum:     []string{"Q1", "Q2", "Q3", "Q4"},
		DescriptionSet:  true,
		OutputSchemaSet: true,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool (-want +got):\n%s", diff)
	}

	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Resources) != 1 {
		t.Fatalf("got %d resources, want 1", len(res.Resources))
	}
	r := res.Resources[0]
	var rmeta map[string]any
	remarshal(t, r.Meta, &rmeta)
	type resView struct {
		URI, Name, Title, MIMEType string
		Meta                       map[string]any
		DescriptionSet             bool
	}
	gotR := resView{r.URI, r.Name, r.Title, r.MIMEType, rmeta, r.Description != ""}
	wantR := resView{RevenueResourceURI, "revenue-dashboard", "Revenue dashboard", AppMIMEType,
		map[string]any{"ui": map[string]any{"prefersBorder": true}}, true}
	if diff := cmp.Diff(wantR, gotR); diff != "" {
		t.Errorf("resource (-want +got):\n%s", diff)
	}
}

func TestShowRevenueDashboard(t *testing.T) {
	cs := connect(t, "2025-11-25")
	tests := []struct {
		name       string
		args       map[string]any
		wantText   string // exact text when set
		wantQ      string
		wantRegion string
		wantLabels []string
	}{
		{
			name:       "Q3 all regions",
			args:       map[string]any{"quarter": "Q3"},
			wantText:   "Revenue Q3 2026 (all regions): $4.98M total — Jul $1.59M, Aug $1.62M, Sep $1.77M",
			wantQ:      "Q3",
			wantRegion: "all",
			wantLabels: []string{"Jul", "Aug", "Sep"},
		},
		{
			name:       "Q1 explicit all",
			args:       map[string]any{"quarter": "Q1", "region": "all"},
			wantQ:      "Q1",
			wantRegion: "all",
			wantLabels: []string{"Jan", "Feb", "Mar"},
		},
		{
			name:       "Q2 EMEA",
			args:       map[string]any{"quarter": "Q2", "region": "EMEA"},
			wantText:   "Revenue Q2 2026 (EMEA): $1.59M total — Apr $507.6K, May $529.3K, Jun $551.8K",
			wantQ:      "Q2",
			wantRegion: "EMEA",
			wantLabels: []string{"Apr", "May", "Jun"},
		},
		{
			name:       "lower case is accepted",
			args:       map[string]any{"quarter": "q4", "region": "apac"},
			wantQ:      "Q4",
			wantRegion: "APAC",
			wantLabels: []string{"Oct", "Nov", "Dec"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: RevenueToolName, Arguments: tc.args})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError {
				t.Fatalf("isError result: %v", res.Content)
			}
			if len(res.Content) != 1 {
				t.Fatalf("got %d content blocks, want 1", len(res.Content))
			}
			text, ok := res.Content[0].(*mcp.TextContent)
			if !ok {
				t.Fatalf("content is %T, want text", res.Content[0])
			}
			var rev Revenue
			remarshal(t, res.StructuredContent, &rev)

			var sum int64
			var labels []string
			for _, m := range rev.Months {
				sum += m.Revenue
				labels = append(labels, m.Label)
				if m.Revenue <= 0 {
					t.Errorf("month %s revenue %d, want positive", m.Label, m.Revenue)
				}
			}
			if rev.Total != sum {
				t.Errorf("total %d, want sum of months %d", rev.Total, sum)
			}
			type head struct{ Quarter, Region, Currency string }
			if diff := cmp.Diff(head{tc.wantQ, tc.wantRegion, "USD"}, head{rev.Quarter, rev.Region, rev.Currency}); diff != "" {
				t.Errorf("structuredContent (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantLabels, labels); diff != "" {
				t.Errorf("month labels (-want +got):\n%s", diff)
			}
			// The text and the structured content tell the same story.
			if text.Text != rev.Summary() {
				t.Errorf("text %q does not match structuredContent summary %q", text.Text, rev.Summary())
			}
			if tc.wantText != "" && text.Text != tc.wantText {
				t.Errorf("text\n got %q\nwant %q", text.Text, tc.wantText)
			}
		})
	}
}

func TestRegionsAddUp(t *testing.T) {
	for _, q := range quarters {
		t.Run(q, func(t *testing.T) {
			all, err := RevenueFor(q, "all")
			if err != nil {
				t.Fatal(err)
			}
			var sum int64
			for _, r := range regions {
				rev, err := RevenueFor(q, r)
				if err != nil {
					t.Fatal(err)
				}
				sum += rev.Total
			}
			if sum != all.Total {
				t.Errorf("regions sum to %d, all regions total %d", sum, all.Total)
			}
		})
	}
}

func TestShowRevenueDashboardInvalid(t *testing.T) {
	cs := connect(t, "2025-11-25")
	tests := []struct {
		name     string
		args     any
		wantText []string // substrings of the error text
	}{
		{"unknown quarter", map[string]any{"quarter": "Q5"}, []string{`"Q5"`, "Q1", "Q4"}},
		{"missing quarter", map[string]any{}, []string{"required", "Q1"}},
		{"no arguments", nil, []string{"required"}},
		{"quarter not a string", map[string]any{"quarter": 3}, []string{"quarter must be a string"}},
		{"unknown region", map[string]any{"quarter": "Q1", "region": "MARS"}, []string{`"MARS"`, "EMEA"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: RevenueToolName, Arguments: tc.args})
			if err != nil {
				t.Fatalf("protocol error %v, want an isError result", err)
			}
			if !res.IsError {
				t.Fatalf("isError false, want true")
			}
			if res.StructuredContent != nil {
				t.Errorf("structuredContent %v on an error result", res.StructuredContent)
			}
			if len(res.Content) != 1 {
				t.Fatalf("got %d content blocks, want 1", len(res.Content))
			}
			text := res.Content[0].(*mcp.TextContent).Text
			for _, s := range tc.wantText {
				if !strings.Contains(text, s) {
					t.Errorf("text %q does not mention %q", text, s)
				}
			}
		})
	}
}

func TestReadDashboard(t *testing.T) {
	cs := connect(t, "2025-11-25")
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: RevenueResourceURI})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("got %d contents, want 1", len(res.Contents))
	}
	c := res.Contents[0]
	type item struct {
		URI, MIMEType string
		BlobLen       int
	}
	if diff := cmp.Diff(item{RevenueResourceURI, AppMIMEType, 0}, item{c.URI, c.MIMEType, len(c.Blob)}); diff != "" {
		t.Errorf("content item (-want +got):\n%s", diff)
	}
	html := c.Text
	if html != DashboardHTML() || html == "" {
		t.Fatalf("text is not the embedded dashboard (%d bytes)", len(html))
	}
	if !utf8.ValidString(html) {
		t.Error("HTML is not valid UTF-8")
	}
	if !strings.HasPrefix(html, "<!doctype html>") {
		t.Errorf("HTML does not start with a doctype: %.40q", html)
	}

	// What the View must contain: the protocol it speaks.
	for _, want := range []string{
		"event.source !== window.parent",
		`postMessage(message, "*")`,
		`"ui/initialize"`,
		`"2026-01-26"`,
		`"ui/notifications/initialized"`,
		`"ui/notifications/tool-input"`,
		`"ui/notifications/tool-result"`,
		`"ui/notifications/size-changed"`,
		`"ui/resource-teardown"`,
		`"ping"`,
		`"notifications/message"`,
		"prefers-color-scheme",
	} {
		t.Run("has "+want, func(t *testing.T) {
			if !strings.Contains(html, want) {
				t.Errorf("HTML lacks %s", want)
			}
		})
	}
	// What it must never contain: external URLs, storage, eval, network.
	for _, bad := range []string{
		"http://", "https://", "//cdn", "src=\"//", "localStorage", "sessionStorage", "indexedDB",
		"document.cookie", "eval(", "new Function", "fetch(", "XMLHttpRequest", "WebSocket",
		"EventSource", "sendBeacon", "innerHTML", "window.open", "@import", "url(",
	} {
		t.Run("lacks "+bad, func(t *testing.T) {
			if strings.Contains(html, bad) {
				t.Errorf("HTML contains %q", bad)
			}
		})
	}
}

func TestReadUnknownResource(t *testing.T) {
	cs := connect(t, "2025-11-25")
	if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "ui://nope"}); err == nil {
		t.Fatal("reading ui://nope succeeded, want an error")
	}
}

// TestServeRevenue runs one session over pipes, the way `mcphost demo
// revenue` runs it over stdin and stdout, and checks that a client closing
// the connection ends it cleanly.
func TestServeRevenue(t *testing.T) {
	clientR, serverW := io.Pipe()
	serverR, clientW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- ServeRevenue(t.Context(), serverR, serverW) }()

	client := mcp.NewClient(&mcp.Implementation{Name: "demo-test", Version: "1.0.0"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.IOTransport{Reader: clientR, Writer: clientW},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	if got := cs.InitializeResult().ServerInfo.Name; got != "mcphost-demo-revenue" {
		t.Errorf("server name %q", got)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: RevenueToolName, Arguments: map[string]any{"quarter": "Q1"}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %v", err, res)
	}
	cs.Close()
	if err := <-done; err != nil {
		t.Errorf("ServeRevenue after client close: %v", err)
	}
}

func TestServeRevenueContextEnd(t *testing.T) {
	serverR, _ := io.Pipe()
	_, serverW := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- ServeRevenue(ctx, serverR, serverW) }()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("ServeRevenue after ctx end: %v", err)
	}
}
