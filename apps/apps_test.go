package apps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	testURI  = "ui://revenue-dashboard"
	testHTML = "<!doctype html><p>app</p>"
)

// fakeReader is a ResourceReader scripted by the test.
type fakeReader struct {
	res   *mcp.ReadResourceResult
	err   error
	hang  bool          // block until ctx is done
	block chan struct{} // block until closed, ignoring ctx
	uris  []string
}

func (f *fakeReader) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	f.uris = append(f.uris, uri)
	if f.hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if f.block != nil {
		<-f.block
	}
	return f.res, f.err
}

func item(uri, mime, text string) *mcp.ResourceContents {
	return &mcp.ResourceContents{URI: uri, MIMEType: mime, Text: text}
}

func reader(items ...*mcp.ResourceContents) *fakeReader {
	return &fakeReader{res: &mcp.ReadResourceResult{Contents: items}}
}

func okResult() *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: "Revenue Q3"}, &mcp.ImageContent{MIMEType: "image/png", Data: []byte{1}}, &mcp.TextContent{Text: "total 42"}},
		StructuredContent: map[string]any{"quarter": "Q3", "total": 42},
	}
}

// validSource is a stand-in for sandbox.ValidSource: scheme://host, ASCII,
// no separators, quotes or whitespace.
func validSource(s string) error {
	for _, r := range s {
		if r > unicode.MaxASCII || unicode.IsSpace(r) || strings.ContainsRune(";,'\"`", r) {
			return errors.New("bad character")
		}
	}
	if !strings.HasPrefix(s, "https://") && !strings.HasPrefix(s, "wss://") {
		return errors.New("bad scheme")
	}
	return nil
}

func advertised() Options {
	return Options{ServerAdvertises: true, ValidSource: validSource, Timeout: 100 * time.Millisecond}
}

var link = Link{ResourceURI: testURI, ModelVisible: true, AppVisible: true}

func TestAdvertise(t *testing.T) {
	caps := &mcp.ClientCapabilities{}
	Advertise(caps)
	Advertise(nil)
	got := mustJSON(t, caps.Extensions)
	want := `{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}`
	if string(got) != want {
		t.Errorf("extensions = %s, want %s", got, want)
	}
}

func TestServerAdvertises(t *testing.T) {
	for _, tc := range []struct {
		name string
		caps *mcp.ServerCapabilities
		want bool
	}{
		{"nil", nil, false},
		{"no extensions", &mcp.ServerCapabilities{}, false},
		{"other extension", &mcp.ServerCapabilities{Extensions: map[string]any{"x/y": map[string]any{}}}, false},
		{"mime listed", &mcp.ServerCapabilities{Extensions: map[string]any{Extension: map[string]any{"mimeTypes": []any{"text/html", MIMEType}}}}, true},
		{"mime as []string", &mcp.ServerCapabilities{Extensions: map[string]any{Extension: map[string]any{"mimeTypes": []string{MIMEType}}}}, true},
		{"no mimeTypes", &mcp.ServerCapabilities{Extensions: map[string]any{Extension: map[string]any{}}}, true},
		{"null settings", &mcp.ServerCapabilities{Extensions: map[string]any{Extension: nil}}, true},
		{"other mime only", &mcp.ServerCapabilities{Extensions: map[string]any{Extension: map[string]any{"mimeTypes": []any{"text/html+mcp"}}}}, false},
		{"mime case differs", &mcp.ServerCapabilities{Extensions: map[string]any{Extension: map[string]any{"mimeTypes": []any{"TEXT/HTML;profile=mcp-app"}}}}, false},
		{"mimeTypes not a list", &mcp.ServerCapabilities{Extensions: map[string]any{Extension: map[string]any{"mimeTypes": MIMEType}}}, false},
	} {
		if got := ServerAdvertises(tc.caps); got != tc.want {
			t.Errorf("%s: ServerAdvertises = %v, want %v", tc.name, got, tc.want)
		}
	}

	// Decoded from the wire, as the SDK hands it over.
	var caps mcp.ServerCapabilities
	if err := json.Unmarshal([]byte(`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`), &caps); err != nil {
		t.Fatal(err)
	}
	if !ServerAdvertises(&caps) {
		t.Error("wire capabilities: ServerAdvertises = false")
	}
}

