package httpapi_test

import (
	"testing"

	"github.com/mcphost/mcphost/internal/fixture"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReadResourceAndGetPrompt: a caller reads a server's resources (a
// static one, one of a template) and gets its prompts with arguments;
// what the server refuses comes back with its code, and bad requests say
// what is missing.
func TestReadResourceAndGetPrompt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	read := func(uri string) response {
		return e.do(t, "POST", "/api/v1/servers/fx/resources/read", aliceToken, mustJSON(map[string]string{"uri": uri}))
	}
	tests := []struct {
		name, uri, want string
	}{
		{"static", fixture.ReadmeURI, fixture.ReadmeText},
		{"template", "fixture://items/42", "item 42"},
	}
	for _, tt := range tests {
		t.Run("read "+tt.name, func(t *testing.T) {
			r := read(tt.uri)
			wantStatus(t, r, 200)
			v := decode[mcp.ReadResourceResult](t, r)
			if len(v.Contents) != 1 || v.Contents[0].Text != tt.want || v.Contents[0].URI != tt.uri {
				t.Fatalf("read %s: %s", tt.uri, r.body)
			}
		})
	}
	t.Run("read missing", func(t *testing.T) {
		wantError(t, read("fixture://items/"), 400, "upstream_error") // go-sdk's "Resource not found" is -32602
	})
	t.Run("read without uri", func(t *testing.T) {
		wantError(t, e.do(t, "POST", "/api/v1/servers/fx/resources/read", aliceToken, `{}`), 400, "bad_request")
	})
	t.Run("read unknown server", func(t *testing.T) {
		wantError(t, e.do(t, "POST", "/api/v1/servers/nope/resources/read", aliceToken, mustJSON(map[string]string{"uri": fixture.ReadmeURI})), 404, "not_found")
	})
	t.Run("read without a token", func(t *testing.T) {
		wantStatus(t, e.do(t, "POST", "/api/v1/servers/fx/resources/read", "", mustJSON(map[string]string{"uri": fixture.ReadmeURI})), 401)
	})

	get := func(body string) response {
		return e.do(t, "POST", "/api/v1/servers/fx/prompts/get", aliceToken, body)
	}
	t.Run("get prompt", func(t *testing.T) {
		r := get(`{"name": "greet", "arguments": {"name": "Ada"}}`)
		wantStatus(t, r, 200)
		v := decode[mcp.GetPromptResult](t, r)
		tc, _ := v.Messages[0].Content.(*mcp.TextContent)
		if len(v.Messages) != 1 || tc == nil || tc.Text != "Hello, Ada!" {
			t.Fatalf("greet: %s", r.body)
		}
	})
	t.Run("get unknown prompt", func(t *testing.T) {
		wantError(t, get(`{"name": "nope"}`), 400, "upstream_error")
	})
	t.Run("get without name", func(t *testing.T) {
		wantError(t, get(`{"arguments": {}}`), 400, "bad_request")
	})
	t.Run("get with non-string arguments", func(t *testing.T) {
		wantError(t, get(`{"name": "greet", "arguments": {"name": 3}}`), 400, "bad_request")
	})
}
