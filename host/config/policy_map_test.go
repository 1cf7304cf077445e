package config

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// TestWhenMapper checks that a byte offset in the evaluated `when` string
// maps to the line and column of the same character in the file, through
// escapes, non-ASCII text and heredocs. The character to find is '@'.
func TestWhenMapper(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		line     int
		col      int
		unmapped bool
	}{
		{name: "plain", src: `w = "abc @ d"`, line: 1, col: 10},
		{name: "escapes", src: `w = "a\"b\\c\n\u00e9 @"`, line: 1, col: 22},
		{name: "non-ASCII", src: `w = "é日本 @"`, line: 1, col: 10},
		{name: "dollar", src: `w = "$${x} @"`, line: 1, col: 12},
		{name: "heredoc", src: "w = <<EOT\nfirst\n  x @\nEOT\n", line: 3, col: 5},
		{name: "flush heredoc", src: "w = <<-EOT\n    first\n      x @\n    EOT\n", line: 3, col: 9},
		{name: "interpolation", src: "w = \"${\"a\"} @\"", unmapped: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, diags := hclsyntax.ParseConfig([]byte(tt.src), "f.hcl", hcl.InitialPos)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			expr := f.Body.(*hclsyntax.Body).Attributes["w"].Expr
			v, diags := expr.Value(nil)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			value := v.AsString()
			m := whenMapper(expr, f, value)
			if tt.unmapped {
				if m != nil {
					t.Fatal("want no mapping for an interpolated string")
				}
				return
			}
			if m == nil {
				t.Fatalf("no mapping for %q", value)
			}
			pos := m(strings.IndexByte(value, '@'))
			if pos.Line != tt.line || pos.Column != tt.col || f.Bytes[pos.Byte] != '@' {
				t.Errorf("position = %d:%d (byte %q), want %d:%d", pos.Line, pos.Column, f.Bytes[pos.Byte], tt.line, tt.col)
			}
		})
	}
}

// TestPolicyErrorPosition checks that a CEL error inside a `when` string is
// reported at its exact line and column in the file: in a quoted string
// after escapes and non-ASCII text, and on the second line of a heredoc.
func TestPolicyErrorPosition(t *testing.T) {
	tests := []struct {
		name      string
		when      string
		line, col int
	}{
		{name: "quoted", when: `"tool.title == \"é\" && nope"`, line: 4, col: 36},
		{name: "heredoc", when: "<<-CEL\n    tool.name == 'x' &&\n      résultat.text == 'y'\n  CEL", line: 6, col: 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "policy \"p\" {\n  phase  = \"call\"\n  effect = \"deny\"\n  when   = " + tt.when + "\n}\n"
			_, diags := Parse([]byte(src), "p.hcl", testOptions())
			if len(diags) != 1 {
				t.Fatalf("want one diagnostic, got %v", diags)
			}
			d := diags[0]
			if d.Subject.Start.Line != tt.line || d.Subject.Start.Column != tt.col {
				t.Errorf("at %d:%d, want %d:%d: %s", d.Subject.Start.Line, d.Subject.Start.Column, tt.line, tt.col, d.Error())
			}
		})
	}
}
