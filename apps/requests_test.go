package apps

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestToolVisibility(t *testing.T) {
	tests := []struct {
		name       string
		meta       mcp.Meta
		model, app bool
	}{
		{"no meta", nil, true, true},
		{"no visibility", mcp.Meta{"ui": map[string]any{"resourceUri": "ui://a"}}, true, true},
		{"app only, no link", mcp.Meta{"ui": map[string]any{"visibility": []any{"app"}}}, false, true},
		{"model only", mcp.Meta{"ui": map[string]any{"visibility": []string{"model"}}}, true, false},
		{"empty", mcp.Meta{"ui": map[string]any{"visibility": []any{}}}, false, false},
		{"unknown values ignored", mcp.Meta{"ui": map[string]any{"visibility": []any{"robot", "app", 3}}}, false, true},
		{"not a list", mcp.Meta{"ui": map[string]any{"visibility": "app"}}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model, app := ToolVisibility(&mcp.Tool{Name: "t", Meta: tt.meta})
			if model != tt.model || app != tt.app {
				t.Errorf("ToolVisibility = model %v app %v, want %v %v", model, app, tt.model, tt.app)
			}
		})
	}
}

func TestCheckLink(t *testing.T) {
	tests := []struct {
		url, want, err string
	}{
		{"https://example.com/a?b=c#d", "https://example.com/a?b=c#d", ""},
		{"http://example.com", "http://example.com", ""},
		{"https://xn--bcher-kva.example/", "https://xn--bcher-kva.example/", ""},
		{"HTTPS://Example.com/", "https://Example.com/", ""},
		{"", "", "empty"},
		{"javascript:alert(1)", "", "only http and https"},
		{"data:text/html,<p>x</p>", "", "only http and https"},
		{"file:///etc/passwd", "", "only http and https"},
		{"blob:https://a.com/x", "", "only http and https"},
		{"ftp://example.com", "", "only http and https"},
		{"/relative/path", "", "only http and https"},
		{"https:opaque", "", "absolute"},
		{"https://", "", "no host"},
		{"https://user:pass@example.com", "", "user information"},
		{"https://google.com@evil.example", "", "user information"},
		{"https://bücher.example/", "", "not printable ASCII"},
		{"https://a.com/\nx", "", "not printable ASCII"},
		{"https://a.com/ x", "", "not printable ASCII"},
		{"https://a.com/" + strings.Repeat("x", MaxLinkBytes), "", "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			got, err := CheckLink(tt.url)
			if tt.err == "" {
				if err != nil || got != tt.want {
					t.Errorf("CheckLink = %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("CheckLink error %v, want one with %q", err, tt.err)
			}
			if err != nil && len(tt.url) > 8 && strings.Contains(err.Error(), tt.url) {
				t.Errorf("the error quotes the URL: %v", err)
			}
		})
	}
}

func TestCheckMessage(t *testing.T) {
	long := strings.Repeat("x", MaxMessageBytes/2)
	tests := []struct {
		name, params string
		want         []string
		err          string
	}{
		{"one text block", `{"role":"user","content":[{"type":"text","text":"hello"}]}`, []string{"hello"}, ""},
		{"no role", `{"content":[{"type":"text","text":"a"},{"type":"text","text":"b","_meta":{"x":1}}]}`, []string{"a", "b"}, ""},
		{"exactly the limit", `{"content":[{"type":"text","text":"` + long + `"},{"type":"text","text":"` + long + `"}]}`, []string{long, long}, ""},
		{"over the limit", `{"content":[{"type":"text","text":"` + long + `"},{"type":"text","text":"` + long + `x"}]}`, nil, "longer than"},
		{"assistant role", `{"role":"assistant","content":[{"type":"text","text":"a"}]}`, nil, "role"},
		{"image block", `{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`, nil, "only text"},
		{"text without text", `{"content":[{"type":"text"}]}`, nil, "only text"},
		{"no content", `{"role":"user"}`, nil, "no content"},
		{"empty content", `{"content":[]}`, nil, "no content"},
		{"blank text", `{"content":[{"type":"text","text":"  \n"}]}`, nil, "empty"},
		{"block not an object", `{"content":["hi"]}`, nil, "not an object"},
		{"params not an object", `[1]`, nil, "not an object"},
		{"too many blocks", `{"content":[` + strings.Repeat(`{"type":"text","text":"a"},`, MaxMessageBlocks) + `{"type":"text","text":"a"}]}`, nil, "more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := CheckMessage(json.RawMessage(tt.params))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("CheckMessage error %v, want one with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range m.Content {
				got = append(got, c.Text)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("texts (-want +got):\n%s", diff)
			}
		})
	}
}