func TestToolLink(t *testing.T) {
	both := Link{ResourceURI: testURI, ModelVisible: true, AppVisible: true}
	for _, tc := range []struct {
		name   string
		meta   string // tool._meta as JSON
		want   Link
		wantOK bool
	}{
		{"no meta", ``, Link{}, false},
		{"canonical", `{"ui":{"resourceUri":"ui://revenue-dashboard"}}`, both, true},
		{"deprecated", `{"ui/resourceUri":"ui://revenue-dashboard"}`, both, true},
		{"both keys: canonical wins", `{"ui":{"resourceUri":"ui://revenue-dashboard"},"ui/resourceUri":"ui://old"}`, both, true},
		{"canonical invalid: no fallback", `{"ui":{"resourceUri":"https://x"},"ui/resourceUri":"ui://old"}`, Link{}, false},
		{"deprecated with nested visibility", `{"ui":{"visibility":["app"]},"ui/resourceUri":"ui://revenue-dashboard"}`, Link{ResourceURI: testURI, AppVisible: true}, true},
		{"https", `{"ui":{"resourceUri":"https://example.com/app"}}`, Link{}, false},
		{"file", `{"ui":{"resourceUri":"file:///etc/passwd"}}`, Link{}, false},
		{"upper-case scheme", `{"ui":{"resourceUri":"UI://x"}}`, Link{}, false},
		{"number", `{"ui":{"resourceUri":42}}`, Link{}, false},
		{"deprecated number", `{"ui/resourceUri":42}`, Link{}, false},
		{"ui not an object", `{"ui":"ui://x"}`, Link{}, false},
		{"visibility model", `{"ui":{"resourceUri":"ui://revenue-dashboard","visibility":["model"]}}`, Link{ResourceURI: testURI, ModelVisible: true}, true},
		{"visibility app", `{"ui":{"resourceUri":"ui://revenue-dashboard","visibility":["app"]}}`, Link{ResourceURI: testURI, AppVisible: true}, true},
		{"visibility both", `{"ui":{"resourceUri":"ui://revenue-dashboard","visibility":["app","model"]}}`, both, true},
		{"visibility empty", `{"ui":{"resourceUri":"ui://revenue-dashboard","visibility":[]}}`, Link{ResourceURI: testURI}, true},
		{"visibility unknown ignored", `{"ui":{"resourceUri":"ui://revenue-dashboard","visibility":["app","user",7]}}`, Link{ResourceURI: testURI, AppVisible: true}, true},
		{"visibility not a list", `{"ui":{"resourceUri":"ui://revenue-dashboard","visibility":"app"}}`, both, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := &mcp.Tool{Name: "t"}
			if tc.meta != "" {
				if err := json.Unmarshal([]byte(tc.meta), &tool.Meta); err != nil {
					t.Fatal(err)
				}
			}
			got, ok := ToolLink(tool)
			if ok != tc.wantOK || got != tc.want {
				t.Errorf("ToolLink = %+v, %v; want %+v, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
	if _, ok := ToolLink(nil); ok {
		t.Error("ToolLink(nil) ok")
	}
	// Go-typed metadata set by an in-process server.
	tool := &mcp.Tool{Meta: mcp.Meta{"ui": map[string]any{"resourceUri": testURI, "visibility": []string{"model"}}}}
	if got, ok := ToolLink(tool); !ok || got != (Link{ResourceURI: testURI, ModelVisible: true}) {
		t.Errorf("Go-typed meta: %+v, %v", got, ok)
	}
}

func TestFallbackText(t *testing.T) {
	if got := FallbackText(okResult()); got != "Revenue Q3\ntotal 42" {
		t.Errorf("FallbackText = %q", got)
	}
	if got := FallbackText(nil); got != "" {
		t.Errorf("FallbackText(nil) = %q", got)
	}
}

func TestResolveSuccess(t *testing.T) {
	r := reader(item("ui://other", MIMEType, "x"), item(testURI, MIMEType, testHTML))
	args := json.RawMessage(`{"quarter":"Q3"}`)
	d := Resolve(context.Background(), r, "revenue", link, args, okResult(), advertised())
	if d == nil {
		t.Fatal("Resolve = nil")
	}
	if diff := cmp.Diff([]string{testURI}, r.uris); diff != "" {
		t.Errorf("read URIs (-want +got):\n%s", diff)
	}
	want := &Display{
		Type:          "mcp_app",
		ServerName:    "revenue",
		ResourceURI:   testURI,
		HTML:          testHTML,
		ToolArguments: args,
		ToolResult:    mustJSON(t, okResult()),
		FallbackText:  "Revenue Q3\ntotal 42",
		AdmittedBy:    "advertised",
	}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("display (-want +got):\n%s", diff)
	}
	// The record serialises with the §6 field names.
	var m map[string]any
	if err := json.Unmarshal(mustJSON(t, d), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"type", "serverName", "resourceUri", "html", "toolArguments", "toolResult", "fallbackText", "admittedBy"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q: %v", k, m)
		}
	}
	for _, k := range []string{"csp", "permissions", "prefersBorder", "warning", "dropped"} {
		if _, ok := m[k]; ok {
			t.Errorf("JSON has undeclared %q", k)
		}
	}
}

func TestResolveBlobAndLimits(t *testing.T) {
	mib := strings.Repeat("a", DefaultMaxBytes)
	mibMulti := strings.Repeat("é", DefaultMaxBytes/2) // 2 bytes each
	most := strings.Repeat("a", MaxMaxBytes)           // the PDF App is 4.3 MB
	for _, tc := range []struct {
		name     string
		c        *mcp.ResourceContents
		maxBytes int
		wantHTML string
		wantWarn string // substring; "" ⇒ success
	}{
		{"blob", &mcp.ResourceContents{URI: testURI, MIMEType: MIMEType, Blob: []byte(testHTML)}, 0, testHTML, ""},
		{"text wins over blob", &mcp.ResourceContents{URI: testURI, MIMEType: MIMEType, Text: testHTML, Blob: []byte("other")}, 0, testHTML, ""},
		{"exactly 1 MiB", item(testURI, MIMEType, mib), 0, mib, ""},
		{"exactly 1 MiB multi-byte", item(testURI, MIMEType, mibMulti), 0, mibMulti, ""},
		{"exactly 1 MiB blob", &mcp.ResourceContents{URI: testURI, MIMEType: MIMEType, Blob: []byte(mib)}, 0, mib, ""},
		{"1 MiB + 1", item(testURI, MIMEType, mib+"a"), 0, "", "too large (1048577 bytes, limit 1048576)"},
		{"1 MiB + 1 multi-byte", item(testURI, MIMEType, mibMulti+"a"), 0, "", "too large (1048577 bytes, limit 1048576)"},
		{"1 MiB + 1 blob", &mcp.ResourceContents{URI: testURI, MIMEType: MIMEType, Blob: []byte(mib + "a")}, 0, "", "too large"},
		{"custom limit", item(testURI, MIMEType, testHTML), 10, "", "too large (25 bytes, limit 10)"},
		{"exactly 16 MiB", item(testURI, MIMEType, most), MaxMaxBytes, most, ""},
		{"limit clamped to 16 MiB", item(testURI, MIMEType, most+"a"), 1 << 30, "", "too large (16777217 bytes, limit 16777216)"},
		{"invalid UTF-8 text", item(testURI, MIMEType, "<p>\xff</p>"), 0, "", "invalid UTF-8"},
		{"invalid UTF-8 blob", &mcp.ResourceContents{URI: testURI, MIMEType: MIMEType, Blob: []byte{'<', 0xc3}}, 0, "", "invalid UTF-8"},
		{"empty", item(testURI, MIMEType, ""), 0, "", "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := advertised()
			o.MaxBytes = tc.maxBytes
			d := Resolve(context.Background(), reader(tc.c), "revenue", link, nil, okResult(), o)
			checkOutcome(t, d, tc.wantHTML, tc.wantWarn)
		})
	}
}

// checkOutcome checks a non-nil record for success (wantWarn == "") or the
// failure form.
func checkOutcome(t *testing.T, d *Display, wantHTML, wantWarn string) {
	t.Helper()
	if d == nil {
		t.Fatal("Resolve = nil")
	}
	if d.Type != "mcp_app" || d.ResourceURI != testURI || d.ServerName != "revenue" {
		t.Errorf("record header = %q %q %q", d.Type, d.ResourceURI, d.ServerName)
	}
	if wantWarn == "" {
		if d.Warning != "" || d.HTML != wantHTML || d.FallbackText != "Revenue Q3\ntotal 42" {
			t.Errorf("want success, got warning %q, fallback %q, html %d bytes", d.Warning, d.FallbackText, len(d.HTML))
		}
		return
	}
	if d.HTML != "" {
		t.Errorf("failure form has html (%d bytes)", len(d.HTML))
	}
	if !strings.Contains(d.Warning, wantWarn) {
		t.Errorf("warning = %q, want it to contain %q", d.Warning, wantWarn)
	}
	if !strings.Contains(d.Warning, `"`+testURI+`"`) || !strings.Contains(d.Warning, `"revenue"`) || strings.Contains(d.Warning, "\n") {
		t.Errorf("warning %q must be one line naming the URI and the server", d.Warning)
	}
	if want := "Warning: " + d.Warning + "\n\nRevenue Q3\ntotal 42"; d.FallbackText != want {
		t.Errorf("fallbackText = %q, want %q", d.FallbackText, want)
	}
	if d.CSP != nil || d.Permissions != nil || d.PrefersBorder != nil {
		t.Errorf("failure form carries metadata: %+v", d)
	}
}

func TestResolveFailures(t *testing.T) {
	inputRequired := &mcp.ReadResourceResult{}
	if err := json.Unmarshal([]byte(`{"resultType":"input_required","contents":[],"inputRequests":{"a":{"method":"elicitation/create","params":{"message":"x","requestedSchema":{"type":"object"}}}}}`), inputRequired); err != nil {
		t.Fatal(err)
	}
	seventeen := make([]*mcp.ResourceContents, 0, 17)
	for range 16 {
		seventeen = append(seventeen, item("ui://other", MIMEType, "x"))
	}
	seventeen = append(seventeen, item(testURI, MIMEType, testHTML))

	for _, tc := range []struct {
		name string
		r    ResourceReader
		want string
	}{
		{"read error", &fakeReader{err: errors.New("boom <script>")}, "read error"},
		{"nil reader", nil, "read error"},
		{"nil result", &fakeReader{}, "no matching content"},
		{"hang", &fakeReader{hang: true}, "timeout"},
		{"input required", &fakeReader{res: inputRequired}, "input required"},
		{"no contents", reader(), "no matching content"},
		{"only another uri", reader(item("ui://other", MIMEType, testHTML)), "no matching content"},
		{"uri differs in case", reader(item("ui://Revenue-dashboard", MIMEType, testHTML)), "no matching content"},
		{"uri trailing slash", reader(item(testURI+"/", MIMEType, testHTML)), "no matching content"},
		{"nil item", reader(nil), "no matching content"},
		{"match at 17", &fakeReader{res: &mcp.ReadResourceResult{Contents: seventeen}}, "no matching content"},
		{"mime text/html", reader(item(testURI, "text/html", testHTML)), "wrong MIME type"},
		{"mime with space", reader(item(testURI, "text/html; profile=mcp-app", testHTML)), "wrong MIME type"},
		{"mime upper case", reader(item(testURI, "TEXT/HTML;profile=mcp-app", testHTML)), "wrong MIME type"},
		{"mime extra param", reader(item(testURI, MIMEType+";charset=utf-8", testHTML)), "wrong MIME type"},
		{"mime legacy", reader(item(testURI, "text/html+mcp", testHTML)), "wrong MIME type"},
		{"mime missing", reader(item(testURI, "", testHTML)), "wrong MIME type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Resolve(context.Background(), tc.r, "revenue", link, nil, okResult(), advertised())
			checkOutcome(t, d, "", tc.want)
			if strings.Contains(d.FallbackText, "<script>") {
				t.Error("error text leaked into the fallback")
			}
		})
	}
}

