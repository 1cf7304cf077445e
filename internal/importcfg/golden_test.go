package importcfg

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/host/config"
)

var update = flag.Bool("update", false, "rewrite the golden files of TestConvertGolden")

// TestConvertGolden converts the samples under testdata/import as
// `mcphost import FILE...` does and compares the HCL with the golden
// files in testdata/import/golden (regenerate with -update). The
// command's stderr around the notes is its own: cmd/mcphost's TestImport
// checks it against the .stderr files beside these.
func TestConvertGolden(t *testing.T) {
	tests := []struct {
		name  string
		from  string
		paths []string // relative to testdata/import
	}{
		{name: "claude", paths: []string{"claude/claude_desktop_config.json"}},
		{name: "claude-code-project", paths: []string{"claude-code/project/.mcp.json"}},
		{name: "claude-code-user", paths: []string{"claude-code/home/.claude.json"}},
		{name: "cursor", paths: []string{"cursor/project/.cursor/mcp.json"}},
		{name: "vscode", paths: []string{"vscode/project/.vscode/mcp.json"}},
		{name: "windsurf", paths: []string{"windsurf/mcp_config.json"}},
		{name: "codex", paths: []string{"codex/config.toml"}},
		{name: "duplicates", paths: []string{"claude/claude_desktop_config.json", "windsurf/mcp_config.json", "dup/cursor/.cursor/mcp.json"}},
		{name: "detected", paths: []string{"misc/servers.json", "misc/team-mcp.json"}},
		{name: "from", from: "cursor", paths: []string{"misc/team-mcp.json"}},
	}
	testdata, err := filepath.Abs(filepath.Join("testdata", "import"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(testdata)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var format *Format
			if tt.from != "" {
				format = FormatNamed(tt.from)
			}
			res := convertSamples(t, format, tt.paths...)
			got := bytes.ReplaceAll(res.HCL, []byte(testdata), []byte("$TESTDATA"))
			path := filepath.Join("golden", tt.name+".hcl")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s differs (-want +got):\n%s", path, diff)
			}
		})
	}
}

// convertSamples imports the files at paths (of format, or told from
// each file) into one config, as `mcphost import` does with FILE
// arguments, and fails the test if any cannot be read or the output does
// not load.
func convertSamples(t *testing.T, format *Format, paths ...string) *Result {
	t.Helper()
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	im := New(Options{ReadFile: ReadFile, Home: t.TempDir(), Cwd: cwd})
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := im.Parse(Named(p, format), data); err != nil {
			t.Fatal(err)
		}
	}
	res, diags := im.Convert("out.hcl")
	if diags.HasErrors() {
		t.Fatalf("the output does not load: %v\n%s", diags, res.HCL)
	}
	if res.Servers == 0 {
		t.Fatal("no servers")
	}
	return res
}

// TestImportLoadsWithVariables checks what the golden files only show:
// the output, loaded with the variables set, gives the servers the
// sources describe.
func TestImportLoadsWithVariables(t *testing.T) {
	t.Chdir(filepath.Join("testdata", "import"))
	res := convertSamples(t, nil, "claude-code/project/.mcp.json", "vscode/project/.vscode/mcp.json")
	env := map[string]string{
		"API_KEY": "k-1", "PROJECT_ROOT": "/src/tool", "DATABASE_URL": "postgres://db", "STRIPE_AUTHORIZATION": "sk-2",
		"PERPLEXITY_API_KEY": "pk-3", "GITHUB_TOKEN": "gh-4", "FETCH_USER_AGENT": "ua", "FETCH_PROXY": "http://proxy",
		"HOME": "/home/alice",
	}
	cfg, diags := config.Parse(res.HCL, "out.hcl", config.Options{LookupEnv: func(k string) (string, bool) {
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
