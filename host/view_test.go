package host_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/apps"
	"github.com/mcphost/mcphost/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestToolView(t *testing.T) {
	tool := &mcp.Tool{Name: "show", Title: "Show", Description: "d"}
	tests := []struct {
		name    string
		app     *apps.Link
		meta    mcp.Meta
		visible []string
		uri     string
	}{
		{"no App", nil, nil, []string{"model", "app"}, ""},
		{"App for both", &apps.Link{ResourceURI: "ui://a", ModelVisible: true, AppVisible: true}, nil, []string{"model", "app"}, "ui://a"},
		{"App-only tool", &apps.Link{ResourceURI: "ui://a", AppVisible: true}, nil, []string{"app"}, "ui://a"},
		{"model only", &apps.Link{ResourceURI: "ui://a", ModelVisible: true}, nil, []string{"model"}, "ui://a"},
		{"no App, visible to Apps only", nil, mcp.Meta{"ui": map[string]any{"visibility": []any{"app"}}}, []string{"app"}, ""},
		{"no App, hidden from Apps", nil, mcp.Meta{"ui": map[string]any{"visibility": []any{"model"}}}, []string{"model"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tool := tool
			if tc.meta != nil {
				tool = &mcp.Tool{Name: "show", Title: "Show", Meta: tc.meta}
			}
			v := host.Tool{Server: "s", Tool: tool, App: tc.app}.View()
			if v.Qualified != "s.show" || v.Title != "Show" {
				t.Errorf("view %+v", v)
			}
			if diff := cmp.Diff(tc.visible, v.Visibility); diff != "" {
				t.Errorf("visibility (-want +got):\n%s", diff)
			}
			if v.AppResourceURI != tc.uri {
				t.Errorf("appResourceUri = %q, want %q", v.AppResourceURI, tc.uri)
			}
		})
	}
}