func TestResolveMatch16th(t *testing.T) {
	items := make([]*mcp.ResourceContents, 0, 16)
	for range 15 {
		items = append(items, item("ui://other", MIMEType, "x"))
	}
	items = append(items, item(testURI, MIMEType, testHTML))
	d := Resolve(context.Background(), reader(items...), "revenue", link, nil, okResult(), advertised())
	checkOutcome(t, d, testHTML, "")
}

func TestResolveTimeoutIgnoringReader(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	start := time.Now()
	d := Resolve(context.Background(), &fakeReader{block: block}, "revenue", link, nil, okResult(), advertised())
	checkOutcome(t, d, "", "timeout")
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("Resolve took %v with a 100ms timeout", el)
	}
}

func TestResolveCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if d := Resolve(ctx, reader(item(testURI, MIMEType, testHTML)), "revenue", link, nil, okResult(), advertised()); d != nil {
		t.Errorf("cancelled before: %+v", d)
	}

	// Cancelled while the read hangs, before the read's own deadline.
	ctx, cancel = context.WithCancel(context.Background())
	o := advertised()
	o.Timeout = time.Minute
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	if d := Resolve(ctx, &fakeReader{hang: true}, "revenue", link, nil, okResult(), o); d != nil {
		t.Errorf("cancelled during read: %+v", d)
	}
}

