package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/internal/importcfg"
)

// importTestdata holds the sample files of every format and the golden
// files; they live with the importer, in internal/importcfg.
var importTestdata = filepath.Join("..", "..", "internal", "importcfg", "testdata", "import")

// TestImport runs `mcphost import` on the sample files of every format
// under importTestdata and compares stdout and stderr with the golden
// files in its golden directory (regenerate with -update). Every output
// must load with config.Parse, and no secret of the samples may reach it.
func TestImport(t *testing.T) {
	tests := []struct {
		name   string
		args   []string // after "import"; paths relative to importTestdata
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
	testdata, err := filepath.Abs(importTestdata)
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
			if _, diags := importcfg.Validate(stdout.Bytes(), "out.hcl"); diags.HasErrors() {
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
