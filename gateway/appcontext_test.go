package gateway_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAppContextReachesTheClient: what an App of a gateway client's call
// gave for the model (ui/update-model-context, kept with the entry) comes
// with that client's next result, once, as text and under _meta; another
// client's results never carry it.
func TestAppContextReachesTheClient(t *testing.T) {
	e := newEnv(t, []string{"fx"})
	alice := e.connect(t, "/mcp/servers/fx", aliceToken, legacyVersion, nil)
	bob := e.connect(t, "/mcp/servers/fx", bobToken, legacyVersion, nil)
	echo := func(cs *mcp.ClientSession, text string) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
		if err != nil || res.IsError {
			t.Fatalf("echo: %v %+v", err, res)
		}
		return res
	}
	echo(alice, "first")
	echo(bob, "bob's first")

	// The entry of alice's call, in her gateway session.
	p := host.Principal{Name: "alice"}
	sessions, err := e.h.Sessions(t.Context(), p)
	if err != nil || len(sessions) != 1 {
		t.Fatalf("alice's sessions: %v %v", sessions, err)
	}
	entries, _, err := e.h.Entries(t.Context(), p, sessions[0].ID, 0, 10)
	if err != nil || len(entries) != 1 {
		t.Fatalf("alice's entries: %v %v", entries, err)
	}
	given := `{"content":[{"type":"text","text":"The user picked Q3 in the App."}],"structuredContent":{"quarter":"Q3"}}`
	if err := e.st.SetAppContext(t.Context(), "alice", entries[0].ID, json.RawMessage(given), time.Now()); err != nil {
		t.Fatal(err)
	}

	res := echo(alice, "second")
	if len(res.Content) != 2 || textOf(&mcp.CallToolResult{Content: res.Content[:1]}) != "second" {
		t.Fatalf("the result after the App's context: %+v", res.Content)
	}
	added := textOf(&mcp.CallToolResult{Content: res.Content[1:]})
	if !strings.Contains(added, "The user picked Q3 in the App.") || !strings.Contains(added, `{"quarter":"Q3"}`) || !strings.Contains(added, "fx.echo") {
		t.Errorf("the added text: %q", added)
	}
	meta, _ := json.Marshal(res.Meta["io.mcphost/appContext"])
	if !strings.Contains(string(meta), entries[0].ID) || !strings.Contains(string(meta), "Q3") {
		t.Errorf("_meta: %s", meta)
	}
	// Once: the next result is the tool's own.
	if res := echo(alice, "third"); len(res.Content) != 1 || res.Meta["io.mcphost/appContext"] != nil {
		t.Errorf("the context came again: %+v", res)
	}
	// Bob's results never carry alice's context.
	if res := echo(bob, "bob's second"); len(res.Content) != 1 {
		t.Errorf("bob got %+v", res.Content)
	}
	// An update is handed on again.
	if err := e.st.SetAppContext(t.Context(), "alice", entries[0].ID, json.RawMessage(`{"content":[{"type":"text","text":"Now Q4."}]}`), time.Now()); err != nil {
		t.Fatal(err)
	}
	if res := echo(alice, "fourth"); len(res.Content) != 2 || !strings.Contains(textOf(&mcp.CallToolResult{Content: res.Content[1:]}), "Now Q4.") {
		t.Errorf("the update: %+v", res.Content)
	}
}
