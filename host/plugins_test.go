package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/mcphost/mcphost/plugins"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// secretServer has one tool, leak, whose text carries an API key.
func secretServer(t *testing.T) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "secrets", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "leak", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "key: sk-ABCDEFGHIJKLMNOPQRSTUVWX and more"}}}, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// pluginHost starts a host over secretServer with the plugin blocks in hcl
// (%s is replaced by the plugin's .wasm path).
func pluginHost(t *testing.T, hcl, wasm string) *host.Host {
	t.Helper()
	cfg, diags := config.Parse([]byte(fmt.Sprintf(hcl, wasm)), "plugins.hcl", config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	cfg.Servers = []config.Server{remoteServer("secrets", config.TransportStreamableHTTP, secretServer(t))}
	st, err := store.Open(t.Context(), t.TempDir()+"/m.db", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := startHostConfig(t, cfg, host.Options{Store: st, PluginCacheDir: testbin.PluginCacheDir(t)})
	return h
}

func TestPluginRedactsResults(t *testing.T) {
	h := pluginHost(t, `
plugin "redact" {
  path   = %q
  stages = ["result"]
  tools  = ["leak"]
  config = { pattern = "sk-[A-Za-z0-9]{20,}" }
}
`, testbin.ExamplePlugin(t, "redact"))

	// Through the session pipeline: the stored result is redacted and the
	// trail names the plugin.
	sess, err := h.CreateSession(t.Context(), alice, "")
	if err != nil {
		t.Fatal(err)
	}
	e, err := h.Call(t.Context(), host.SessionCall{Principal: alice, SessionID: sess.ID, Server: "secrets", Tool: "leak"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(e.Result), "sk-ABC") || !strings.Contains(string(e.Result), "[REDACTED]") {
		t.Errorf("stored result = %s", e.Result)
	}
	tr := trailOf(t, e)
	if len(tr.Plugins) != 1 || tr.Plugins[0].Plugin != "redact" || !tr.Plugins[0].Changed || tr.Plugins[0].Error != "" {
		t.Errorf("trail = %+v", tr)
	}

	// One-shot calls (the CLI) are redacted too.
	res, err := h.CallTool(t.Context(), host.CallToolRequest{Server: "secrets", Tool: "leak"})
	if err != nil || strings.Contains(textOf(res), "sk-ABC") {
		t.Errorf("CallTool: %v %q", err, textOf(res))
	}
}

func TestPluginFailure(t *testing.T) {
	wasm := testbin.Plugin(t, "plugins/testdata/wasm", "hostile")
	for _, tc := range []struct {
		onError    string
		wantStatus string
	}{
		{"fail", store.StatusError},
		{"skip", store.StatusOK},
	} {
		t.Run(tc.onError, func(t *testing.T) {
			h := pluginHost(t, `
plugin "broken" {
  path     = %q
  stages   = ["result"]
  config   = { mode = "panic" }
  on_error = "`+tc.onError+`"
}
`, wasm)
			sess, _ := h.CreateSession(t.Context(), alice, "")
			e, err := h.Call(t.Context(), host.SessionCall{Principal: alice, SessionID: sess.ID, Server: "secrets", Tool: "leak"})
			if err != nil {
				t.Fatal(err)
			}
			if e.Status != tc.wantStatus {
				t.Errorf("status %s (%s), want %s", e.Status, e.Error, tc.wantStatus)
			}
			tr := trailOf(t, e)
			if len(tr.Plugins) != 1 || tr.Plugins[0].Error == "" {
				t.Errorf("trail = %+v", tr)
			}
			if tc.onError == "fail" {
				// A failed plugin never lets the unprocessed result through.
				if strings.Contains(string(e.Result), "sk-ABC") || !strings.Contains(e.Error, "broken") {
					t.Errorf("result %s error %q", e.Result, e.Error)
				}
				_, err := h.CallTool(t.Context(), host.CallToolRequest{Server: "secrets", Tool: "leak"})
				var pe *plugins.Error
				if !errors.As(err, &pe) || pe.Plugin != "broken" || pe.Stage != plugins.StageResult {
					t.Errorf("CallTool with a failing plugin: %v, want a *plugins.Error of broken", err)
				}
			} else if !strings.Contains(string(e.Result), "sk-ABC") || !tr.Plugins[0].Skipped {
				t.Errorf("skip: result %s trail %+v", e.Result, tr)
			}
		})
	}
}

func TestPluginLoadErrors(t *testing.T) {
	cfg, diags := config.Parse([]byte(`
plugin "bad" {
  path   = "/nonexistent/plugin.wasm"
  stages = ["result"]
}
`), "p.hcl", config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	// Without a data_dir New makes the servers' sandboxes a directory in
	// the temporary directory; failing, it must not leave it there.
	cfg.DataDir = ""
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	_, err := host.New(cfg, host.Options{})
	var le *host.PluginLoadError
	if !errors.As(err, &le) || len(le.Diagnostics) != 1 || le.Diagnostics[0].Subject.Start.Line != 3 {
		t.Fatalf("New: %v, want a PluginLoadError at line 3", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the failed New left %v in the temporary directory", left)
	}
}
