package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// sandboxTree makes the files the sandbox tests grant and protect, and
// returns its root with symlinks resolved:
//
//	ROOT/conf/mcphost.hcl       the configuration (written by loadSandbox)
//	ROOT/state/mcphost/sub      the data directory (XDG_STATE_HOME=ROOT/state)
//	ROOT/state/mcphost-old      beside it, not inside it
//	ROOT/home/me/notes          HOME and a directory in it
//	ROOT/srv/ro/file.txt        things to grant
//	ROOT/srv/rw
//	ROOT/srv/mod.wasm           a (fake) WebAssembly module
//	ROOT/secrets/token.txt      read with file() by some tests
//	ROOT/link-ro -> srv/ro, ROOT/link-data -> state/mcphost,
//	ROOT/link-mod.wasm -> srv/mod.wasm
func sandboxTree(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"conf", "state/mcphost/sub", "state/mcphost-old", "home/me/notes", "srv/ro", "srv/rw", "secrets"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range map[string]string{
		"srv/ro/file.txt":   "granted",
		"srv/mod.wasm":      "\x00asm\x01\x00\x00\x00",
		"secrets/token.txt": "p-0123456789abcdef",
	} {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(name)), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"link-ro": "srv/ro", "link-data": "state/mcphost", "link-mod.wasm": "srv/mod.wasm"} {
		if err := os.Symlink(filepath.FromSlash(target), filepath.Join(root, link)); err != nil {
			t.Skipf("no symlinks here: %v", err)
		}
	}
	return root
}

// sandboxEnv is the environment of a load in root's tree.
func sandboxEnv(root string) func(string) (string, bool) {
	return testEnv(
		"HOME", filepath.Join(root, "home", "me"),
		"XDG_STATE_HOME", filepath.Join(root, "state"),
		"TOKEN_FILE", "../secrets/token.txt",
	)
}

// loadSandbox writes src, with ROOT replaced by root, to
// ROOT/conf/mcphost.hcl and loads it as the daemon does.
func loadSandbox(t *testing.T, root, src string) (*Config, hcl.Diagnostics) {
	t.Helper()
	path := filepath.Join(root, "conf", "mcphost.hcl")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(src, "ROOT", filepath.ToSlash(root))), 0o644); err != nil {
		t.Fatal(err)
	}
	return LoadFile(path, Options{LookupEnv: sandboxEnv(root), Executable: testExecutable})
}

// wantDiag is one expected diagnostic: its summary, phrases its detail
// has (with ROOT replaced) and has not, and where its subject starts.
type wantDiag struct {
	summary   string
	detail    string
	excludes  string
	line, col int
}

// checkDiags compares diags, in their (sorted) order, with want.
func checkDiags(t *testing.T, root string, diags hcl.Diagnostics, want []wantDiag) {
	t.Helper()
	if len(diags) != len(want) {
		t.Fatalf("got %d diagnostics, want %d:%s", len(diags), len(want), diagText(diags))
	}
	for i, d := range diags {
		w := want[i]
		if d.Summary != w.summary {
			t.Errorf("diagnostic %d: summary %q, want %q: %s", i, d.Summary, w.summary, d.Error())
		}
		if phrase := strings.ReplaceAll(w.detail, "ROOT", root); !strings.Contains(d.Detail, phrase) {
			t.Errorf("diagnostic %d: detail does not say %q: %s", i, phrase, d.Detail)
		}
		if w.excludes != "" && strings.Contains(d.Detail, w.excludes) {
			t.Errorf("diagnostic %d: detail says %q: %s", i, w.excludes, d.Detail)
		}
		if d.Subject == nil {
			t.Errorf("diagnostic %d has no subject: %s", i, d.Error())
			continue
		}
		if got := d.Subject.Start; got.Line != w.line || got.Column != w.col {
			t.Errorf("diagnostic %d: subject at %d:%d, want %d:%d: %s", i, got.Line, got.Column, w.line, w.col, d.Error())
		}
		if filepath.Base(d.Subject.Filename) != "mcphost.hcl" {
			t.Errorf("diagnostic %d: subject in %s", i, d.Subject.Filename)
		}
	}
}
