package termsafe_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/internal/termsafe"
)

func TestLineAndText(t *testing.T) {
	tests := []struct {
		name, in   string
		line, text string
	}{
		{"empty", "", "", ""},
		{"plain ASCII", "get_weather v2.1 (a-b)", "get_weather v2.1 (a-b)", "get_weather v2.1 (a-b)"},
		{"printable Unicode", "Größe — 天気 ☀ שלום", "Größe — 天気 ☀ שלום", "Größe — 天気 ☀ שלום"},
		{"backslash stays", `C:\x1b`, `C:\x1b`, `C:\x1b`},
		{"HTML stays (not a terminal hazard)", `<img src=x onerror=alert(1)>`, `<img src=x onerror=alert(1)>`, `<img src=x onerror=alert(1)>`},
		{"ESC sequence", "a\x1b[31mred\x1b[0m", `a\x1b[31mred\x1b[0m`, `a\x1b[31mred\x1b[0m`},
		{"OSC title with BEL", "\x1b]0;pwned\x07x", `\x1b]0;pwned\x07x`, `\x1b]0;pwned\x07x`},
		{"NUL", "a\x00b", `a\x00b`, `a\x00b`},
		{"CR", "safe\rEVIL", `safe\rEVIL`, `safe\rEVIL`},
		{"CRLF", "one\r\ntwo", `one\r\ntwo`, "one\\r\ntwo"},
		{"newline and tab", "a\tb\nc", `a\tb\nc`, "a\tb\nc"},
		{"DEL", "a\x7fb", `a\x7fb`, `a\x7fb`},
		{"C1 CSI", "a\u009b31mb", `a\u009b31mb`, `a\u009b31mb`},
		{"C1 NEL", "a\u0085b", `a\u0085b`, `a\u0085b`},
		{"RLO", "invoice\u202etxt.exe", `invoice\u202etxt.exe`, `invoice\u202etxt.exe`},
		{"every bidi control", "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069",
			`\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069`,
			`\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069`},
		{"zero width and BOM", "a\u200bb\u200cc\u200dd\ufeffe", `a\u200bb\u200cc\u200dd\ufeffe`, `a\u200bb\u200cc\u200dd\ufeffe`},
		{"line and paragraph separators", "a\u2028b\u2029c", `a\u2028b\u2029c`, `a\u2028b\u2029c`},
		{"tag characters (invisible ASCII)", "hi\U000E0041\U000E0042", `hi\U000e0041\U000e0042`, `hi\U000e0041\U000e0042`},
		{"invalid UTF-8", "a\xffb\xe2\x80", `a\xffb\xe2\x80`, `a\xffb\xe2\x80`},
		{"encoded surrogate", "\xed\xa0\x80", `\xed\xa0\x80`, `\xed\xa0\x80`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.line, termsafe.Line(tt.in)); diff != "" {
				t.Errorf("Line(%q) (-want +got):\n%s", tt.in, diff)
			}
			if diff := cmp.Diff(tt.text, termsafe.Text(tt.in)); diff != "" {
				t.Errorf("Text(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestJSON(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"plain", map[string]string{"a": "b"}, `{"a":"b"}`},
		{"C0 already escaped by encoding/json", "a\x1bb\x00", `"a\u001bb\u0000"`},
		{"RLO", "x\u202ey", `"x\u202ey"`},
		{"DEL and C1", "\x7f\u009b", `"\u007f\u009b"`},
		{"zero width in a key", map[string]int{"a\u200bb": 1}, `{"a\u200bb":1}`},
		{"tag character as a surrogate pair", "\U000E0041", `"\udb40\udc41"`},
		{"printable Unicode stays", "天気 <b>", `"天気 <b>"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, string(termsafe.JSON(marshal(t, tt.in, "")))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	t.Run("indentation kept", func(t *testing.T) {
		doc := marshal(t, map[string]string{"k": "v\u202e"}, "  ")
		want := "{\n  \"k\": \"v\\u202e\"\n}\n"
		if diff := cmp.Diff(want, string(termsafe.JSON(doc))); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("invalid UTF-8 becomes U+FFFD", func(t *testing.T) {
		if got := string(termsafe.JSON([]byte("\"a\xffb\""))); got != `"a\ufffdb"` {
			t.Errorf("got %s", got)
		}
	})
}

func marshal(t testing.TB, v any, indent string) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	if indent == "" {
		return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	}
	return buf.Bytes()
}

// safeInput reports whether s is valid UTF-8 without a rune that f would
// escape.
func safeInput(s string, multiline bool) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if termsafe.Unsafe(r) && !(multiline && (r == '\n' || r == '\t')) {
			return false
		}
	}
	return true
}

var seeds = []string{
	"", "plain", "a\x1b[2Jb", "\x07\x00\r\n\t", "x\u202ey", "\u2066\u2069\u061c",
	"\u200b\u200d\ufeff", "\xff\xfe", "\xed\xa0\x80", "\u009b", "\x7f", "日本\u2028語",
	"\U000E0041", `\x1b`, "<img src=x onerror=alert(1)>",
}

// FuzzLine checks that Line never lets an unsafe rune or invalid UTF-8
// through, leaves safe input unchanged and is idempotent.
func FuzzLine(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := termsafe.Line(s)
		checkOutput(t, s, out, false)
	})
}

// FuzzText checks the same for Text, which also keeps every newline.
func FuzzText(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := termsafe.Text(s)
		checkOutput(t, s, out, true)
		if strings.Count(out, "\n") != strings.Count(s, "\n") {
			t.Errorf("Text(%q) = %q: the newlines changed", s, out)
		}
	})
}

func checkOutput(t *testing.T, in, out string, multiline bool) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("escape(%q) = %q: invalid UTF-8", in, out)
	}
	for i, r := range out {
		if termsafe.Unsafe(r) && !(multiline && (r == '\n' || r == '\t')) {
			t.Fatalf("escape(%q) = %q: unsafe rune %U at byte %d", in, out, r, i)
		}
	}
	if safeInput(in, multiline) && out != in {
		t.Fatalf("escape(%q) = %q: safe input changed", in, out)
	}
	if again := termsafe.Line(out); !multiline && again != out {
		t.Fatalf("Line is not idempotent: %q, then %q", out, again)
	}
}

// FuzzJSON checks that JSON keeps a document valid and its value the same,
// with no unsafe rune left but JSON whitespace.
func FuzzJSON(f *testing.F) {
	for _, s := range seeds {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, indent bool) {
		ind := ""
		if indent {
			ind = "  "
		}
		doc := marshal(t, map[string]any{s: []string{s, "x"}}, ind)
		out := termsafe.JSON(doc)
		if !json.Valid(out) {
			t.Fatalf("JSON(%s) = %s: not valid JSON", doc, out)
		}
		var want, got any
		if err := json.Unmarshal(doc, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("JSON changed the value (-want +got):\n%s", diff)
		}
		for i, r := range string(out) {
			if termsafe.Unsafe(r) && r != '\n' {
				t.Fatalf("JSON(%s) = %s: unsafe rune %U at byte %d", doc, out, r, i)
			}
		}
	})
}
