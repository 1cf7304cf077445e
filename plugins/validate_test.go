package plugins

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestValidateResultOutput(t *testing.T) {
	in := textResult("x")
	failed := textResult("x")
	failed.IsError = true
	structured := textResult("x")
	structured.StructuredContent = map[string]any{"n": 1.0}
	needsN := func(v any) error {
		if m, ok := v.(map[string]any); ok {
			if _, ok := m["n"]; ok {
				return nil
			}
		}
		return errors.New("n is required")
	}
	for _, c := range []struct {
		name       string
		out        string
		in         *mcp.CallToolResult
		validate   func(any) error
		wantErr    string // "" for success
		wantChange bool
	}{
		{name: "empty", out: ``},
		{name: "same", out: `{"result":{"content":[{"type":"text","text":"x"}]}}`}, // as sent
		{name: "same, spaced", out: `{"result": { "content": [ {"text": "x", "type": "text"} ] } }`},
		{name: "changed", out: `{"result":{"content":[{"type":"text","text":"y"}]}}`, wantChange: true},
		{name: "all types", out: `{"result":{"_meta":{"a":1},"content":[
			{"type":"text","text":"t","annotations":{"priority":0.5},"_meta":null},
			{"type":"image","data":"AQID","mimeType":"image/png"},
			{"type":"audio","data":"","mimeType":"audio/wav"},
			{"type":"resource_link","uri":"file:///a","name":"a","size":3,"icons":[]},
			{"type":"resource","resource":{"uri":"file:///b","blob":"AQID"}}],
			"structuredContent":[1,"two"],"isError":false}}`, wantChange: true},
		{name: "content null", out: `{"result":{"content":null}}`, wantChange: true},
		{name: "set isError", out: `{"result":{"content":[],"isError":true}}`, wantChange: true},
		{name: "null", out: `null`, wantErr: "must be a JSON object"},
		{name: "empty object", out: `{}`, wantErr: `no "result"`},
		{name: "result null", out: `{"result":null}`, wantErr: "result must be an object"},
		{name: "extra top-level key", out: `{"result":{"content":[]},"display":{}}`, wantErr: `unknown key "display"`},
		{name: "unknown result key", out: `{"result":{"content":[],"contents":[]}}`, wantErr: `unknown key "contents"`},
		{name: "no content", out: `{"result":{}}`, wantErr: "content is required"},
		{name: "content object", out: `{"result":{"content":{}}}`, wantErr: "content must be an array"},
		{name: "unknown type", out: `{"result":{"content":[{"type":"video"}]}}`, wantErr: `unknown content type "video"`},
		{name: "no type", out: `{"result":{"content":[{"text":"x"}]}}`, wantErr: "type is required"},
		{name: "tool_use not allowed", out: `{"result":{"content":[{"type":"tool_use","id":"1","name":"n","input":{}}]}}`, wantErr: "unknown content type"},
		{name: "text missing", out: `{"result":{"content":[{"type":"text"}]}}`, wantErr: "text is required"},
		{name: "text number", out: `{"result":{"content":[{"type":"text","text":1}]}}`, wantErr: "text must be a string"},
		{name: "unknown item key", out: `{"result":{"content":[{"type":"text","text":"x","extra":1}]}}`, wantErr: `unknown key "extra"`},
		{name: "bad base64", out: `{"result":{"content":[{"type":"image","data":"!!","mimeType":"image/png"}]}}`, wantErr: "result:"},
		{name: "resource without uri", out: `{"result":{"content":[{"type":"resource","resource":{"text":"x"}}]}}`, wantErr: "resource: uri is required"},
		{name: "isError string", out: `{"result":{"content":[],"isError":"yes"}}`, wantErr: "isError must be a boolean"},
		{name: "duplicate key", out: `{"result":{"content":[],"content":[]}}`, wantErr: `duplicate key "content"`},
		{name: "escaped duplicate key", out: `{"result":{"content":[],"\u0063ontent":[]}}`, wantErr: "duplicate key"},
		{name: "trailing data", out: `{"result":{"content":[]}} {}`, wantErr: "data after"},
		{name: "invalid UTF-8", out: "{\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"\xff\"}]}}", wantErr: "not valid UTF-8"},
		{name: "deep", out: `{"result":{"content":[],"structuredContent":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}}`, wantErr: "nested deeper"},
		{name: "too big", out: `{"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", MaxIOBytes) + `"}]}}`, wantErr: "over the 2097152-byte limit"},
		{name: "grows when re-encoded", out: `{"result":{"content":[{"type":"text","text":"` + strings.Repeat("<", MaxIOBytes-100) + `"}]}}`, wantErr: "once re-encoded"},
		{name: "clear isError", in: failed, out: `{"result":{"content":[]}}`, wantErr: "isError cleared"},
		{name: "keep isError", in: failed, out: `{"result":{"content":[],"isError":true}}`, wantChange: true},
		{name: "remove structured", in: structured, out: `{"result":{"content":[]}}`, wantErr: "structuredContent removed"},
		{name: "schema ok", in: structured, validate: needsN, out: `{"result":{"content":[],"structuredContent":{"n":2}}}`, wantChange: true},
		{name: "schema broken", in: structured, validate: needsN, out: `{"result":{"content":[],"structuredContent":{"m":2}}}`, wantErr: "output schema: n is required"},
	} {
		t.Run(c.name, func(t *testing.T) {
			input := c.in
			if input == nil {
				input = in
			}
			res, changed, err := ValidateResultOutput([]byte(c.out), input, c.validate)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				if len(err.Error()) > 300 {
					t.Errorf("error is %d bytes long", len(err.Error()))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if changed != c.wantChange {
				t.Errorf("changed = %v, want %v", changed, c.wantChange)
			}
			if !changed && res != input {
				t.Error("an unchanged result is not the input")
			}
		})
	}
}

func TestValidateDisplayOutput(t *testing.T) {
	in := Display{
		Type: "mcp_app", ResourceURI: "ui://a", HTML: "<p>", FallbackText: "f",
		CSP:         &CSP{ConnectDomains: []string{"https://a.example", "https://b.example"}, FrameDomains: []string{"https://f.example"}},
		Permissions: map[string]any{"camera": map[string]any{}, "microphone": map[string]any{}},
	}
	sent, err := encodeDisplay(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		out     string
		want    *Display
		wantErr string
	}{
		{name: "empty", out: ``, want: &in},
		{name: "same", out: `{"display":{"type":"mcp_app","resourceUri":"ui://a","html":"<p>","fallbackText":"f",
			"csp":{"connectDomains":["https://a.example","https://b.example"],"frameDomains":["https://f.example"]},
			"permissions":{"camera":{},"microphone":{}}}}`, want: &in},
		{name: "as sent", out: `{"display":` + string(sent) + `}`, want: &in},
		{name: "narrowed", out: `{"display":{"type":"mcp_app","resourceUri":"ui://a","html":"<b>","fallbackText":"g",
			"csp":{"connectDomains":["https://b.example"]},"permissions":{"camera":{}}}}`,
			want: &Display{Type: "mcp_app", ResourceURI: "ui://a", HTML: "<b>", FallbackText: "g",
				CSP:         &CSP{ConnectDomains: []string{"https://b.example"}, ResourceDomains: []string{}, FrameDomains: []string{}, BaseURIDomains: []string{}},
				Permissions: map[string]any{"camera": map[string]any{}}}},
		{name: "everything removed", out: `{"display":{"type":"mcp_app","resourceUri":"ui://a"}}`,
			want: &Display{Type: "mcp_app", ResourceURI: "ui://a"}},
		{name: "widened", out: `{"display":{"type":"mcp_app","resourceUri":"ui://a","csp":{"connectDomains":["https://c.example"]}}}`, wantErr: "never widen"},
		{name: "moved to another list", out: `{"display":{"type":"mcp_app","resourceUri":"ui://a","csp":{"frameDomains":["https://a.example"]}}}`, wantErr: "never widen"},
		{name: "invalid source", out: `{"display":{"type":"mcp_app","resourceUri":"ui://a","csp":{"connectDomains":["'self'"]}}}`, wantErr: "invalid source"},
		{name: "duplicate source", out: `{"display":{"type":"mcp_app","resourceUri":"ui://a","csp":{"connectDomains":["https://a.example","https://a.example"]}}}`, wantErr: "duplicate source"},
		{name: "unknown csp key", out: `{"display":{"type":"mcp_app","resourceUri":"ui://a","csp":{"scriptDomains":[]}}}`, wantErr: `unknown key "scriptDomains"`},
		{name: "type changed", out: `{"display":{"type":"other","resourceUri":"ui://a"}}`, wantErr: "type changed"},
		{name: "uri changed", out: `{"display":{"type":"mcp_app","resourceUri":"ui://b"}}`, wantErr: "resourceUri changed"},
		{name: "no type", out: `{"display":{"resourceUri":"ui://a"}}`, wantErr: "type is required"},
		{name: "permission added", out: `{"display":{"type":"mcp_app","resourceUri":"ui://a","permissions":{"geolocation":{}}}}`, wantErr: "added"},
		{name: "permission changed", out: `{"display":{"type":"mcp_app","resourceUri":"ui://a","permissions":{"camera":{"all":true}}}}`, wantErr: "changed"},
		{name: "html too big", out: `{"display":{"type":"mcp_app","resourceUri":"ui://a","html":"` + strings.Repeat("x", MaxHTMLBytes+1) + `"}}`, wantErr: "html is"},
		{name: "unknown key", out: `{"display":{"type":"mcp_app","resourceUri":"ui://a","warning":"w"}}`, wantErr: `unknown key "warning"`},
		{name: "result key", out: `{"result":{"content":[]}}`, wantErr: `unknown key "result"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, changed, err := ValidateDisplayOutput([]byte(c.out), in, testValidSource)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(*c.want, d); diff != "" {
				t.Errorf("display (-want +got):\n%s", diff)
			}
			if changed != (c.want != &in) {
				t.Errorf("changed = %v", changed)
			}
		})
	}
	// With no source validator every source is refused.
	_, _, err = ValidateDisplayOutput([]byte(`{"display":{"type":"mcp_app","resourceUri":"ui://a","csp":{"connectDomains":["https://a.example"]}}}`), in, nil)
	if err == nil {
		t.Error("a source passed without a validator")
	}
}

func TestMatchAny(t *testing.T) {
	for _, c := range []struct {
		patterns []string
		name     string
		want     bool
	}{
		{nil, "x", true},
		{[]string{"*"}, "a/b", true},
		{[]string{"read_*"}, "read_a/b", true},
		{[]string{"read_?"}, "read_/", true},
		{[]string{"a[bc]d"}, "acd", true},
		{[]string{"a[^/]d"}, "a/d", false},
		{[]string{"git/*"}, "git/log", true},
		{[]string{"git/*"}, "gitx/log", false},
		{[]string{"x", "y"}, "z", false},
	} {
		if got := matchAny(c.patterns, c.name); got != c.want {
			t.Errorf("matchAny(%q, %q) = %v", c.patterns, c.name, got)
		}
	}
}

func TestInputEnvelope(t *testing.T) {
	pre, err := prefix("srv", "tool", nil, Principal{Name: "ann"})
	if err != nil {
		t.Fatal(err)
	}
	b := envelope(pre, "result", []byte(`{"content":[]}`))
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	want := map[string]any{
		"server": "srv", "tool": "tool", "arguments": map[string]any{},
		"principal": map[string]any{"name": "ann", "groups": []any{}},
		"result":    map[string]any{"content": []any{}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("input (-want +got):\n%s", diff)
	}
	if _, err := prefix("s", "t", json.RawMessage(`{bad`), Principal{}); err == nil {
		t.Error("invalid arguments were accepted")
	}
}

func TestClip(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"plain", 100, "plain"},
		{"a\nb\x1b[31mc\x7f\u0085", 100, "a b [31mc  "},
		{"bad \xff utf8", 100, "bad \uFFFD utf8"},
		{"ééééé", 5, "éé…"}, // cut on a rune boundary
	} {
		if got := clip(c.in, c.n); got != c.want {
			t.Errorf("clip(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
