package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestCommandProblem: a stdio server whose command cannot be found here
// has a problem; one that is found, a remote one and a disabled one do not.
func TestCommandProblem(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "server")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	stdio := func(cmd, cwd string, enabled bool) Server {
		return Server{Transport: TransportStdio, Command: cmd, Cwd: cwd, Enabled: enabled}
	}
	tests := []struct {
		name string
		s    Server
		want string
	}{
		{"on PATH", stdio("sh", "", true), ""},
		{"not on PATH", stdio("mcp-server-nonexistent", "", true), `command "mcp-server-nonexistent" is not on the daemon's PATH`},
		{"an executable file", stdio(exe, "", true), ""},
		{"relative to cwd", stdio("./server", dir, true), ""},
		{"not executable", stdio(plain, "", true), `command "` + plain + `" is not an executable file`},
		{"missing file", stdio(filepath.Join(dir, "nope"), "", true), `command "` + filepath.Join(dir, "nope") + `" is not an executable file`},
		{"disabled", stdio("mcp-server-nonexistent", "", false), ""},
		{"remote", Server{Transport: TransportStreamableHTTP, URL: "http://127.0.0.1:1/mcp", Enabled: true}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.CommandProblem("the daemon's PATH"); got != tt.want {
				t.Errorf("CommandProblem = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestCommandWarnings: validate's warnings stand at the `command` value of
// the server whose program is missing, and name the server.
func TestCommandWarnings(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcphost.hcl")
	src := `server "here" {
  command = "sh"
}

server "gone" {
  command = "mcp-server-nonexistent"
}
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := LoadFile(path, Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	warnings := CommandWarnings(cfg)
	if len(warnings) != 1 {
		t.Fatalf("warnings = %v, want one", warnings)
	}
	w := warnings[0]
	if w.Severity != hcl.DiagWarning || !strings.Contains(w.Detail, `Server "gone": command "mcp-server-nonexistent" is not on this machine's PATH`) {
		t.Errorf("warning = %v", w)
	}
	if w.Subject == nil || w.Subject.Start.Line != 6 || w.Subject.Start.Column != 13 {
		t.Errorf("warning's range = %v, want line 6 column 13", w.Subject)
	}
}
