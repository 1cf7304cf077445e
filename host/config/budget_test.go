package config

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// hostileInputs are configurations whose cost is in their number of tokens:
// the reports of issue 30 row 17 (4 MiB of `${"a"}` in a heredoc, and
// `%{if true}a%{endif}` 200,000 times) and the same density without
// templates. Each is at most MaxConfigSize.
var hostileInputs = []struct {
	name string
	src  func() string
}{
	{"interpolations in a heredoc (the report)", func() string {
		return fill("log_level = <<EOT\n", `${"a"}`, "\nEOT\n")
	}},
	{"if directives (the report)", func() string {
		return "log_level = <<EOT\n" + strings.Repeat("%{if true}a%{endif}", 200_000) + "\nEOT\n"
	}},
	{"a tuple of numbers", func() string { return fill("x = [", "1,", "]\n") }},
	{"strings of spaces", func() string { return fill("x = [", `" ",`, "]\n") }},
	{"comments", func() string { return fill("", "#\n", "") }},
	{"broken UTF-8", func() string { return fill("x = \"", "\xff", "\"\n") }},
}

// fill repeats unit between head and tail to MaxConfigSize bytes.
func fill(head, unit, tail string) string {
	n := (MaxConfigSize - len(head) - len(tail)) / len(unit)
	return head + strings.Repeat(unit, n) + tail
}

// allocated returns the bytes f allocated (runtime.MemStats.TotalAlloc,
// which counts every allocation whether or not it was collected).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestTooManyTokensRefusedEarly: a configuration of up to MaxConfigSize
// that has more than MaxConfigTokens tokens is refused with one "Too many
// tokens" error at the token that passes the bound, before HCL lexes it, so
// the refusal allocates next to nothing (before: 1.4 GB and 13 s for the
// first input, on reload too). Load and Format, which `mcphost fmt` and
// reloads run, take the same path.
func TestTooManyTokensRefusedEarly(t *testing.T) {
	const limit = 1 << 20 // bytes a refusal may allocate, the source aside
	for _, in := range hostileInputs {
		t.Run(in.name, func(t *testing.T) {
			src := []byte(in.src())
			var diags hcl.Diagnostics
			n := allocated(func() { _, diags = Parse(src, "hostile.hcl", testOptions()) })
			checkTooManyTokens(t, diags, src)
			if n > limit {
				t.Errorf("Parse allocated %d bytes to refuse a %d-byte file, want at most %d", n, len(src), limit)
			}
			n = allocated(func() { _, diags = Format(src, "hostile.hcl") })
			checkTooManyTokens(t, diags, src)
			if n > limit {
				t.Errorf("Format allocated %d bytes, want at most %d", n, limit)
			}
			// Load reads the file first (a few copies of 4 MiB).
			fsys := fstest.MapFS{"hostile.hcl": {Data: src}}
			n = allocated(func() { _, diags = Load(fsys, "hostile.hcl", testOptions()) })
			checkTooManyTokens(t, diags, src)
			if n > 8*MaxConfigSize {
				t.Errorf("Load allocated %d bytes, want at most %d", n, 8*MaxConfigSize)
			}
		})
	}
}

func checkTooManyTokens(t *testing.T, diags hcl.Diagnostics, src []byte) {
	t.Helper()
	if len(diags) != 1 || diags[0].Summary != "Too many tokens" || diags[0].Severity != hcl.DiagError {
		t.Fatalf("want one Too many tokens error, got %d diagnostics:%s", len(diags), diagText(diags[:min(len(diags), 3)]))
	}
	d := diags[0]
	r := d.Subject
	if r == nil || r.Filename != "hostile.hcl" || r.Start.Byte <= 0 || r.Start.Byte >= r.End.Byte || r.End.Byte > len(src) {
		t.Fatalf("subject %v is not a token inside the source", r)
	}
	if want := posAt(src, r.Start.Byte); r.Start != want {
		t.Errorf("subject starts at %+v, want %+v", r.Start, want)
	}
	if !strings.Contains(d.Detail, fmt.Sprintf("more than %d tokens", MaxConfigTokens)) {
		t.Errorf("detail does not give the limit: %s", d.Detail)
	}
}