func TestResolveNil(t *testing.T) {
	r := reader(item(testURI, MIMEType, testHTML))
	errResult := okResult()
	errResult.IsError = true
	for _, tc := range []struct {
		name   string
		result *mcp.CallToolResult
		o      Options
	}{
		{"isError", errResult, advertised()},
		{"nil result", nil, advertised()},
		{"off", okResult(), Options{Mode: ModeOff, ServerAdvertises: true}},
		{"unknown mode", okResult(), Options{Mode: "on", ServerAdvertises: true}},
		{"advertised mode, not advertised", okResult(), Options{Mode: ModeAdvertised}},
	} {
		if d := Resolve(context.Background(), r, "revenue", link, nil, tc.result, tc.o); d != nil {
			t.Errorf("%s: Resolve = %+v, want nil", tc.name, d)
		}
	}
	if len(r.uris) != 0 {
		t.Errorf("resource read %d times, want none", len(r.uris))
	}
}

func TestResolveModes(t *testing.T) {
	good := func() *fakeReader { return reader(item(testURI, MIMEType, testHTML)) }
	for _, tc := range []struct {
		name       string
		mode       string
		advertises bool
		r          *fakeReader
		wantNil    bool
		wantBy     string
		wantWarn   string
	}{
		{"auto advertised", ModeAuto, true, good(), false, "advertised", ""},
		{"default mode advertised", "", true, good(), false, "advertised", ""},
		{"auto not advertised, exact MIME", ModeAuto, false, good(), false, "mime", ""},
		{"default mode not advertised, exact MIME", "", false, good(), false, "mime", ""},
		{"auto not advertised, wrong MIME", ModeAuto, false, reader(item(testURI, "text/html", testHTML)), true, "", ""},
		{"auto not advertised, read error", ModeAuto, false, &fakeReader{err: errors.New("x")}, true, "", ""},
		{"auto not advertised, no match", ModeAuto, false, reader(item("ui://other", MIMEType, testHTML)), true, "", ""},
		{"auto not advertised, exact MIME but too large", ModeAuto, false, reader(item(testURI, MIMEType, strings.Repeat("a", DefaultMaxBytes+1))), false, "mime", "too large"},
		{"auto not advertised, exact MIME but invalid UTF-8", ModeAuto, false, reader(item(testURI, MIMEType, "\xff")), false, "mime", "invalid UTF-8"},
		{"auto advertised, wrong MIME", ModeAuto, true, reader(item(testURI, "text/html", testHTML)), false, "advertised", "wrong MIME type"},
		{"advertised mode, advertised", ModeAdvertised, true, good(), false, "advertised", ""},
		{"advertised mode, not advertised", ModeAdvertised, false, good(), true, "", ""},
		{"off, advertised", ModeOff, true, good(), true, "", ""},
		{"off, not advertised", ModeOff, false, good(), true, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{Mode: tc.mode, ServerAdvertises: tc.advertises, ValidSource: validSource}
			d := Resolve(context.Background(), tc.r, "revenue", link, nil, okResult(), o)
			if tc.wantNil {
				if d != nil {
					t.Fatalf("Resolve = %+v, want nil", d)
				}
				return
			}
			want := ""
			if tc.wantWarn == "" {
				want = testHTML
			}
			checkOutcome(t, d, want, tc.wantWarn)
			if d.AdmittedBy != tc.wantBy {
				t.Errorf("admittedBy = %q, want %q", d.AdmittedBy, tc.wantBy)
			}
		})
	}
}

