package webshell_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mcphost/mcphost/host/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// entitySchema lists its properties in an order of its own, not the
// alphabet's (as the official memory server lists name before
// entityType), with a field for ABC notation and more fields than fit.
const entitySchema = `{"type":"object","properties":{
  "name":{"type":"string","description":"The entity's name"},
  "entityType":{"type":"string"},
  "title":{"type":"string","description":"A title on one line"},
  "abcNotation":{"type":"string","description":"The tune in ABC notation"},
  "observations":{"type":"array","items":{"type":"string"}},
  "tempo":{"type":"integer"},
  "meter":{"type":"string"},
  "key":{"type":"string"},
  "composer":{"type":"string"},
  "instrument":{"type":"string"},
  "rhythm":{"type":"string"},
  "origin":{"type":"string"},
  "archived":{"type":"boolean"}
},"required":["name","entityType"]}`

var entityFields = []string{"name", "entityType", "title", "abcNotation", "observations", "tempo", "meter", "key",
	"composer", "instrument", "rhythm", "origin", "archived"}

// formsServer serves, over Streamable HTTP, the tool "create_entity" with
// entitySchema; it answers with its arguments as JSON, then 80 lines, so
// that its entry is taller than the transcript.
func formsServer(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "forms", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "create_entity", Description: "Creates an entity.", InputSchema: json.RawMessage(entitySchema)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			text := string(req.Params.Arguments)
			for i := range 80 {
				text += fmt.Sprintf("\nline %d", i+1)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestFormKeepsNewlinesOrderAndResult (issue 31 row 9, interop F3,
// newcomer #21, #22): a tool's fields come in its schema's order (through
// the API too); a field for ABC notation is a textarea, and what is typed
// into it keeps its newlines; text with newlines pasted into a one-line
// field turns it into a textarea and keeps them; the call's arguments are
// exactly what was typed and pasted; and after the call the entry's header
// is in view, though the form is tall and the result long.
func TestFormKeepsNewlinesOrderAndResult(t *testing.T) {
	url := formsServer(t)
	d := newDaemonWith(t, func(cfg *config.Config, _ string) {
		cfg.Servers = append(cfg.Servers, config.Server{
			Name: "forms", Transport: config.TransportStreamableHTTP, URL: url,
			VersionNegotiation: config.NegotiationLegacy, DiscoveryTimeout: 20 * time.Second, CallTimeout: time.Minute, Enabled: true,
		})
	})

	// The API gives the schema as the server wrote it.
	var tools struct {
		Tools []struct {
			Qualified   string          `json:"qualifiedName"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	d.apiJSON(t, http.MethodGet, "/tools", nil, &tools)
	i := slices.IndexFunc(tools.Tools, func(x struct {
		Qualified   string          `json:"qualifiedName"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}) bool {
		return x.Qualified == "forms.create_entity"
	})
	if i < 0 {
		t.Fatalf("GET /tools has no forms.create_entity: %+v", tools)
	}
	if got := propertyOrder(t, tools.Tools[i].InputSchema); !slices.Equal(got, entityFields) {
		t.Errorf("GET /tools gives the properties in the order %v, want %v", got, entityFields)
	}

	tb := newTab(t)
	tb.do("sizing the window", chromedp.EmulateViewport(1400, 900))
	tb.login(d)
	tb.waitServerReady("forms")
	tb.selectTool("forms.create_entity")
	shown := eval[[]string](tb, `[...document.querySelectorAll('[data-testid=tool-form] .fields > .field')].map((f) => {
  const l = f.querySelector('.field-label, legend, .check-label');
  return (l.querySelector('code.field-name') ?? l.querySelector('.label-text')).textContent;
})`)
	if !slices.Equal(shown, entityFields) {
		t.Errorf("the form shows the fields in the order %v, want the schema's %v", shown, entityFields)
	}
	tag := func(name string) string {
		return eval[string](tb, `document.getElementById(`+jsString(tb.fieldID(name))+`).tagName`)
	}
	if got := tag("abcNotation"); got != "TEXTAREA" {
		t.Errorf("the field for ABC notation is a %s, want a TEXTAREA", got)
	}
	if got := tag("title"); got != "INPUT" {
		t.Errorf("the title field is a %s, want an INPUT until a newline is pasted", got)
	}

	const abc = "X:1\nT:Speed the Plough\nM:4/4\nK:G\n|:GABc dedB|dedB dedB:|"
	const pasted = "first line\nsecond line\n\nafter a blank line"
	tb.fill("name", "plough")
	tb.fill("entityType", "tune")
	tb.fill("abcNotation", abc)
	tb.fill("title", "Title: ")
	if !eval[bool](tb, `(() => {
  const el = document.getElementById(`+jsString(tb.fieldID("title"))+`);
  el.focus();
  el.setSelectionRange(el.value.length, el.value.length);
  const dt = new DataTransfer();
  dt.setData('text/plain', `+jsString(pasted)+`);
  el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
  return true;
})()`) {
		t.Fatal("pasting failed")
	}
	if got := tag("title"); got != "TEXTAREA" {
		t.Errorf("after pasting lines the title field is a %s, want a TEXTAREA", got)
	}
	if got := eval[string](tb, `document.getElementById(`+jsString(tb.fieldID("title"))+`).value`); got != "Title: "+pasted {
		t.Errorf("after pasting the title field holds %q, want %q", got, "Title: "+pasted)
	}

	e := tb.call(1)
	if e.Status != "ok" {
		t.Fatalf("entry = %+v", e)
	}
	sid := eval[string](tb, `sessionStorage.getItem('mcphost.session') ?? ''`)
	var entries struct {
		Entries []struct {
			Arguments map[string]any `json:"arguments"`
		} `json:"entries"`
	}
	d.apiJSON(t, http.MethodGet, "/sessions/"+sid+"/entries", nil, &entries)
	if len(entries.Entries) != 1 {
		t.Fatalf("the session has %d entries, want 1", len(entries.Entries))
	}
	args := entries.Entries[0].Arguments
	if args["abcNotation"] != abc || args["title"] != "Title: "+pasted || args["name"] != "plough" {
		t.Errorf("the call's arguments are %q, want abcNotation %q and title %q", args, abc, "Title: "+pasted)
	}

	// The entry's header is in view, inside the transcript.
	tb.waitFor("the entry's header in view", `(() => {
  const head = document.querySelector('`+entrySel+` .entry-head').getBoundingClientRect();
  const panel = document.getElementById('transcript-panel').getBoundingClientRect();
  return head.height > 0 && head.top >= panel.top - 1 && head.bottom <= Math.min(panel.bottom, innerHeight) + 1;
})()`)
	tb.screenshot("entry-in-view", "body")
}

// propertyOrder returns the keys of a schema's "properties" in the order
// the JSON has them.
func propertyOrder(t *testing.T, schema json.RawMessage) []string {
	t.Helper()
	var s struct {
		Properties json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(s.Properties)))
	var keys []string
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}
