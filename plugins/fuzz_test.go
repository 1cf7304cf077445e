package plugins

import (
	"encoding/json"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fixed inputs FuzzPluginOutput validates outputs against.
var (
	fuzzResult = &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: "x"}},
		IsError: true,
	}
	fuzzDisplay = Display{
		Type: "mcp_app", ResourceURI: "ui://app", HTML: "<p>hi</p>", FallbackText: "x",
		CSP: &CSP{
			ConnectDomains:  []string{"https://api.example.com", "wss://live.example.com"},
			ResourceDomains: []string{"https://cdn.example.com"},
			FrameDomains:    []string{"https://evil.example"},
		},
		Permissions: map[string]any{"camera": map[string]any{}, "microphone": map[string]any{}},
	}
)

// FuzzPluginOutput feeds arbitrary bytes to both stages' output validators.
// Each must not panic, and must return either an error or a value that
// obeys every rule, re-encodes within the cap and validates again unchanged.
// Seeds: testdata/fuzz/FuzzPluginOutput.
func FuzzPluginOutput(f *testing.F) {
	f.Add([]byte(`{"result":{"content":[{"type":"text","text":"y"}],"isError":true}}`))
	f.Add([]byte(`{"display":{"type":"mcp_app","resourceUri":"ui://app","csp":{"frameDomains":["https://evil.example"]}}}`))
	f.Fuzz(func(t *testing.T, out []byte) {
		checkResultOutput(t, out)
		checkDisplayOutput(t, out)
	})
}

func checkResultOutput(t *testing.T, out []byte) {
	res, changed, err := ValidateResultOutput(out, fuzzResult, nil)
	if err != nil {
		if res != nil || changed {
			t.Fatalf("error with a value: %v", err)
		}
		if !utf8.ValidString(err.Error()) {
			t.Fatalf("error message is not valid UTF-8: %q", err)
		}
		return
	}
	if len(out) == 0 && (res != fuzzResult || changed) {
		t.Fatal("empty output changed the result")
	}
	if !res.IsError {
		t.Fatal("isError cleared")
	}
	enc, err := json.Marshal(res)
	if err != nil {
		t.Fatalf("re-encode: %v", err)
	}
	if len(enc) > MaxIOBytes {
		t.Fatalf("re-encoded result is %d bytes", len(enc))
	}
	wrapped := append(append([]byte(`{"result":`), enc...), '}')
	again, changed2, err := ValidateResultOutput(wrapped, res, nil)
	if err != nil {
		t.Fatalf("the accepted result fails validation once re-encoded: %v\n%s", err, enc)
	}
	if changed2 || again != res {
		t.Fatalf("re-validating the accepted result changed it:\n%s", enc)
	}
}

func checkDisplayOutput(t *testing.T, out []byte) {
	d, changed, err := ValidateDisplayOutput(out, fuzzDisplay, testValidSource)
	if err != nil {
		if changed {
			t.Fatalf("error with a change: %v", err)
		}
		return
	}
	if d.Type != fuzzDisplay.Type || d.ResourceURI != fuzzDisplay.ResourceURI {
		t.Fatal("type or resourceUri changed")
	}
	if len(d.HTML) > MaxHTMLBytes {
		t.Fatalf("html is %d bytes", len(d.HTML))
	}
	if d.CSP != nil {
		for _, l := range []struct{ got, was []string }{
			{d.CSP.ConnectDomains, fuzzDisplay.CSP.ConnectDomains},
			{d.CSP.ResourceDomains, fuzzDisplay.CSP.ResourceDomains},
			{d.CSP.FrameDomains, fuzzDisplay.CSP.FrameDomains},
			{d.CSP.BaseURIDomains, fuzzDisplay.CSP.BaseURIDomains},
		} {
			for _, s := range l.got {
				if testValidSource(s) != nil || !slices.Contains(l.was, s) {
					t.Fatalf("CSP source %q widens the input", s)
				}
			}
		}
	}
	for k := range d.Permissions {
		if _, ok := fuzzDisplay.Permissions[k]; !ok {
			t.Fatalf("permission %q added", k)
		}
	}
	enc, err := encodeDisplay(d)
	if err != nil {
		t.Fatalf("re-encode: %v", err)
	}
	if len(enc) > MaxDisplayIOBytes-MaxIOBytes {
		t.Fatalf("re-encoded display is %d bytes", len(enc))
	}
	wrapped := append(append([]byte(`{"display":`), enc...), '}')
	if _, changed2, err := ValidateDisplayOutput(wrapped, d, testValidSource); err != nil || changed2 {
		t.Fatalf("re-validating the accepted display: changed %v, %v\n%s", changed2, err, enc)
	}
}