func TestResolveMeta(t *testing.T) {
	listing := map[string]any{"ui": map[string]any{
		"csp":           map[string]any{"connectDomains": []any{"https://list.a.com"}},
		"permissions":   map[string]any{"camera": map[string]any{}},
		"prefersBorder": false,
		"domain":        "x",
	}}
	for _, tc := range []struct {
		name    string
		meta    string // content item _meta as JSON
		listing map[string]any
		want    Display // only CSP, Permissions, PrefersBorder, Dropped compared
	}{
		{"none", ``, nil, Display{}},
		{"listing only", ``, listing, Display{
			CSP:           &CSP{ConnectDomains: []string{"https://list.a.com"}, ResourceDomains: []string{}, FrameDomains: []string{}, BaseURIDomains: []string{}},
			Permissions:   map[string]any{"camera": map[string]any{}},
			PrefersBorder: new(false),
		}},
		{"item wins per field", `{"ui":{"csp":{"resourceDomains":["https://*.cdn.a.com"]},"prefersBorder":true}}`, listing, Display{
			// csp taken whole from the item (no union); permissions from the listing.
			CSP:           &CSP{ConnectDomains: []string{}, ResourceDomains: []string{"https://*.cdn.a.com"}, FrameDomains: []string{}, BaseURIDomains: []string{}},
			Permissions:   map[string]any{"camera": map[string]any{}},
			PrefersBorder: new(true),
		}},
		{"item null falls back", `{"ui":{"csp":null}}`, listing, Display{
			CSP:           &CSP{ConnectDomains: []string{"https://list.a.com"}, ResourceDomains: []string{}, FrameDomains: []string{}, BaseURIDomains: []string{}},
			Permissions:   map[string]any{"camera": map[string]any{}},
			PrefersBorder: new(false),
		}},
		{"all fields valid", `{"ui":{"csp":{"connectDomains":["https://api.a.com","wss://rt.a.com:8443"],"resourceDomains":["https://*.cdn.a.com"],"frameDomains":["https://f.a.com"],"baseUriDomains":["https://b.a.com"]}}}`, nil, Display{
			CSP: &CSP{ConnectDomains: []string{"https://api.a.com", "wss://rt.a.com:8443"}, ResourceDomains: []string{"https://*.cdn.a.com"}, FrameDomains: []string{"https://f.a.com"}, BaseURIDomains: []string{"https://b.a.com"}},
		}},
		{"permissions filtered", `{"ui":{"permissions":{"camera":{},"microphone":{"x":1},"geolocation":true,"clipboardWrite":{},"usb":{}}}}`, nil, Display{
			Permissions: map[string]any{"camera": map[string]any{}, "microphone": map[string]any{}, "clipboardWrite": map[string]any{}},
		}},
		{"prefersBorder not bool", `{"ui":{"prefersBorder":"yes"}}`, nil, Display{}},
		{"csp not an object", `{"ui":{"csp":"https://a.com"}}`, nil, Display{
			CSP:     &CSP{ConnectDomains: []string{}, ResourceDomains: []string{}, FrameDomains: []string{}, BaseURIDomains: []string{}},
			Dropped: []string{"csp: not an object"},
		}},
		{"csp lists malformed", `{"ui":{"csp":{"connectDomains":"https://a.com","frameDomains":[1,{"a":1},"https://ok.a.com"],"unknown":["x"]}}}`, nil, Display{
			CSP:     &CSP{ConnectDomains: []string{}, ResourceDomains: []string{}, FrameDomains: []string{"https://ok.a.com"}, BaseURIDomains: []string{}},
			Dropped: []string{"connectDomains: not a list", "frameDomains: non-string float64", "frameDomains: non-string map[string]interface {}"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := item(testURI, MIMEType, testHTML)
			if tc.meta != "" {
				if err := json.Unmarshal([]byte(tc.meta), &c.Meta); err != nil {
					t.Fatal(err)
				}
			}
			o := advertised()
			o.ListingMeta = tc.listing
			d := Resolve(context.Background(), reader(c), "revenue", link, nil, okResult(), o)
			checkOutcome(t, d, testHTML, "")
			got := Display{CSP: d.CSP, Permissions: d.Permissions, PrefersBorder: d.PrefersBorder, Dropped: d.Dropped}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("metadata (-want +got):\n%s", diff)
			}
			if err := Validate(*d, 0, validSource); err != nil {
				t.Errorf("Validate of a Resolve record: %v", err)
			}
		})
	}
}

