package gateway_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/gateway"
	"github.com/mcphost/mcphost/host/config"
)

// searchSummary is what exerciseSearch in
// testdata/interop/gateway/exercise.mjs prints.
type searchSummary struct {
	ProtocolVersion string            `json:"protocolVersion"`
	Era             string            `json:"era"`
	Instructions    *string           `json:"instructions"`
	Tools           []string          `json:"tools"`
	Found           []foundEntry      `json:"found"`
	Described       []foundEntry      `json:"described"`
	Called          *toolOutcome      `json:"called"`
	Errors          map[string]string `json:"errors"`
}

type foundEntry struct {
	Name        string `json:"name"`
	InputSchema *struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	} `json:"inputSchema"`
}

// runSearchScript runs a client script of testdata/interop/gateway with
// MCPHOST_EXERCISE=search against url and returns its summary.
func runSearchScript(t *testing.T, dir, url, token string, script ...string) searchSummary {
	t.Helper()
	var s searchSummary
	runScriptInto(t, dir, []string{"MCPHOST_URL=" + url, "MCPHOST_TOKEN=" + token, "MCPHOST_EXERCISE=search"}, script[0]+" (search)", &s, script...)
	t.Logf("%s (search): protocol %s, era %q, tools %v", script[0], s.ProtocolVersion, s.Era, s.Tools)
	return s
}

// checkSearchSummary checks what a TypeScript client sees of search mode:
// exactly the three meta-tools and the pinned fx__add; instructions that
// name them; search_tools' first answer to a natural request is an echo
// tool with its input schema; describe_tools gives its schema; call_tool
// calls it and returns the tool's own result.
func checkSearchSummary(t *testing.T, s searchSummary) {
	t.Helper()
	if want := []string{"search_tools", "describe_tools", "call_tool", "fx__add"}; !slices.Equal(s.Tools, want) {
		t.Errorf("tools/list = %v, want %v", s.Tools, want)
	}
	if s.Instructions == nil || !strings.Contains(*s.Instructions, "search_tools") || !strings.Contains(*s.Instructions, "fx") {
		t.Errorf("instructions = %v, want them to name search_tools and fx", s.Instructions)
	}
	hasText := func(e foundEntry) bool {
		if e.InputSchema == nil {
			return false
		}
		_, ok := e.InputSchema.Properties["text"]
		return e.InputSchema.Type == "object" && ok
	}
	if len(s.Found) == 0 || !strings.HasSuffix(s.Found[0].Name, "__echo") || !hasText(s.Found[0]) {
		t.Fatalf("search_tools(%q) found %+v, want an echo tool first with its input schema", "return my text unchanged", s.Found)
	}
	if len(s.Described) != 1 || s.Described[0].Name != s.Found[0].Name || !hasText(s.Described[0]) {
		t.Errorf("describe_tools([%s]) = %+v", s.Found[0].Name, s.Described)
	}
	if s.Called == nil || s.Called.IsError || s.Called.Text != "found by search" {
		t.Errorf("call_tool(%s) = %+v, want the echo of %q", s.Found[0].Name, s.Called, "found by search")
	}
}

// TestInteropTypeScriptSearch runs the TypeScript SDK's clients against
// /mcp in search mode, as TestInteropTypeScript does in list mode: 1.x
// (2025-11-25), 2.x with negotiation auto (2026-07-28) and legacy; and 2.x
// against a list-mode daemon whose URL asks for search (?discovery=search).
func TestInteropTypeScriptSearch(t *testing.T) {
	dir := interopDir(t, client2Pkg)
	interopDir(t, sdk1Pkg)
	e := searchEnv(t, config.DiscoverySearch, 0)
	url := e.base + gateway.PathAggregate
	for _, tc := range []struct {
		name, version string
		script        []string
	}{
		{"sdk-1.x", legacyVersion, []string{"sdk1.mjs"}},
		{"client-2.x auto", modernVersion, []string{"client2.mjs", "auto"}},
		{"client-2.x legacy", legacyVersion, []string{"client2.mjs", "legacy"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := runSearchScript(t, dir, url, aliceToken, tc.script...)
			checkSearchSummary(t, s)
			if s.ProtocolVersion != tc.version {
				t.Errorf("negotiated %q, want %s", s.ProtocolVersion, tc.version)
			}
		})
	}
	t.Run("client-2.x ?discovery=search", func(t *testing.T) {
		list := searchEnv(t, config.DiscoveryList, 0)
		s := runSearchScript(t, dir, list.base+gateway.PathAggregate+"?discovery=search", aliceToken, "client2.mjs", "auto")
		checkSearchSummary(t, s)
	})
}