// TestTokenBound: a file of exactly MaxConfigTokens tokens loads (its
// errors are about its content), one more is refused at the token past the
// bound, with its line and column.
func TestTokenBound(t *testing.T) {
	// "x = [" is 3 tokens, each "1," 2, "]\n" 2.
	list := func(extra int) string {
		return "x = [" + strings.Repeat("1,", (MaxConfigTokens-5)/2) + strings.Repeat("\n", extra) + "]\n"
	}
	src := list((MaxConfigTokens - 5) % 2)
	if _, diags := Parse([]byte(src), "bound.hcl", testOptions()); hasSummary(diags, "Too many tokens") {
		t.Fatalf("%d tokens refused:%s", MaxConfigTokens, diagText(diags))
	}
	src = list((MaxConfigTokens-5)%2 + 1)
	_, diags := Parse([]byte(src), "bound.hcl", testOptions())
	if len(diags) != 1 || diags[0].Summary != "Too many tokens" {
		t.Fatalf("%d tokens: want Too many tokens, got%s", MaxConfigTokens+1, diagText(diags))
	}
	// The line end after "]" is the token past the bound.
	at := len(src) - 1
	line := strings.Count(src[:at], "\n") + 1
	want := hcl.Range{Filename: "bound.hcl",
		Start: hcl.Pos{Line: line, Column: 2, Byte: at},
		End:   hcl.Pos{Line: line, Column: 3, Byte: at + 1}}
	if *diags[0].Subject != want {
		t.Errorf("subject %+v, want %+v", *diags[0].Subject, want)
	}
}

func hasSummary(diags hcl.Diagnostics, summary string) bool {
	for _, d := range diags {
		if d.Summary == summary {
			return true
		}
	}
	return false
}

// TestTokenCount pins what checkTokens counts, with a small bound: the
// position it reports is the first token past the bound.
func TestTokenCount(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want int
	}{
		{"empty", "", 0},
		{"spaces and tabs are nothing", " \t \t", 0},
		{"a name and a number", "abc_12 345", 2},
		{"an attribute", `a = "b c"`, 6},
		{"a name with dashes", "a-b-c", 5},
		{"line ends", "\n\r\n\r", 4},
		{"a template", `"${"a"}"`, 8},
		{"each non-ASCII character", "\"été ☃\"", 6}, // " é t é ☃ "
		{"each byte of broken UTF-8", "\xff\xfe\xc3", 3},
		{"comments count per word", "# a comment here\n", 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := countTokens([]byte(tt.src)); got != tt.want {
				t.Errorf("countTokens(%q) = %d, want %d", tt.src, got, tt.want)
			}
		})
	}
}

// countTokens counts src the way checkTokens does.
func countTokens(src []byte) int {
	n, _, _ := tokensUpTo(src, len(src)+1)
	return n
}

// TestTokenCountBoundsHCL: for every input of FuzzLoad's seeds and the
// hostile shapes (cut to 64 KiB), HCL's lexer makes at most
// 4×countTokens+2 tokens, so MaxConfigTokens bounds what HCL allocates.
func TestTokenCountBoundsHCL(t *testing.T) {
	inputs := map[string]string{}
	for _, in := range hostileInputs {
		inputs[in.name] = in.src()[:64<<10]
	}
	for _, in := range deepInputs {
		inputs[in.name] = in.gen(100)
	}
	for _, pattern := range []string{"testdata/valid/*.hcl", "testdata/invalid/*.hcl", "../../examples/hcl/*.hcl"} {
		for _, path := range glob(t, pattern) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			inputs[path] = string(src)
		}
	}
	inputs["numbers glued to names"] = strings.Repeat("1a ", 1000)
	inputs["empty strings"] = strings.Repeat(`"" `, 1000)
	inputs["unknown characters"] = strings.Repeat("☃", 1000)
	for name, src := range inputs {
		checkTokenBound(t, name, []byte(src))
	}
}

