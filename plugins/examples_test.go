package plugins

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const secret = "sk-abcdefghijklmnopqrstuvwxyz0123"

func TestExampleRedact(t *testing.T) {
	rt := newRuntime(t, Options{})
	s := load(t, rt, spec(t, "redact", "redact", result, map[string]string{"pattern": `sk-[A-Za-z0-9]{20,}`}))
	in := &mcp.CallToolResult{
		Content: []mcp.Content{
			&mcp.TextContent{Text: "key " + secret + " end"},
			&mcp.ImageContent{Data: []byte(secret), MIMEType: "image/png"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///k", Text: "k=" + secret}},
			&mcp.TextContent{Text: "escaped:\n\t<\"" + secret + "\"> & \u2028 é"},
		},
		StructuredContent: map[string]any{"key": secret, "n": 1.5, "list": []any{"a", secret}, secret: "key names stay"},
	}
	res, outs, err := s.RunResult(t.Context(), ResultInput{Server: "fs", Tool: "read", Result: in})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || !outs[0].Changed {
		t.Errorf("outcomes = %+v", outs)
	}
	got, _ := json.Marshal(res)
	want, _ := json.Marshal(&mcp.CallToolResult{
		Content: []mcp.Content{
			&mcp.TextContent{Text: "key [REDACTED] end"},
			&mcp.ImageContent{Data: []byte(secret), MIMEType: "image/png"}, // binary data is not text
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///k", Text: "k=[REDACTED]"}},
			&mcp.TextContent{Text: "escaped:\n\t<\"[REDACTED]\"> & \u2028 é"},
		},
		StructuredContent: map[string]any{"key": "[REDACTED]", "n": 1.5, "list": []any{"a", "[REDACTED]"}, secret: "key names stay"},
	})
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("redacted result (-want +got):\n%s", diff)
	}

	// No match: the input comes back as it was.
	clean := textResult("nothing to hide")
	res, outs, err = s.RunResult(t.Context(), ResultInput{Server: "fs", Tool: "read", Result: clean})
	if err != nil || res != clean || outs[0].Changed {
		t.Errorf("clean result: res = %+v, outs = %+v, err = %v", res, outs, err)
	}

	// A custom replacement with a group.
	s2 := load(t, rt, spec(t, "redact2", "redact", result, map[string]string{"pattern": `(sk)-[A-Za-z0-9]{20,}`, "replacement": "$1-***"}))
	res, _, err = s2.RunResult(t.Context(), ResultInput{Tool: "t", Result: textResult(secret)})
	if err != nil || textOf(t, res) != "sk-***" {
		t.Errorf("replacement: res = %+v, err = %v", res, err)
	}

	// A match across escaped characters, and an expansion that needs escaping.
	s3 := load(t, rt, spec(t, "redact3", "redact", result, map[string]string{"pattern": `(?s)BEGIN(.*?)END`, "replacement": "[$1]"}))
	res, _, err = s3.RunResult(t.Context(), ResultInput{Tool: "t", Result: textResult("a BEGIN\t\"q\"\nEND b \u00e9 BEGINEND")})
	if err != nil || textOf(t, res) != "a [\t\"q\"\n] b \u00e9 []" {
		t.Errorf("escapes: res = %q, err = %v", textOf(t, res), err)
	}
}

