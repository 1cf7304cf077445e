package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
)

func TestWriteText(t *testing.T) {
	src := "server \"a\" {\n\tcommand = \"x\"\n  url = \"http://h\"\n}\n"
	file := &hcl.File{Bytes: []byte(src)}
	files := map[string]*hcl.File{"f.hcl": file}
	rng := func(sl, sc, sb, el, ec, eb int) *hcl.Range {
		return &hcl.Range{Filename: "f.hcl", Start: hcl.Pos{Line: sl, Column: sc, Byte: sb}, End: hcl.Pos{Line: el, Column: ec, Byte: eb}}
	}
	tests := []struct {
		name  string
		diags hcl.Diagnostics
		want  string
	}{
		{
			name:  "label",
			diags: hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Bad", Detail: "Fix it.", Subject: rng(1, 8, 7, 1, 11, 10)}},
			want:  "f.hcl:1:8: error: Bad\n  1 | server \"a\" {\n    |        ^^^\n  Fix it.\n",
		},
		{
			name:  "tab indented value keeps the tab in the marker line",
			diags: hcl.Diagnostics{{Severity: hcl.DiagWarning, Summary: "Hmm", Subject: rng(2, 12, 24, 2, 15, 27)}},
			want:  "f.hcl:2:12: warning: Hmm\n  2 | \tcommand = \"x\"\n    | \t          ^^^\n",
		},
		{
			name:  "range over several lines marks to the end of the first",
			diags: hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Block", Subject: rng(1, 1, 0, 4, 2, len(src)-1)}},
			want:  "f.hcl:1:1: error: Block\n  1 | server \"a\" {\n    | ^^^^^^^^^^^^\n",
		},
		{
			name:  "no subject",
			diags: hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "No data directory", Detail: "Set data_dir."}},
			want:  "error: No data directory\n  Set data_dir.\n",
		},
		{
			name:  "unknown file prints no snippet",
			diags: hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "X", Subject: &hcl.Range{Filename: "other.hcl", Start: hcl.Pos{Line: 3, Column: 1}}}},
			want:  "other.hcl:3:1: error: X\n",
		},
		{
			name: "two diagnostics are separated by a blank line",
			diags: hcl.Diagnostics{
				{Severity: hcl.DiagError, Summary: "A", Subject: rng(3, 3, 30, 3, 6, 33)},
				{Severity: hcl.DiagError, Summary: "B"},
			},
			want: "f.hcl:3:3: error: A\n  3 |   url = \"http://h\"\n    |   ^^^\n\nerror: B\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := WriteText(&b, files, tc.diags); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("output mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWriteTextLongLine checks that the snippet of a long line is a window
// around the subject, not the whole line.
func TestWriteTextLongLine(t *testing.T) {
	long := "log_level = " + strings.Repeat("(", 300) + `"info"` + strings.Repeat(")", 300)
	files := map[string]*hcl.File{"f.hcl": {Bytes: []byte(long + "\n")}}
	at := func(start, end int) *hcl.Range {
		return &hcl.Range{Filename: "f.hcl", Start: hcl.Pos{Line: 1, Column: start + 1, Byte: start}, End: hcl.Pos{Line: 1, Column: end + 1, Byte: end}}
	}
	tests := []struct {
		name string
		rng  *hcl.Range
		want string
	}{
		{
			name: "in the middle",
			rng:  at(312, 313), // the opening quote
			want: "f.hcl:1:313: error: Nesting too deep\n" +
				"  1 | …" + strings.Repeat("(", 40) + `"info"` + strings.Repeat(")", 74) + "…\n" +
				"    |  " + strings.Repeat(" ", 40) + "^\n",
		},
		{
			name: "at the start",
			rng:  at(0, 9),
			want: "f.hcl:1:1: error: Nesting too deep\n" +
				"  1 | log_level = " + strings.Repeat("(", 108) + "…\n" +
				"    | ^^^^^^^^^\n",
		},
		{
			name: "a range longer than the window",
			rng:  at(2, len(long)),
			want: "f.hcl:1:3: error: Nesting too deep\n" +
				"  1 | " + long[:maxSnippetRunes] + "…\n" +
				"    |   " + strings.Repeat("^", maxSnippetRunes-2) + "\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := WriteText(&b, files, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Nesting too deep", Subject: tc.rng}}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("output mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
