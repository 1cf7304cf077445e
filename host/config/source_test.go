package config

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// TestForExpressionsRefused: for expressions and %{for} directives are
// refused before anything is evaluated, so nested ones cannot take the
// time and memory they would multiply to.
func TestForExpressionsRefused(t *testing.T) {
	nested := "[for a in [1,2,3,4,5,6,7,8,9,10]: " +
		strings.Repeat("[for a in [1,2,3,4,5,6,7,8,9,10]: ", 7) + "a" + strings.Repeat("]", 8)
	for _, tc := range []struct{ name, src string }{
		{"tuple", `server "a" {
  command = "a"
  args    = [for x in ["a", "b"]: upper(x)]
}`},
		{"object", `server "a" {
  command = "a"
  env     = {for k in ["A"]: k => "1"}
}`},
		{"template directive", `log_level = "%{for x in ["i", "n"]}${x}%{endfor}fo"`},
		{"eight nested over ten elements", "server \"a\" {\n  command = \"a\"\n  args = " + nested + "\n}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, diags := Parse([]byte(tc.src), "f.hcl", Options{})
			if !diags.HasErrors() || diags[0].Summary != "For expressions are not supported" || diags[0].Subject == nil {
				t.Fatalf("diagnostics %v", diags)
			}
			if d := time.Since(start); d > time.Minute {
				t.Errorf("refusing took %s", d) // a hang guard, not a timing assertion
			}
		})
	}
}

// TestConfigFileBounds: a configuration file over MaxConfigSize, a
// directory and a device are refused with a reason, without reading them
// whole; a pipe (process substitution) is read.
func TestConfigFileBounds(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.hcl")
	if err := os.WriteFile(big, []byte(strings.Repeat("# comment\n", MaxConfigSize/10+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, want string }{
		{"too large", big, "more than the 4194304 bytes"},
		{"directory", dir, "it is a directory"},
		{"device", "/dev/zero", "not a file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, diags := LoadFile(tc.path, Options{})
			if len(diags) != 1 || diags[0].Summary != "Cannot read configuration file" || !strings.Contains(diags[0].Detail, tc.want) {
				t.Fatalf("diagnostics %v, want one naming %q", diags, tc.want)
			}
		})
	}
	t.Run("fs too large", func(t *testing.T) {
		fsys := fstest.MapFS{"c.hcl": {Data: make([]byte, MaxConfigSize+1)}}
		_, diags := Load(fsys, "c.hcl", Options{})
		if len(diags) != 1 || !strings.Contains(diags[0].Detail, "more than the") {
			t.Fatalf("diagnostics %v", diags)
		}
	})
	t.Run("pipe", func(t *testing.T) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		go func() {
			w.WriteString(`log_level = "debug"` + "\n")
			w.Close()
		}()
		cfg, diags := LoadFile("/dev/fd/"+strconv.Itoa(int(r.Fd())), Options{BaseDir: dir})
		if diags.HasErrors() {
			t.Fatalf("diagnostics %v", diags)
		}
		if cfg.LogLevel.String() != "DEBUG" {
			t.Errorf("log level %v", cfg.LogLevel)
		}
	})
}