func TestExampleTruncate(t *testing.T) {
	rt := newRuntime(t, Options{})
	s := load(t, rt, spec(t, "truncate", "truncate", result, map[string]string{"max_bytes": "10"}))
	in := &mcp.CallToolResult{
		Content: []mcp.Content{
			&mcp.TextContent{Text: "abcdefgh"},                        // 8 bytes: kept
			&mcp.ImageContent{Data: []byte{1}, MIMEType: "image/png"}, // kept
			&mcp.TextContent{Text: "éééé"},                            // 8 bytes: cut after 2, at a rune boundary
			&mcp.TextContent{Text: "dropped"},                         // 7 bytes: dropped
		},
		StructuredContent: map[string]any{"long": strings.Repeat("x", 100)},
	}
	res, outs, err := s.RunResult(t.Context(), ResultInput{Tool: "t", Result: in})
	if err != nil {
		t.Fatal(err)
	}
	if !outs[0].Changed || len(res.Content) != 3 {
		t.Fatalf("outcomes = %+v, content = %d items", outs, len(res.Content))
	}
	cut := res.Content[2].(*mcp.TextContent).Text
	if want := "é… [truncated 13 bytes]"; cut != want {
		t.Errorf("cut item = %q, want %q", cut, want)
	}
	if !utf8.ValidString(cut) {
		t.Error("cut item is not valid UTF-8")
	}
	if res.StructuredContent == nil {
		t.Error("structuredContent dropped")
	}
	// Within the limit: unchanged.
	short := textResult("short")
	if res, outs, err := s.RunResult(t.Context(), ResultInput{Tool: "t", Result: short}); err != nil || res != short || outs[0].Changed {
		t.Errorf("short result: %+v %+v %v", res, outs, err)
	}
}

func TestExampleAppGuard(t *testing.T) {
	rt := newRuntime(t, Options{})
	s := load(t, rt, spec(t, "guard", "app-guard", display, map[string]string{"allow": `["https://cdn.example.com","wss://live.example.com"]`}))
	in := DisplayInput{
		Server: "srv", Tool: "t", Result: textResult("x"),
		Display: Display{
			Type: "mcp_app", ResourceURI: "ui://app", HTML: "<p>hi</p>", FallbackText: "x",
			CSP: &CSP{
				ConnectDomains:  []string{"https://api.example.com", "wss://live.example.com"},
				ResourceDomains: []string{"https://CDN.example.com"},
				FrameDomains:    []string{"https://evil.example"},
				BaseURIDomains:  []string{},
			},
			Permissions: map[string]any{"camera": map[string]any{}},
		},
	}
	d, outs, err := s.RunDisplay(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	want := in.Display
	want.CSP = &CSP{
		ConnectDomains:  []string{"wss://live.example.com"},
		ResourceDomains: []string{"https://CDN.example.com"},
		FrameDomains:    []string{},
		BaseURIDomains:  []string{},
	}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("display (-want +got):\n%s", diff)
	}
	if !outs[0].Changed {
		t.Errorf("outcomes = %+v", outs)
	}
	// Already within the list: unchanged.
	in.Display.CSP = &CSP{ConnectDomains: []string{"https://cdn.example.com"}}
	if d, outs, err := s.RunDisplay(t.Context(), in); err != nil || outs[0].Changed || d.CSP.ConnectDomains[0] != "https://cdn.example.com" {
		t.Errorf("allowed display: %+v %+v %v", d, outs, err)
	}
}

func TestExampleIdentityAndChain(t *testing.T) {
	rt := newRuntime(t, Options{})
	s := load(t, rt,
		spec(t, "identity", "identity", result, nil),
		spec(t, "redact", "redact", result, map[string]string{"pattern": `sk-[A-Za-z0-9]{20,}`}),
		spec(t, "truncate", "truncate", result, map[string]string{"max_bytes": "12"}),
	)
	res, outs, err := s.RunResult(t.Context(), ResultInput{Tool: "t", Result: textResult(secret + " and more")})
	if err != nil {
		t.Fatal(err)
	}
	// redact runs first, so truncate cuts the redacted text.
	if got, want := textOf(t, res), "[REDACTED] a… [truncated 7 bytes]"; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
	var changed []bool
	for _, o := range outs {
		changed = append(changed, o.Changed)
	}
	if diff := cmp.Diff([]bool{false, true, true}, changed); diff != "" {
		t.Errorf("changed (-want +got):\n%s", diff)
	}
}

