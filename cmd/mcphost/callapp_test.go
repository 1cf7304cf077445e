package main

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPromptRetry: on a terminal, Enter retries a call that needed a URL
// visited; the end of input (Ctrl-D) stops.
func TestPromptRetry(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		want        bool
	}{
		{"enter", "\n", true},
		{"a line", "done\n", true},
		{"end of input", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			if got := promptRetry(bufio.NewReader(strings.NewReader(tc.input)), &out); got != tc.want {
				t.Errorf("promptRetry(%q) = %v, want %v", tc.input, got, tc.want)
			}
			if !strings.Contains(out.String(), "press Enter to retry") {
				t.Errorf("prompt %q does not say to press Enter", out.String())
			}
		})
	}
}

// TestURLElicitationsOf reads the URLs of a -32042 error and nothing of
// any other error.
func TestURLElicitationsOf(t *testing.T) {
	err := mcp.URLElicitationRequiredError([]*mcp.ElicitParams{{Mode: "url", Message: "Connect", URL: "https://example.com/c", ElicitationID: "e1"}})
	els, ok := urlElicitationsOf(rpcErrorOf(err))
	if want := []urlElicitation{{URL: "https://example.com/c", Message: "Connect", ID: "e1"}}; !ok || !cmp.Equal(els, want) {
		t.Errorf("urlElicitationsOf = %v, %v; want %v", els, ok, want)
	}
	if _, ok := urlElicitationsOf(-32602, json.RawMessage(`{"elicitations":[{"url":"https://x"}]}`)); ok {
		t.Error("another error code read as a URL elicitation")
	}
	if els, ok := urlElicitationsOf(mcp.CodeURLElicitationRequired, json.RawMessage(`not json`)); !ok || len(els) != 0 {
		t.Errorf("-32042 with bad data = %v, %v; want no URLs but ok", els, ok)
	}
}
