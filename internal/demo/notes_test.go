package demo

import (
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestNotes: the notes a process keeps, in both eras, and what add_note
// refuses (each an isError result that says why).
func TestNotes(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			cs := connectTo(t, NewNotesServer("test"), version)
			call := func(tool string, args map[string]any) *mcp.CallToolResult {
				t.Helper()
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
				if err != nil {
					t.Fatalf("%s: %v", tool, err)
				}
				return res
			}
			if got := resultText(call("list_notes", nil)); got != "no notes" {
				t.Errorf("empty list_notes = %q", got)
			}
			for i, text := range []string{"first", "  second  "} {
				res := call("add_note", map[string]any{"text": text})
				if res.IsError || resultText(res) != []string{"1 notes", "2 notes"}[i] {
					t.Errorf("add_note %q = %q (isError %v)", text, resultText(res), res.IsError)
				}
			}
			res := call("list_notes", nil)
			if got := resultText(res); got != "first\nsecond" {
				t.Errorf("list_notes = %q", got)
			}
			if sc, _ := res.StructuredContent.(map[string]any); sc == nil || len(sc["notes"].([]any)) != 2 {
				t.Errorf("list_notes structured content %#v", res.StructuredContent)
			}
			for _, tc := range []struct {
				text, want string
			}{
				{"", "text is empty"},
				{"   ", "text is empty"},
				{strings.Repeat("x", maxNoteSize+1), "at most 4096"},
			} {
				res := call("add_note", map[string]any{"text": tc.text})
				if !res.IsError || !strings.Contains(resultText(res), tc.want) {
					t.Errorf("add_note of %d bytes = %q (isError %v), want an error saying %q", len(tc.text), resultText(res), res.IsError, tc.want)
				}
			}
			if got := resultText(call("list_notes", nil)); got != "first\nsecond" {
				t.Errorf("list_notes after refusals = %q", got)
			}
		})
	}
}

func TestNotesLimit(t *testing.T) {
	cs := connectTo(t, NewNotesServer("test"), "2025-11-25")
	for i := range maxNotes {
		if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "add_note", Arguments: map[string]any{"text": "n"}}); err != nil || res.IsError {
			t.Fatalf("note %d: %v %v", i+1, err, res)
		}
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "add_note", Arguments: map[string]any{"text": "one too many"}})
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "its limit") {
		t.Errorf("note %d: %v %q", maxNotes+1, err, resultText(res))
	}
}

func TestServeNotes(t *testing.T) {
	clientR, serverW := io.Pipe()
	serverR, clientW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- ServeNotes(t.Context(), serverR, serverW) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "demo-test", Version: "1.0.0"}, nil).
		Connect(t.Context(), &mcp.IOTransport{Reader: clientR, Writer: clientW}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	if got := cs.InitializeResult().ServerInfo.Name; got != "mcphost-demo-notes" {
		t.Errorf("server name %q", got)
	}
	cs.Close()
	if err := <-done; err != nil {
		t.Errorf("ServeNotes after client close: %v", err)
	}
}