// TestCompilationCacheOnDisk loads the same plugin in two runtimes sharing a
// cache directory: the second compiles nothing (no new cache file) and is
// faster (logged, not asserted).
func TestCompilationCacheOnDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	sp := spec(t, "redact", "redact", result, map[string]string{"pattern": "x"})

	loadOnce := func() (time.Duration, map[string]time.Time) {
		rt := newRuntime(t, Options{CacheDir: dir})
		start := time.Now()
		s := load(t, rt, sp)
		took := time.Since(start)
		s.Close()
		if err := rt.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		files := map[string]time.Time{}
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				fi, _ := d.Info()
				files[p] = fi.ModTime()
			}
			return nil
		})
		return took, files
	}
	cold, filesCold := loadOnce()
	warm, filesWarm := loadOnce()
	t.Logf("load with compile: cold cache %v, warm disk cache %v", cold, warm)
	if len(filesCold) == 0 {
		t.Fatal("nothing was written to the cache directory")
	}
	if diff := cmp.Diff(filesCold, filesWarm); diff != "" {
		t.Errorf("the second load wrote to the cache (-first +second):\n%s", diff)
	}
}

func TestCacheDirPermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	rt, err := NewRuntime(Options{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	rt.Close(t.Context())
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("cache dir mode = %v, %v; want 0700", fi.Mode().Perm(), err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := NewRuntime(Options{CacheDir: dir}); err == nil || !strings.Contains(err.Error(), "writable by group or others") {
		t.Errorf("err = %v", err)
	}
}

// TestExamplesModule runs the unit tests of the examples module, which the
// main module's `go test ./...` does not reach (it is a module of its own).
func TestExamplesModule(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test in examples/plugins")
	}
	cmd := exec.Command(testbin.GoCommand(t), "test", "./internal/...")
	cmd.Dir = "../examples/plugins"
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// TestDisplayOfALargeApp: a display plugin sees and passes on an App as
// large as the host serves (the official PDF App is 4.3 MB), its html
// encoded without HTML escapes; one over MaxHTMLBytes is refused with the
// limit named.
func TestDisplayOfALargeApp(t *testing.T) {
	rt := newRuntime(t, Options{})
	s := load(t, rt, spec(t, "guard", "app-guard", display, map[string]string{"allow": `["https://cdn.example.com"]`}))
	html := "<!doctype html><script>" + strings.Repeat("if (a < b && c > d) { x = '<p>'; }\n", 5<<20/36) + "</script>"
	in := DisplayInput{
		Server: "srv", Tool: "t", Result: textResult("x"),
		Display: Display{
			Type: "mcp_app", ResourceURI: "ui://pdf", HTML: html, FallbackText: "x",
			CSP: &CSP{ConnectDomains: []string{"https://api.example.com", "https://cdn.example.com"}},
		},
	}
	d, outs, err := s.RunDisplay(t.Context(), in)
	if err != nil {
		t.Fatalf("a %d-byte App: %v (%+v)", len(html), err, outs)
	}
	if d.HTML != html || !outs[0].Changed || !slices.Equal(d.CSP.ConnectDomains, []string{"https://cdn.example.com"}) {
		t.Errorf("the App's html kept: %v; outcomes %+v; CSP %+v", d.HTML == html, outs, d.CSP)
	}
	enc, err := encodeDisplay(in.Display)
	if err != nil || len(enc) > len(html)+strings.Count(html, "\n")+1024 {
		t.Errorf("the display record is %d bytes for %d of html (%v): HTML escapes?", len(enc), len(html), err)
	}

	out := []byte(`{"display":{"type":"mcp_app","resourceUri":"ui://pdf","html":"` + strings.Repeat("x", MaxHTMLBytes+1) + `"}}`)
	if _, _, err := ValidateDisplayOutput(out, in.Display, nil); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("over the %d-byte limit", MaxHTMLBytes)) {
		t.Errorf("html over MaxHTMLBytes: %v", err)
	}
}
