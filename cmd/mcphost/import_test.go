package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/host/config"
)

// TestImport runs `mcphost import` on the sample files of every format
// under testdata/import and compares stdout and stderr with the golden
// files in testdata/import/golden (regenerate with -update). Every output
// must load with config.Parse, and no secret of the samples may reach it.
func TestImport(t *testing.T) {
	tests := []struct {
		name   string
		args   []string // after "import"; paths relative to testdata/import
		code   int
		hidden []string // values from the samples that must not be copied
	}{
		{
			name:   "claude",
			args:   []string{"claude/claude_desktop_config.json"},
			hidden: []string{"ghp_16C7e42F292c6912E7710c838347Ae178B4a", "BSAm4x2TQ9pLcK7vR1sE3uW8yZ0aB5dF6g"},
		},
		{
			name:   "claude-code-project",
			args:   []string{"claude-code/project/.mcp.json"},
			hidden: []string{"s3cr3t-db-pass", "sk_test_4eC39HqLyjWDarjtT1zdp7dc"},
		},
		{
			name:   "claude-code-user",
			args:   []string{"claude-code/home/.claude.json"},
			hidden: []string{"ctx7sk-2f9c1e7a-4b3d-4e8f-a1c6-9d0b5e7f3a21", "/home/alice/src/blog/.memory.json"},
		},
		{
			name:   "cursor",
			args:   []string{"cursor/project/.cursor/mcp.json"},
			hidden: []string{"dt_8f3a1c9e7b2d4f60a5c1", "eu-west-1", "figma-desktop"},
		},
		{
			name:   "vscode",
			args:   []string{"vscode/project/.vscode/mcp.json"},
			hidden: []string{"proxy.internal", "Mozilla"},
		},
		{
			name:   "windsurf",
			args:   []string{"windsurf/mcp_config.json"},
			hidden: []string{"github_pat_11ABCDEFG0123456789_example", "11434"},
		},
		{
			name:   "codex",
			args:   []string{"codex/config.toml"},
			hidden: []string{"sk-proj-0a1b2c3d4e5f6a7b8c9d", "acme"},
		},
		{
			// The same names in three files: the first keeps each, the
			// others get -2 and -3, and names made valid can collide too.
			name: "duplicates",
			args: []string{"claude/claude_desktop_config.json", "windsurf/mcp_config.json", "dup/cursor/.cursor/mcp.json"},
		},
		{
			// Names that say nothing: the format is told from the contents.
			name:   "detected",
			args:   []string{"misc/servers.json", "misc/team-mcp.json"},
			hidden: []string{"k_9f8e7d6c5b4a3210fedcba98"},
		},
		{
			name: "from",
			args: []string{"-from", "cursor", "misc/team-mcp.json"},
		},
		{
			// MCPHOST_ variables are left out with a warning: no server
			// gets one, and the output would not load with them.
			name:   "reserved",
			args:   []string{"reserved/claude_desktop_config.json", "reserved/config.toml"},
			hidden: []string{"c2VjcmV0LWtleS1vZi1hbm90aGVyLWhvc3Q=", "nt_5e1d0c9b8a7f6e5d4c3b"},
		},
		{
			name: "bad-json",
			args: []string{"broken/claude_desktop_config.json"},
			code: exitUsage,
		},
		{
			name: "bad-toml",
			args: []string{"-from", "codex", "broken/config.toml"},
			code: exitUsage,
		},
		{
			// One bad file stops the import: nothing is written, and every
			// bad file is named.
			name: "bad-and-good",
			args: []string{"claude/claude_desktop_config.json", "broken/claude_desktop_config.json", "broken/config.toml"},
			code: exitUsage,
		},
		{
			name: "unknown-format",
			args: []string{"-from", "emacs", "claude/claude_desktop_config.json"},
			code: exitUsage,
		},
		{
			name: "missing-file",
			args: []string{"nowhere/mcp.json"},
			code: exitUsage,
		},
	}
	testdata, err := filepath.Abs(filepath.Join("testdata", "import"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", t.TempDir())
	t.Chdir(testdata)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"import"}, tt.args...), strings.NewReader(""), &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit status %d, want %d; stderr:\n%s", code, tt.code, stderr.String())
			}
			normal := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte(testdata), []byte("$TESTDATA")) }
			golden(t, filepath.Join("golden", tt.name+".stderr"), normal(stderr.Bytes()))
			if code != exitOK {
				if stdout.Len() > 0 {
					t.Errorf("stdout is not empty after a failure:\n%s", stdout.String())
				}
				return
			}
			golden(t, filepath.Join("golden", tt.name+".hcl"), normal(stdout.Bytes()))
			if _, diags := validateImport(stdout.Bytes(), "out.hcl"); diags.HasErrors() {
				t.Errorf("the output does not load: %v", diags)
			}
			for _, h := range tt.hidden {
				if strings.Contains(stdout.String()+stderr.String(), h) {
					t.Errorf("%q from the sample appears in the output", h)
				}
			}
		})
	}
}