func checkTokenBound(t *testing.T, name string, src []byte) {
	t.Helper()
	tokens, _ := hclsyntax.LexConfig(src, "x.hcl", hcl.InitialPos)
	if n := countTokens(src); len(tokens) > 4*n+2 {
		t.Errorf("%s: HCL makes %d tokens of what checkTokens counts as %d", name, len(tokens), n)
	}
}

// TestFunctionBudget: env(), file() and executable() return at most
// MaxFunctionBytes in one load. The call that passes it is an error at the
// call; the calls after it read nothing and add no error. Before, 2,000
// calls of file() of a 1 MiB file in a 36 KB configuration took 13 GB and
// two minutes, and a list of them loaded.
func TestFunctionBudget(t *testing.T) {
	big := strings.Repeat("a", MaxFileSize)
	fsys := fstest.MapFS{"big.txt": {Data: []byte(big)}}
	opts := Options{LookupEnv: testEnv("BIG", big[:MaxFileSize/4])}
	tests := []struct {
		name  string
		call  string
		calls int
		nth   int // the call that passes the budget, from 1
	}{
		{"file", `file("big.txt")`, 40, MaxFunctionBytes/MaxFileSize + 1},
		{"env", `env("BIG")`, 100, MaxFunctionBytes/(MaxFileSize/4) + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := strings.TrimSuffix(strings.Repeat(tt.call+", ", tt.calls), ", ")
			src := "server \"s\" {\n  command = \"x\"\n  args = [" + calls + "]\n}\n"
			fsys := fstest.MapFS{"c.hcl": {Data: []byte(src)}, "big.txt": fsys["big.txt"]}
			var diags hcl.Diagnostics
			n := allocated(func() { _, diags = Load(fsys, "c.hcl", opts) })
			if len(diags) != 1 || diags[0].Summary != "Functions return too much" {
				t.Fatalf("want one Functions return too much error, got%s", diagText(diags))
			}
			col := len("  args = [") + (tt.nth-1)*len(tt.call+", ") + 1
			r := diags[0].Subject
			if r.Start.Line != 3 || r.Start.Column != col || r.End.Column != col+len(tt.call) {
				t.Errorf("subject %v, want the call %d at 3:%d", r, tt.nth, col)
			}
			if !strings.Contains(diags[0].Detail, "at most 16777216 bytes") {
				t.Errorf("detail: %s", diags[0].Detail)
			}
			// What the calls up to the budget return, and a few copies.
			if limit := uint64(8 * MaxFunctionBytes); n > limit {
				t.Errorf("Load allocated %d bytes, want at most %d", n, limit)
			}
		})
	}
}

// TestLongValueClipped: a diagnostic quotes at most maxQuotedBytes of a
// value, cut at a character boundary, with the value's length (before, the
// "Invalid log level" of a 200 KB value printed all of it).
func TestLongValueClipped(t *testing.T) {
	value := strings.Repeat("a", maxQuotedBytes-1) + strings.Repeat("é", 100_000)
	_, diags := Parse([]byte(`log_level = "`+value+"\"\n"), "long.hcl", testOptions())
	if len(diags) != 1 || diags[0].Summary != "Invalid log level" {
		t.Fatalf("want Invalid log level, got%s", diagText(diags))
	}
	want := fmt.Sprintf(`The log level "%s"… (%d bytes) is not known.`, strings.Repeat("a", maxQuotedBytes-1), len(value))
	if d := diags[0].Detail; !strings.HasPrefix(d, want) || !utf8.ValidString(d) {
		t.Errorf("detail %.300q, want it to start with %q", d, want)
	}
}
