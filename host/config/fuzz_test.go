package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hashicorp/hcl/v2"
)

// FuzzLoad loads arbitrary source. Properties: no panic (and no stack
// overflow), a Config with the file's entry in Files, every subject inside
// the loaded file, a syntax tree no deeper than maxTreeDepth unless the
// load stopped with "Nesting too deep", and, for inputs up to 64 KiB, no
// more tokens from HCL's lexer than 4×checkTokens' count + 2, the margin
// MaxConfigTokens relies on.
//
// An input over 64 KiB is loaded only when checkTokens refuses it: the
// seed past the token bound stays cheap, and the fuzzer's cuts of it, which
// would load a quarter of a million tokens (most of a second each), are
// skipped instead of taking most of its time. TestTokenBound loads one.
func FuzzLoad(f *testing.F) {
	for _, pattern := range []string{"testdata/valid/*.hcl", "testdata/invalid/*.hcl", "../../examples/hcl/*.hcl"} {
		for _, path := range glob(f, pattern) {
			src, err := os.ReadFile(path)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(src)
		}
	}
	// Every way to nest, just within the bound and past it.
	for _, in := range deepInputs {
		f.Add([]byte(in.gen(MaxNestingDepth / 2)))
		f.Add([]byte(in.gen(MaxNestingDepth + 1)))
	}
	// The shape of issue 30 row 17 just past the token bound, and more
	f.Add([]byte("log_level = <<EOT\n" + strings.Repeat(`${"a"}`, MaxConfigTokens/6+1) + "\nEOT\n"))
	// calls of env() than MaxFunctionBytes allows (MCPHOST_FUZZ_BIG is a
	// quarter of a megabyte here: env() returns it without a copy, so the
	// fuzzer's changes of this seed stay cheap; TestFunctionBudget reads
	// files).
	f.Add([]byte("server \"s\" {\n  command = \"x\"\n  args = [" + strings.Repeat(`env("MCPHOST_FUZZ_BIG"), `, MaxFunctionBytes/(MaxFileSize/4)+1) + "]\n}\n"))
	// A full sandbox block, at the top level and in a stdio and a wasm
	// server, with grants that exist on any Linux machine.
	f.Add([]byte(`sandbox {
  mode           = "enforce"
  on_unsupported = "warn"
  network        = "none"
  inherit_env    = ["LANG"]
  sandbox_uid    = 65534
}
server "s" {
  command = "x"
  roots   = ["file:///usr/share"]
  sandbox {
    mode        = "off"
    network     = "proxy"
    runtime     = "node"
    read        = ["/usr/share", "~/x", "rel"]
    write       = ["/tmp"]
    allow_hosts = ["api.github.com:443", "*.example.com:443", "[::1]:80"]
    inherit_env = ["TZ"]
    limits {
      open_files = 1024
      memory     = "1GiB"
      pids       = 256
      cpu        = 60
    }
  }
}
server "w" {
  wasm = "secrets/bob.token"
  args = ["-v"]
  sandbox {
    read = ["/usr/share"]
  }
}
principal "p" {
  token = file("secrets/bob.token")
}
`))
	big := strings.Repeat("a", MaxFileSize/4)
	env := exampleEnv()
	const name = "conf/fuzz.hcl"
	opts := Options{LookupEnv: func(k string) (string, bool) {
		if k == "MCPHOST_FUZZ_BIG" {
			return big, true
		}
		return env(k)
	}, Executable: testExecutable, BaseDir: filepath.FromSlash("/base")}
	unsetOpts := opts
	unsetOpts.UnsetEnvUnknown = true
	unsetOpts.LookupEnv = func(k string) (string, bool) {
		if k == "HOME" {
			return testHome, true
		}
		return "", false
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > 64<<10 && checkTokens(src, name) == nil {
			return
		}
		fsys := fstest.MapFS{
			name:                     {Data: src},
			"conf/secrets/bob.token": {Data: []byte("bob-0123456789abcdef")},
			"conf/binary.bin":        {Data: []byte{0xff, 0xfe, 0x00}},
		}
		cfg, diags := Load(fsys, name, opts)
		if cfg == nil || cfg.Files == nil {
			t.Fatal("Load returned a nil Config or nil Files")
		}
		if cfg.Filename != name {
			t.Errorf("Filename = %q", cfg.Filename)
		}
		tooDeep := false
		for _, d := range diags {
			tooDeep = tooDeep || d.Summary == "Nesting too deep"
			if d.Summary == "" {
				t.Errorf("diagnostic without summary: %#v", d)
			}
			r := d.Subject
			if r == nil {
				continue
			}
			if r.Filename != name {
				t.Errorf("subject in %q, want %q: %s", r.Filename, name, d.Error())
			}
			if r.Start.Byte < 0 || r.Start.Byte > r.End.Byte || r.End.Byte > len(src) {
				t.Errorf("subject bytes [%d, %d] outside the source (%d bytes): %s", r.Start.Byte, r.End.Byte, len(src), d.Error())
			}
		}
		if len(src) <= 64<<10 {
			checkTokenBound(t, "the input", src)
		}
		// The same file on a machine without its secrets, as validate
		// loads it: no env() call is an error, and each that found its
		// variable unset is listed with a range inside the file.
		cfg, diags = Load(fsys, name, unsetOpts)
		for _, d := range diags {
			if d.Severity == hcl.DiagError && d.Summary == "Environment variable not set" {
				t.Errorf("an unset variable is an error with UnsetEnvUnknown: %s", d.Error())
			}
		}
		for _, u := range cfg.Unset {
			if r := u.Range; r.Filename != name || r.Start.Byte < 0 || r.Start.Byte > r.End.Byte || r.End.Byte > len(src) {
				t.Errorf("unset %s: range outside the source (%d bytes)", u, len(src))
			}
		}
		if !tooDeep {
			if depth := treeDepth(cfg.Files[name]); depth > maxTreeDepth {
				t.Errorf("the syntax tree is %d deep, more than %d, and the load did not stop with Nesting too deep", depth, maxTreeDepth)
			}
		}
	})
}