// golden compares got with the file, or rewrites it under -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

// TestImportLoadsWithVariables checks what the golden files only show:
// the output, loaded with the variables set, gives the servers the
// sources describe.
func TestImportLoadsWithVariables(t *testing.T) {
	t.Chdir(filepath.Join("testdata", "import"))
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"import", "claude-code/project/.mcp.json", "vscode/project/.vscode/mcp.json"}, strings.NewReader(""), &stdout, &stderr); code != exitOK {
		t.Fatalf("exit status %d; stderr:\n%s", code, stderr.String())
	}
	env := map[string]string{
		"API_KEY": "k-1", "PROJECT_ROOT": "/src/tool", "DATABASE_URL": "postgres://db", "STRIPE_AUTHORIZATION": "sk-2",
		"PERPLEXITY_API_KEY": "pk-3", "GITHUB_TOKEN": "gh-4", "FETCH_USER_AGENT": "ua", "FETCH_PROXY": "http://proxy",
		"HOME": "/home/alice",
	}
	cfg, diags := config.Parse(stdout.Bytes(), "out.hcl", config.Options{LookupEnv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}})
	if diags.HasErrors() {
		t.Fatalf("the output does not load: %v", diags)
	}
	type server struct {
		Transport, Command, URL string
		Args                    []string
		Env, Headers            map[string]string
	}
	got := map[string]server{}
	for _, s := range cfg.Servers {
		got[s.Name] = server{Transport: s.Transport, Command: s.Command, URL: s.URL, Args: s.Args, Env: s.Env, Headers: s.Headers}
	}
	want := map[string]server{
		"api-server": {Transport: config.TransportSSE, URL: "https://api.example.com/mcp/sse", Headers: map[string]string{"Authorization": "Bearer k-1"}},
		"my-tool": {Transport: config.TransportStdio, Command: "node", Args: []string{"./my-mcp-server.js", "--root", "/src/tool"},
			Env: map[string]string{"DEBUG": "false", "DATABASE_URL": "postgres://db"}},
		"stripe":     {Transport: config.TransportStreamableHTTP, URL: "https://mcp.stripe.com", Headers: map[string]string{"Authorization": "Bearer sk-2", "Stripe-Version": "2024-06-20"}},
		"perplexity": {Transport: config.TransportStdio, Command: "npx", Args: []string{"-y", "server-perplexity-ask"}, Env: map[string]string{"PERPLEXITY_API_KEY": "pk-3"}},
		"github":     {Transport: config.TransportStreamableHTTP, URL: "https://api.githubcopilot.com/mcp/", Headers: map[string]string{"Authorization": "Bearer gh-4"}},
	}
	for name, w := range want {
		if diff := cmp.Diff(w, got[name], cmpEmptyMaps); diff != "" {
			t.Errorf("server %q (-want +got):\n%s", name, diff)
		}
	}
}

var cmpEmptyMaps = cmp.FilterValues(func(a, b map[string]string) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())

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
			e := &importEntry{File: &importFile{Format: importFormatNamed(tt.format), Project: tt.project, Inputs: map[string]vscodeInput{}}}
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
	s.Entry = &importEntry{File: &importFile{Display: "x", Format: importFormatNamed("cursor")}}
	src := renderImport(nil, []*importServer{s})
	cfg, diags := validateImport(src, "out.hcl")
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
	found, looked := discoverImports(home, cwd, lookup, nil)
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
	found, _ = discoverImports(home, cwd, lookup, importFormatNamed("cursor"))
	if len(found) != 1 || found[0].Format.Name != "cursor" {
		t.Errorf("-from cursor found %v", found)
	}
}
