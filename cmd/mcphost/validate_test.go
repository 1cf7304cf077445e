package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestValidateHostileFiles runs `mcphost validate` on files that used to
// crash it, and that a daemon reloading on SIGHUP loads the same way
// (reloadConfig and validate both go through config.LoadFile): each must be
// a configuration error (exit status 2) with the diagnostic on stderr, and
// the output must stay small.
func TestValidateHostileFiles(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		at      string // FILE:LINE:COLUMN of the diagnostic
		summary string
		skip    bool              // no such file here
		files   map[string]string // more files in the directory
		env     map[string]string
		hidden  []string // must not appear in the output
	}{
		{
			name:    "200 KB of nested parentheses",
			src:     "log_level = " + strings.Repeat("(", 100_000) + `"info"` + strings.Repeat(")", 100_000) + "\n",
			at:      "hostile.hcl:1:269",
			summary: "Nesting too deep",
		},
		{
			name:    "file() of /dev/zero",
			src:     "server \"a\" {\n  command = \"x\"\n  args    = [file(\"/dev/zero\")]\n}\n",
			at:      "hostile.hcl:3:14",
			summary: "Not a regular file",
			skip:    runtime.GOOS == "windows",
		},
		{
			name:    "a secret read with env() or file() in a value diagnostic",
			src:     "server \"a\" {\n  command           = \"x\"\n  call_timeout      = env(\"MCPHOST_TEST_SECRET\")\n  discovery_timeout = file(\"secret.txt\")\n}\n",
			files:   map[string]string{"secret.txt": "root:s3cret-from-file:19000:0:99999:7:::\n"},
			env:     map[string]string{"MCPHOST_TEST_SECRET": "s3cret-from-env"},
			at:      "hostile.hcl:3:23",
			summary: "Invalid duration",
			hidden:  []string{"s3cret-from-env", "s3cret-from-file"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.skip {
				t.Skip("not on " + runtime.GOOS)
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "hostile.hcl")
			if err := os.WriteFile(path, []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			for name, data := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			t.Chdir(dir)
			for _, args := range [][]string{{"validate", "hostile.hcl"}, {"validate", "-json", "hostile.hcl"}} {
				var stdout, stderr bytes.Buffer
				code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
				if code != exitUsage {
					t.Errorf("%v: exit status %d, want %d; stderr:\n%.2000s", args, code, exitUsage, stderr.String())
				}
				if args[1] == "-json" {
					if want := `"summary": "` + tt.summary + `"`; !strings.Contains(stdout.String(), want) {
						t.Errorf("%v: stdout does not contain %s:\n%.2000s", args, want, stdout.String())
					}
				} else if want := tt.at + ": error: " + tt.summary + "\n"; !strings.Contains(stderr.String(), want) {
					t.Errorf("%v: stderr does not contain %q:\n%.2000s", args, want, stderr.String())
				}
				for _, h := range tt.hidden {
					if strings.Contains(stdout.String()+stderr.String(), h) {
						t.Errorf("%v: %q appears in the output:\n%s%s", args, h, stdout.String(), stderr.String())
					}
				}
				if len(stdout.String())+len(stderr.String()) > 4096 {
					t.Errorf("%v: %d bytes of output, want a few lines", args, stdout.Len()+stderr.Len())
				}
			}
		})
	}
}