var injections = []string{
	"https://a.com; script-src *",
	"https://a.com;script-src *",
	"https://a.com\r\nX-Evil: 1",
	"https://a.com,https://b.com",
	"https://a.com 'unsafe-inline'",
	`https://a.com"`,
	"'self'",
	"'none'",
	"'unsafe-eval'",
	"*",
	"https:",
	"data:",
	"blob:",
	"javascript:alert(1)",
	"https://\u212A.example.com",
	"https://\u017F.example.com",
	"http\u017F://x.com",
	"",
}

func TestResolveCSPInjection(t *testing.T) {
	for _, field := range []string{"connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"} {
		t.Run(field, func(t *testing.T) {
			list := append([]string{"https://ok.a.com"}, injections...)
			c := item(testURI, MIMEType, testHTML)
			c.Meta = mcp.Meta{"ui": map[string]any{"csp": map[string]any{field: list}}}
			d := Resolve(context.Background(), reader(c), "revenue", link, nil, okResult(), advertised())
			checkOutcome(t, d, testHTML, "")
			for _, f := range cspFields(d.CSP) {
				want := []string{}
				if f.name == field {
					want = []string{"https://ok.a.com"}
				}
				if diff := cmp.Diff(want, *f.list); diff != "" {
					t.Errorf("%s (-want +got):\n%s", f.name, diff)
				}
			}
			if len(d.Dropped) != len(injections) {
				t.Errorf("dropped %d entries, want %d: %q", len(d.Dropped), len(injections), d.Dropped)
			}
			for _, e := range d.Dropped {
				if strings.ContainsAny(e, "\r\n") {
					t.Errorf("dropped entry not quoted: %q", e)
				}
			}
		})
	}

	// No validator: every source is dropped.
	c := item(testURI, MIMEType, testHTML)
	c.Meta = mcp.Meta{"ui": map[string]any{"csp": map[string]any{"connectDomains": []any{"https://ok.a.com"}}}}
	o := advertised()
	o.ValidSource = nil
	d := Resolve(context.Background(), reader(c), "revenue", link, nil, okResult(), o)
	if len(d.CSP.ConnectDomains) != 0 || len(d.Dropped) != 1 {
		t.Errorf("nil ValidSource kept %q, dropped %q", d.CSP.ConnectDomains, d.Dropped)
	}

	// Many bad sources: Dropped stays bounded.
	many := make([]any, 1000)
	for i := range many {
		many[i] = "'self'"
	}
	c.Meta = mcp.Meta{"ui": map[string]any{"csp": map[string]any{"connectDomains": many}}}
	d = Resolve(context.Background(), reader(c), "revenue", link, nil, okResult(), advertised())
	if len(d.Dropped) != maxDropped+1 {
		t.Errorf("len(Dropped) = %d, want %d", len(d.Dropped), maxDropped+1)
	}
}

// TestResolveDroppedReason: a source the validator refuses is listed in
// Dropped with the validator's reason after it, on one line and bounded,
// so the record says which source went and why.
func TestResolveDroppedReason(t *testing.T) {
	long := strings.Repeat("x", 500)
	valid := func(s string) error {
		switch s {
		case "https://ok.example":
			return nil
		case "http://10.0.0.1:8080":
			return errors.New("names an address on the private network 10.0.0.0/8, and the App's server is not on that network")
		}
		return errors.New("first line\r\nsecond line\x00 " + long)
	}
	c := item(testURI, MIMEType, testHTML)
	c.Meta = mcp.Meta{"ui": map[string]any{"csp": map[string]any{
		"connectDomains": []any{"https://ok.example", "http://10.0.0.1:8080", "https://other.example"},
	}}}
	o := advertised()
	o.ValidSource = valid
	d := Resolve(context.Background(), reader(c), "revenue", link, nil, okResult(), o)
	checkOutcome(t, d, testHTML, "")
	if diff := cmp.Diff([]string{"https://ok.example"}, d.CSP.ConnectDomains); diff != "" {
		t.Errorf("connectDomains (-want +got):\n%s", diff)
	}
	want := []string{
		`connectDomains: "http://10.0.0.1:8080": names an address on the private network 10.0.0.0/8, and the App's server is not on that network`,
		`connectDomains: "https://other.example": first line  second line  ` + long[:maxQuoted-len("first line  second line  ")] + "…",
	}
	if diff := cmp.Diff(want, d.Dropped); diff != "" {
		t.Errorf("dropped (-want +got):\n%s", diff)
	}

	o.ValidSource = nil
	d = Resolve(context.Background(), reader(c), "revenue", link, nil, okResult(), o)
	if len(d.Dropped) != 3 || d.Dropped[0] != `connectDomains: "https://ok.example": no source validator` {
		t.Errorf("dropped without a validator = %q", d.Dropped)
	}
}

