package upstream

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestToolNameProblem(t *testing.T) {
	tests := []struct {
		name, tool string
		want       string // a part of the reason; "" when the name is admitted
	}{
		{"letters digits and punctuation", "getUser_v2.list-all", ""},
		{"spec example DATA_EXPORT_v2", "DATA_EXPORT_v2", ""},
		{"spec example admin.tools.list", "admin.tools.list", ""},
		{"one character", "a", ""},
		{"128 characters", strings.Repeat("a", 128), ""},
		{"129 characters", strings.Repeat("a", 129), "the name has 129 characters; the MCP spec allows at most 128"},
		{"empty", "", "the name is empty"},
		{"space", "has space", "U+0020 at byte 3"},
		{"slash (SEP-986 draft, not the 2025-11-25 rule)", "user/update", "U+002F at byte 4"},
		{"comma", "a,b", "U+002C at byte 1"},
		{"ESC", "a\x1b[31m", "U+001B at byte 1"},
		{"BEL", "bell\x07", "U+0007 at byte 4"},
		{"NUL", "\x00", "U+0000 at byte 0"},
		{"CR", "a\rb", "U+000D at byte 1"},
		{"RLO", "rlo\u202etxt.exe", "U+202E at byte 3"},
		{"zero width space", "a\u200bb", "U+200B at byte 1"},
		{"HTML", "<b>", "U+003C at byte 0"},
		{"non-ASCII letter", "café", "U+00E9 at byte 3"},
		{"invalid UTF-8", "a\xffb", "the byte 0xff (not UTF-8) at byte 1"},
		{"bad character reported before length", strings.Repeat("a", 200) + " ", "U+0020 at byte 200"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := toolNameProblem(tt.tool)
			if tt.want == "" && got != "" {
				t.Errorf("toolNameProblem(%q) = %q, want the name admitted", tt.tool, got)
			}
			if tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("toolNameProblem(%q) = %q, want it to contain %q", tt.tool, got, tt.want)
			}
		})
	}
}

func TestAdmitTools(t *testing.T) {
	first := &mcp.Tool{Name: "dup", Title: "first"}
	second := &mcp.Tool{Name: "dup", Title: "second"}
	ok := &mcp.Tool{Name: "ok"}
	bad := &mcp.Tool{Name: "bad\x1bname"}
	list := []*mcp.Tool{first, nil, bad, ok, second}
	admitted, rejected := admitTools(list)

	var titles []string
	for _, a := range admitted {
		titles = append(titles, a.Name+"/"+a.Title)
	}
	if diff := cmp.Diff([]string{"dup/first", "ok/"}, titles); diff != "" {
		t.Errorf("admitted (-want +got):\n%s", diff)
	}
	var names []string
	for _, r := range rejected {
		names = append(names, r.Name)
	}
	if diff := cmp.Diff([]string{`bad\x1bname`, "dup"}, names); diff != "" {
		t.Errorf("rejected names, escaped (-want +got):\n%s", diff)
	}
	if len(rejected) == 2 && !strings.Contains(rejected[1].Reason, "the first one is kept") {
		t.Errorf("duplicate reason = %q", rejected[1].Reason)
	}
	if list[2] != bad || list[4] != second || len(list) != 5 {
		t.Error("admitTools changed the list it was given (it may be shared through the cache)")
	}
}
