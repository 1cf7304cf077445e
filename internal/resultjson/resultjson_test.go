package resultjson

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// decoded is a result as a client decodes it from JSON: go-sdk sets its
// result type from the wire.
func decoded(t testing.TB, s string) *mcp.CallToolResult {
	t.Helper()
	var r mcp.CallToolResult
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// TestMarshal: every result encodes as json.Marshal encodes it; plain
// ones without it.
func TestMarshal(t *testing.T) {
	text := func(s string) mcp.Content { return &mcp.TextContent{Text: s} }
	for _, tc := range []struct {
		name  string
		res   *mcp.CallToolResult
		plain bool
	}{
		{"one text", &mcp.CallToolResult{Content: []mcp.Content{text("hello")}}, true},
		{"escapes", &mcp.CallToolResult{Content: []mcp.Content{text("<b> & \"q\" \\ \n\t\u2028 \x01 é \xff")}}, true},
		{"two texts, an error", &mcp.CallToolResult{Content: []mcp.Content{text("a"), text("")}, IsError: true}, true},
		{"empty content", &mcp.CallToolResult{Content: []mcp.Content{}}, true},
		{"complete, from a 2026-07-28 server", decoded(t, `{"content":[{"type":"text","text":"x"}],"resultType":"complete"}`), true},
		{"decoded legacy", decoded(t, `{"content":[{"type":"text","text":"x"}],"isError":true}`), true},
		{"null content", &mcp.CallToolResult{}, false},
		{"metadata", &mcp.CallToolResult{Meta: mcp.Meta{"k": "v"}, Content: []mcp.Content{text("a")}}, false},
		{"structured", &mcp.CallToolResult{Content: []mcp.Content{text("3")}, StructuredContent: map[string]any{"n": 3}}, false},
		{"text metadata", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a", Meta: mcp.Meta{"k": 1}}}}, false},
		{"annotations", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a", Annotations: &mcp.Annotations{Priority: 1}}}}, false},
		{"image", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: []byte{1}, MIMEType: "image/png"}}}, false},
		{"input round", decoded(t, `{"inputRequests":{},"requestState":"s","resultType":"input_required"}`), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := json.Marshal(tc.res)
			if err != nil {
				t.Fatal(err)
			}
			_, plain := plain(tc.res)
			if plain != tc.plain {
				t.Errorf("encoded without reflection: %v, want %v", plain, tc.plain)
			}
			got, err := Marshal(tc.res)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("Marshal = %s, %v\nwant      %s", got, err, want)
			}
		})
	}
}

// FuzzMarshal: a result decoded from any JSON encodes as json.Marshal
// encodes it.
func FuzzMarshal(f *testing.F) {
	f.Add(`{"content":[{"type":"text","text":"hi"}]}`)
	f.Add(`{"content":[{"type":"text","text":"a<b"},{"type":"text","text":""}],"isError":true,"resultType":"complete"}`)
	f.Add(`{"content":[{"type":"text","text":"x","_meta":{"a":1}}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		var r mcp.CallToolResult
		if json.Unmarshal([]byte(s), &r) != nil {
			return
		}
		want, werr := json.Marshal(&r)
		got, gerr := Marshal(&r)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("Marshal = %s, %v\nwant      %s, %v", got, gerr, want, werr)
		}
	})
}

func BenchmarkMarshal(b *testing.B) {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: the quick brown fox jumps over the dog"}}}
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(res)
		}
	})
	b.Run("resultjson", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = Marshal(res)
		}
	})
}