func TestResolveLeavesResultUnchanged(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    ResourceReader
	}{
		{"success", reader(item(testURI, MIMEType, testHTML))},
		{"failure", reader(item(testURI, "text/html", testHTML))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			result := okResult()
			first := result.Content[0]
			before := mustJSON(t, result)
			d := Resolve(context.Background(), tc.r, "revenue", link, json.RawMessage(`{"q":1}`), result, advertised())
			if d == nil {
				t.Fatal("Resolve = nil")
			}
			if diff := cmp.Diff(string(before), string(mustJSON(t, result))); diff != "" {
				t.Errorf("result changed (-before +after):\n%s", diff)
			}
			if result.Content[0] != first || len(result.Content) != 3 {
				t.Error("result content replaced")
			}
			// The record does not alias the result: editing it leaves the result alone.
			d.ToolResult[0] = 'X'
			if diff := cmp.Diff(string(before), string(mustJSON(t, result))); diff != "" {
				t.Errorf("result changed through the record:\n%s", diff)
			}
		})
	}
}

func TestCompact(t *testing.T) {
	d := Display{
		Type:          "mcp_app",
		ServerName:    "revenue",
		ResourceURI:   testURI,
		HTML:          testHTML,
		ToolArguments: json.RawMessage(`{"q":1}`),
		ToolResult:    json.RawMessage(`{"content":[]}`),
		FallbackText:  "Revenue Q3",
		CSP:           &CSP{ConnectDomains: []string{"https://a.com"}},
		Permissions:   map[string]any{"camera": map[string]any{}},
		PrefersBorder: new(true),
		AdmittedBy:    "mime",
		Dropped:       []string{"x"},
		Tool:          json.RawMessage(`{"name":"t","inputSchema":{"type":"object"}}`),
	}
	got := Compact(d)
	want := Display{Type: "mcp_app", ServerName: "revenue", ResourceURI: testURI, ToolResult: json.RawMessage(`{"content":[]}`), FallbackText: "Revenue Q3"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Compact (-want +got):\n%s", diff)
	}
	if d.HTML != testHTML {
		t.Error("Compact changed its argument")
	}
	j := mustJSON(t, got)
	if !strings.Contains(string(j), `"html":""`) {
		t.Errorf("compacted JSON lacks empty html: %s", j)
	}

	d.ToolResult = json.RawMessage(`"` + strings.Repeat("a", compactMaxTool) + `"`)
	if got := Compact(d); got.ToolResult != nil {
		t.Errorf("toolResult of %d bytes kept", len(d.ToolResult))
	}
	d.ToolResult = json.RawMessage(`"` + strings.Repeat("a", compactMaxTool-2) + `"`)
	if got := Compact(d); len(got.ToolResult) != compactMaxTool {
		t.Errorf("toolResult of exactly 32 KiB dropped")
	}
}

func TestValidate(t *testing.T) {
	base := func() Display {
		return Display{Type: "mcp_app", ServerName: "s", ResourceURI: testURI, HTML: testHTML, FallbackText: "t",
			CSP: &CSP{ConnectDomains: []string{"https://a.com"}}}
	}
	for _, tc := range []struct {
		name     string
		mod      func(*Display)
		maxBytes int
		valid    func(string) error
		want     string // substring of the error; "" ⇒ nil
	}{
		{"ok", func(*Display) {}, 0, validSource, ""},
		{"ok compacted", func(d *Display) { *d = Compact(*d) }, 0, nil, ""},
		{"exactly max", func(d *Display) { d.HTML = strings.Repeat("a", DefaultMaxBytes) }, 0, validSource, ""},
		{"too large", func(d *Display) { d.HTML = strings.Repeat("a", DefaultMaxBytes+1) }, 0, validSource, "html too large (1048577 bytes, limit 1048576)"},
		{"too large custom", func(*Display) {}, 5, validSource, "html too large"},
		{"invalid UTF-8", func(d *Display) { d.HTML = "\xff" }, 0, validSource, "not valid UTF-8"},
		{"injected source", func(d *Display) { d.CSP.FrameDomains = []string{"https://a.com; script-src *"} }, 0, validSource, `csp.frameDomains: invalid source "https://a.com; script-src *"`},
		{"nil validator", func(*Display) {}, 0, nil, "csp.connectDomains: invalid source"},
		{"wrong type", func(d *Display) { d.Type = "html" }, 0, validSource, "type"},
		{"bad toolResult", func(d *Display) { d.ToolResult = json.RawMessage(`{`) }, 0, validSource, "toolResult"},
		{"bad toolArguments", func(d *Display) { d.ToolArguments = json.RawMessage(`x`) }, 0, validSource, "toolArguments"},
		{"ok tool", func(d *Display) { d.Tool = json.RawMessage(`{"name":"t","inputSchema":{"type":"object"}}`) }, 0, validSource, ""},
		{"tool not an object", func(d *Display) { d.Tool = json.RawMessage(`[1]`) }, 0, validSource, "tool is not a JSON object"},
		{"tool not JSON", func(d *Display) { d.Tool = json.RawMessage(`{`) }, 0, validSource, "tool is not a JSON object"},
		{"tool without name", func(d *Display) { d.Tool = json.RawMessage(`{"inputSchema":{}}`) }, 0, validSource, "tool has no name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := base()
			tc.mod(&d)
			err := Validate(d, tc.maxBytes, tc.valid)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Validate = %v, want %q", err, tc.want)
			case err != nil && strings.Contains(err.Error(), testHTML):
				t.Errorf("error contains the HTML: %v", err)
			}
		})
	}
}

