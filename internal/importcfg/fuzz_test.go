package importcfg

import (
	"bytes"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzImportJSON feeds untrusted bytes to the JSON parsers of every JSON
// format. Properties: an error is an *importPosError inside the file; an
// accepted file gives output that config loads, with the same server names
// in the same order, and literal commands and args read back unchanged.
// Seeded with every JSON sample under testdata/import, in every format,
// and testdata/fuzz/FuzzImportJSON.
func FuzzImportJSON(f *testing.F) {
	formats := []string{"claude", "claude-code", "cursor", "vscode", "windsurf"}
	_ = filepath.WalkDir(filepath.Join("testdata", "import"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".json") {
			data, err := ReadFile(path)
			if err == nil {
				for i := range formats {
					f.Add(data, uint8(i))
				}
			}
		}
		return nil
	})
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		checkImportFuzz(t, FormatNamed(formats[int(which)%len(formats)]), data)
	})
}

// FuzzImportTOML is FuzzImportJSON for Codex's config.toml.
func FuzzImportTOML(f *testing.F) {
	for _, p := range []string{"codex/config.toml", "broken/config.toml"} {
		if data, err := ReadFile(filepath.Join("testdata", "import", p)); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkImportFuzz(t, FormatNamed("codex"), data)
	})
}

func checkImportFuzz(t *testing.T, format *Format, data []byte) {
	im := New(Options{Home: filepath.FromSlash("/home/u"), Cwd: filepath.FromSlash("/work")})
	source := Source{
		Path: filepath.FromSlash("/nonexistent/app/.vscode/mcp.json"), Display: "fuzz", Format: format,
		Project: filepath.FromSlash("/nonexistent/app"),
	}
	if _, err := im.Parse(source, data); err != nil {
		var pe *importPosError
		if !errors.As(err, &pe) {
			t.Fatalf("error of type %T: %v", err, err)
		}
		if pe.Line < 0 || pe.Line > bytes.Count(data, []byte("\n"))+1 || pe.Line > 0 && pe.Col < 1 {
			t.Fatalf("error at %d:%d, outside the file: %v", pe.Line, pe.Col, err)
		}
		return
	}
	servers := im.servers()
	for _, l := range im.Notes() {
		if strings.ContainsAny(l, "\n\r\x1b") {
			t.Fatalf("a report line holds a control character: %q", l)
		}
	}
	if len(servers) == 0 {
		return
	}
	src := renderImport(im.files, servers)
	cfg, diags := Validate(src, "out.hcl")
	if diags.HasErrors() {
		t.Fatalf("the output does not load: %v\n%s", diags, src)
	}
	if len(cfg.Servers) != len(servers) {
		t.Fatalf("%d servers load, %d written\n%s", len(cfg.Servers), len(servers), src)
	}
	for i, s := range servers {
		got := cfg.Servers[i]
		if got.Name != s.Name {
			t.Fatalf("server %d is %q, written as %q", i, got.Name, s.Name)
		}
		if s.Remote {
			continue
		}
		if !s.Command.hasRefs() && got.Command != s.Command.literal() {
			t.Fatalf("server %q: command %q reads back as %q\n%s", s.Name, s.Command.literal(), got.Command, src)
		}
		for j, a := range s.Args {
			if !a.hasRefs() && got.Args[j] != a.literal() {
				t.Fatalf("server %q: args[%d] %q reads back as %q\n%s", s.Name, j, a.literal(), got.Args[j], src)
			}
		}
	}
}
