package importcfg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestImportTranslate(t *testing.T) {
	project := filepath.FromSlash("/work/app")
	tests := []struct {
		format  string
		project string
		in      string
		want    tmpl
		needs   []string
		warns   int
	}{
		{format: "claude-code", in: "${API_KEY}", want: refTmpl("API_KEY"), needs: []string{"API_KEY"}},
		{format: "claude-code", in: "Bearer ${API_KEY}", want: tmpl{{Lit: "Bearer "}, {Ref: &envRef{Name: "API_KEY"}}}, needs: []string{"API_KEY"}},
		{format: "claude-code", in: "${BASE:-https://x.example}/mcp", want: tmpl{{Ref: &envRef{Name: "BASE", Default: ptr("https://x.example")}}, {Lit: "/mcp"}}, needs: []string{"BASE"}},
		{format: "claude-code", in: "${BASE:-}", want: tmpl{{Ref: &envRef{Name: "BASE", Default: ptr("")}}}, needs: []string{"BASE"}},
		{format: "claude-code", in: "$HOME and ${1BAD}", want: litTmpl("$HOME and ${1BAD}"), warns: 1},
		{format: "claude-code", in: "${UNCLOSED", want: litTmpl("${UNCLOSED"), warns: 1},
		{format: "claude", in: "${API_KEY}", want: litTmpl("${API_KEY}"), warns: 1},
		{format: "codex", in: "plain", want: litTmpl("plain")},
		{format: "cursor", in: "${env:TOKEN}", want: refTmpl("TOKEN"), needs: []string{"TOKEN"}},
		{format: "cursor", in: "${userHome}/.cache", want: tmpl{{Ref: &envRef{Name: "HOME"}}, {Lit: "/.cache"}}},
		{format: "cursor", project: project, in: "${workspaceFolder}/x", want: litTmpl(project + "/x")},
		{format: "cursor", project: project, in: "${workspaceFolderBasename}", want: litTmpl("app")},
		{format: "cursor", in: "${workspaceFolder}/x", want: litTmpl("${workspaceFolder}/x"), warns: 1},
		{format: "cursor", in: "${input:key}", want: litTmpl("${input:key}"), warns: 1},
		{format: "vscode", in: "${input:api-key}", want: refTmpl("API_KEY"), needs: []string{"API_KEY"}},
		{format: "vscode", in: "${input:2fa}", want: refTmpl("INPUT_2FA"), needs: []string{"INPUT_2FA"}},
		{format: "vscode", in: "${config:editor.fontSize}", want: litTmpl("${config:editor.fontSize}"), warns: 1},
		{format: "vscode", in: "a${/}b${pathSeparator}c", want: litTmpl("a" + string(filepath.Separator) + "b" + string(filepath.Separator) + "c")},
		{format: "windsurf", in: "${env:AUTH_TOKEN}", want: refTmpl("AUTH_TOKEN"), needs: []string{"AUTH_TOKEN"}},
		{format: "windsurf", in: "${userHome}", want: litTmpl("${userHome}"), warns: 1},
	}
	c := newImportConverter(noEnv, noFile, "", "")
	for _, tt := range tests {
		t.Run(tt.format+" "+tt.in, func(t *testing.T) {
			e := &importEntry{File: &importFile{Source: Source{Format: FormatNamed(tt.format), Project: tt.project}, Inputs: map[string]vscodeInput{}}}
			got, needs, warns := c.translate(e, tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("translate (-want +got):\n%s", diff)
			}
			var names []string
			for _, n := range needs {
				names = append(names, n.Name)
			}
			if diff := cmp.Diff(tt.needs, names); diff != "" {
				t.Errorf("needs (-want +got):\n%s", diff)
			}
			if len(warns) != tt.warns {
				t.Errorf("%d warnings %q, want %d", len(warns), warns, tt.warns)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func noEnv(string) (string, bool) { return "", false }

func noFile(string) ([]byte, error) { return nil, errors.New("no files in this test") }

func TestSanitizeServerName(t *testing.T) {
	tests := map[string]string{
		"brave.search":                        "brave_search",
		"Git Hub":                             "Git_Hub",
		"@modelcontextprotocol/server-github": "modelcontextprotocol_server-github",
		"1password":                           "mcp-1password",
		"":                                    "server",
		"...":                                 "server",
		"日本語":                                 "server",
		"café":                                "caf",
		strings.Repeat("a", 70):               strings.Repeat("a", 64),
	}
	for in, want := range tests {
		got := sanitizeServerName(in)
		if got != want {
			t.Errorf("sanitizeServerName(%q) = %q, want %q", in, got, want)
		}
		if !importNameRE.MatchString(got) {
			t.Errorf("sanitizeServerName(%q) = %q, which config rejects", in, got)
		}
	}
}

func TestSecretHeader(t *testing.T) {
	tests := []struct {
		name, value string
		secret      bool
	}{
		{"Authorization", "Bearer abc", true},
		{"X-API-Key", "k", true},
		{"X-Goog-Api-Key", "k", true},
		{"Private-Token", "glpat-x", true},
		{"Cookie", "a=b", true},
		{"X-Custom", "Bearer 0123456789", true},
		{"X-Custom", "f3a9c81b07d24e6fa5c3b9e1d2047f86", true},
		{"Accept", "application/json", false},
		{"Stripe-Version", "2024-06-20", false},
		{"X-Callback", "https://example.com/callback/0123456789abcdef", false},
		{"User-Agent", "Mozilla/5.0 (compatible; bot)", false},
	}
	for _, tt := range tests {
		if got := secretHeader(tt.name, tt.value); got != tt.secret {
			t.Errorf("secretHeader(%q, %q) = %v, want %v", tt.name, tt.value, got, tt.secret)
		}
	}
}

// TestImportLiteralsRoundTrip writes values that HCL treats specially and
// checks that config reads back exactly the text of the source.
func TestImportLiteralsRoundTrip(t *testing.T) {
	values := []string{
		`plain`, `${not.a.template}`, `%{ if x }y%{ endif }`, `$`, `$$`, `50%`, `a"b`, `back\slash`, "tab\there",
		"new\nline", "\x00nul\x7f", "bidi\u202e", "\uFEFFbom", `${`, `$${`, `}`, "emoji 🦊",
	}
	s := &importServer{Name: "a", Command: litTmpl("cmd")}
	for _, v := range values {
		s.Args = append(s.Args, litTmpl(v))
	}
	// Literal dollars just before a reference.
	s.Args = append(s.Args, tmpl{{Lit: "x$"}, {Ref: &envRef{Name: "V"}}}, tmpl{{Lit: "$$"}, {Ref: &envRef{Name: "V"}}, {Lit: "$"}})
	want := append(slices.Clone(values), "x$"+urlPlaceholder, "$$"+urlPlaceholder+"$")
	s.Entry = &importEntry{File: &importFile{Source: Source{Display: "x", Format: FormatNamed("cursor")}}}
	src := renderImport(nil, []*importServer{s})
	cfg, diags := Validate(src, "out.hcl")
	if diags.HasErrors() {
		t.Fatalf("does not load: %v\n%s", diags, src)
	}
	if diff := cmp.Diff(want, cfg.Servers[0].Args); diff != "" {
		t.Errorf("args (-want +got):\n%s\n%s", diff, src)
	}
}

func TestStripJSONC(t *testing.T) {
	in := "{\n  // a comment, with \"quotes\"\n  \"a\": \"// not a comment\", /* block\n comment */ \"b\": [1, 2,],\n}\n"
	out := stripJSONC([]byte(in))
	if len(out) != len(in) || bytes.Count(out, []byte("\n")) != strings.Count(in, "\n") {
		t.Fatalf("offsets moved:\n%s", out)
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("not JSON after stripping: %v\n%s", err, out)
	}
	if v["a"] != "// not a comment" {
		t.Errorf(`"a" = %q`, v["a"])
	}
}

func TestImportDiscovery(t *testing.T) {
	home := t.TempDir()
	cwd := t.TempDir()
	files := []string{
		filepath.Join(home, ".claude.json"),
		filepath.Join(home, ".cursor", "mcp.json"),
		filepath.Join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json"),
		filepath.Join(home, "xdg", "Code", "User", "mcp.json"),
		filepath.Join(home, "codex-home", "config.toml"),
		filepath.Join(cwd, ".vscode", "mcp.json"),
		filepath.Join(cwd, ".mcp.json"),
	}
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A directory where a file should be is not a config.
	if err := os.MkdirAll(filepath.Join(cwd, ".cursor", "mcp.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_CONFIG_HOME": filepath.Join(home, "xdg"), "CODEX_HOME": filepath.Join(home, "codex-home")}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	found, looked := Discover(home, cwd, lookup, nil)
	var got []string
	for _, f := range found {
		got = append(got, fmt.Sprintf("%s %s %v", f.Format.Name, filepath.ToSlash(f.Display), f.Project != ""))
	}
	want := []string{
		"claude ~/Library/Application Support/Claude/claude_desktop_config.json false",
		"claude-code ~/.claude.json false",
		"claude-code .mcp.json false",
		"cursor ~/.cursor/mcp.json false",
		"vscode ~/xdg/Code/User/mcp.json false",
		"vscode .vscode/mcp.json true",
		"codex ~/codex-home/config.toml false",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("found (-want +got):\n%s", diff)
	}
	if len(looked) != 12 {
		t.Errorf("looked in %d places, want 12: %q", len(looked), looked)
	}
	found, _ = Discover(home, cwd, lookup, FormatNamed("cursor"))
	if len(found) != 1 || found[0].Format.Name != "cursor" {
		t.Errorf("-from cursor found %v", found)
	}
}

// TestFieldReaders checks that every kind of field a format names has a
// reader, so that adding a kind without one fails here, not on a user's
// file.
func TestFieldReaders(t *testing.T) {
	for _, f := range importFormats {
		for name, kind := range f.fields {
			if int(kind) >= len(fieldReaders) || fieldReaders[kind] == nil {
				t.Errorf("%s: field %q is of kind %d, which has no reader", f.Name, name, kind)
			}
		}
	}
}

// TestNeedsOnce checks that a variable two servers need is listed once,
// also when its name has to be escaped for the terminal.
func TestNeedsOnce(t *testing.T) {
	im := New(Options{})
	src := `{"mcpServers": {
		"a": {"command": "x", "env": {"K\u001b": "1", "TOKEN": "2"}},
		"b": {"command": "y", "env": {"K\u001b": "3", "TOKEN": "4"}}}}`
	if _, err := im.Parse(Source{Path: "c.json", Display: "c.json", Format: FormatNamed("claude")}, []byte(src)); err != nil {
		t.Fatal(err)
	}
	res, diags := im.Convert("out.hcl")
	if diags.HasErrors() {
		t.Fatalf("the output does not load: %v", diags)
	}
	if diff := cmp.Diff([]string{`K\x1b`, "TOKEN"}, res.Needs); diff != "" {
		t.Errorf("needs (-want +got):\n%s", diff)
	}
}