func TestToolDefinition(t *testing.T) {
	for _, tc := range []struct {
		name string
		tool *mcp.Tool
		want string // JSON; "" ⇒ nil
	}{
		{"nil", nil, ""},
		{"no input schema", &mcp.Tool{Name: "t"}, `{"inputSchema":{"type":"object"},"name":"t"}`},
		{"full", &mcp.Tool{
			Name: "get", Title: "Get", Description: "Gets.",
			InputSchema:  map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}},
			OutputSchema: map[string]any{"type": "object"},
			Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true},
			Meta:         mcp.Meta{"ui": map[string]any{"resourceUri": testURI}},
		}, `{"_meta":{"ui":{"resourceUri":"ui://revenue-dashboard"}},"annotations":{"idempotentHint":false,"readOnlyHint":true},"description":"Gets.",` +
			`"inputSchema":{"properties":{"q":{"type":"string"}},"type":"object"},"name":"get","outputSchema":{"type":"object"},"title":"Get"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ToolDefinition(tc.tool)
			if tc.want == "" {
				if got != nil {
					t.Errorf("ToolDefinition = %s, want nil", got)
				}
				return
			}
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("ToolDefinition = %s: %v", got, err)
			}
			json.Unmarshal([]byte(tc.want), &w)
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("ToolDefinition (-want +got):\n%s", diff)
			}
			if tc.name == "no input schema" && tc.tool.InputSchema != nil {
				t.Error("ToolDefinition changed its argument")
			}
		})
	}
}

func TestInvalidArgsOmitted(t *testing.T) {
	d := Resolve(context.Background(), reader(item(testURI, MIMEType, testHTML)), "revenue", link, json.RawMessage(`{bad`), okResult(), advertised())
	if d.ToolArguments != nil {
		t.Errorf("invalid arguments kept: %s", d.ToolArguments)
	}
	mustJSON(t, d)
}

func FuzzResolve(f *testing.F) {
	f.Add(MIMEType, testHTML, testURI)
	f.Add("text/html", testHTML, testURI)
	f.Add("TEXT/HTML;profile=mcp-app", "x", testURI)
	f.Add(MIMEType, "\xff", testURI)
	f.Add(MIMEType, "", testURI)
	f.Add(MIMEType, "x", "ui://other")
	f.Add(MIMEType+" ", "x", testURI+"\x00")
	f.Fuzz(func(t *testing.T, mime, text, uri string) {
		for _, advertises := range []bool{true, false} {
			result := okResult()
			before := mustJSON(t, result)
			c := &mcp.ResourceContents{URI: uri, MIMEType: mime, Text: text, Meta: mcp.Meta{"ui": map[string]any{"csp": map[string]any{"connectDomains": []any{text, uri, mime}}}}}
			l := Link{ResourceURI: testURI}
			if strings.HasPrefix(uri, "ui://") {
				l.ResourceURI = uri
			}
			o := Options{ServerAdvertises: advertises, ValidSource: validSource, MaxBytes: 4096}
			d := Resolve(context.Background(), reader(c), "s", l, nil, result, o)
			if string(before) != string(mustJSON(t, result)) {
				t.Fatal("result changed")
			}
			if d == nil {
				if advertises {
					t.Fatal("nil record for an advertising server")
				}
				continue
			}
			if d.HTML != "" {
				if mime != MIMEType || uri != l.ResourceURI || d.HTML != text || len(text) > 4096 {
					t.Fatalf("HTML returned for mime %q uri %q", mime, uri)
				}
			} else if d.Warning == "" || !strings.HasPrefix(d.FallbackText, "Warning: ") {
				t.Fatalf("no HTML and no warning: %+v", d)
			}
			if strings.ContainsAny(d.Warning, "\r\n") {
				t.Fatalf("warning spans lines: %q", d.Warning)
			}
			if err := Validate(*d, 4096, validSource); err != nil {
				t.Fatalf("Validate of a Resolve record: %v", err)
			}
			if _, err := json.Marshal(d); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCSPListCap(t *testing.T) {
	var sources []any
	for i := range 40 {
		sources = append(sources, fmt.Sprintf("https://h%d.example.com", i))
	}
	meta := mcp.Meta{"ui": map[string]any{"csp": map[string]any{"connectDomains": sources}}}
	r := fakeReaderFunc(func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: MIMEType, Text: "<p>x</p>", Meta: meta}}}, nil
	})
	d := Resolve(t.Context(), r, "s", Link{ResourceURI: "ui://x", ModelVisible: true, AppVisible: true}, nil,
		&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "t"}}},
		Options{ServerAdvertises: true, ValidSource: func(string) error { return nil }})
	if d == nil || d.CSP == nil || len(d.CSP.ConnectDomains) != 32 || len(d.Dropped) != 8 {
		t.Fatalf("display %+v", d)
	}
}

type fakeReaderFunc func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error)

func (f fakeReaderFunc) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	return f(ctx, uri)
}
