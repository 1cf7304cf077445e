package config

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
)

// WriteText renders diagnostics for a terminal, one block each:
//
//	bad.hcl:5:8: error: Duplicate server name
//	    5 | server "files" {
//	      |        ^^^^^^^
//	  A server named "files" is already defined at bad.hcl:1. ...
//
// The first line starts with FILE:LINE:COLUMN so editors and grep can jump
// to it. The source line comes from files when the file is known. Callers
// sort diags first (SortDiagnostics).
func WriteText(w io.Writer, files map[string]*hcl.File, diags hcl.Diagnostics) error {
	bw := bufio.NewWriter(w)
	for i, d := range diags {
		if i > 0 {
			bw.WriteByte('\n')
		}
		severity := "error"
		if d.Severity == hcl.DiagWarning {
			severity = "warning"
		}
		if d.Subject != nil {
			fmt.Fprintf(bw, "%s:%d:%d: %s: %s\n", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column, severity, d.Summary)
			writeSnippet(bw, files, d.Subject)
		} else {
			fmt.Fprintf(bw, "%s: %s\n", severity, d.Summary)
		}
		if d.Detail != "" {
			for _, line := range strings.Split(strings.TrimRight(d.Detail, "\n"), "\n") {
				fmt.Fprintf(bw, "  %s\n", line)
			}
		}
	}
	return bw.Flush()
}

// maxSnippetRunes bounds the source line a snippet prints: a longer line
// (minified, or generated) is cut to a window around the subject, with "…"
// where it was cut, so that one diagnostic cannot print a whole file.
const maxSnippetRunes = 120

// writeSnippet prints the first source line of rng with carets under the
// range (to the end of that line when the range spans several lines).
func writeSnippet(w io.Writer, files map[string]*hcl.File, rng *hcl.Range) {
	f := files[rng.Filename]
	if f == nil || rng.Start.Byte < 0 || rng.Start.Byte > len(f.Bytes) {
		return
	}
	src := f.Bytes
	lineStart := bytes.LastIndexByte(src[:rng.Start.Byte], '\n') + 1
	lineEnd := len(src)
	if i := bytes.IndexByte(src[rng.Start.Byte:], '\n'); i >= 0 {
		lineEnd = rng.Start.Byte + i
	}
	line := strings.TrimRight(string(src[lineStart:lineEnd]), "\r")
	if !utf8.ValidString(line) {
		line = strings.ToValidUTF8(line, "\uFFFD")
	}
	end := min(max(rng.End.Byte, rng.Start.Byte), lineStart+len(line))
	prefix := string(src[lineStart:rng.Start.Byte])
	marked := ""
	if end > rng.Start.Byte {
		marked = string(src[rng.Start.Byte:end])
	}
	cutLeft := false
	if utf8.RuneCountInString(line) > maxSnippetRunes && rng.Start.Byte <= lineStart+len(line) {
		line, prefix, marked, cutLeft = clipLine(string(src[lineStart:lineStart+len(line)]), prefix, marked)
	}
	var pad strings.Builder
	if cutLeft {
		pad.WriteByte(' ') // under the "…"
	}
	for _, r := range prefix {
		if r == '\t' {
			pad.WriteByte('\t')
		} else {
			pad.WriteByte(' ')
		}
	}
	carets := max(1, utf8.RuneCountInString(marked))
	num := fmt.Sprintf("%d", rng.Start.Line)
	fmt.Fprintf(w, "  %s | %s\n", num, line)
	fmt.Fprintf(w, "  %s | %s%s\n", strings.Repeat(" ", len(num)), pad.String(), strings.Repeat("^", carets))
}

// clipLine cuts a long source line to a window of maxSnippetRunes runes
// around the subject: up to 40 runes before it, then the subject and what
// follows, with "…" where the line was cut. line is prefix + marked + the
// rest. It returns the text to print and the prefix and marked parts inside
// it; cutLeft says the text starts with "…".
func clipLine(line, prefix, marked string) (text, clippedPrefix, clippedMarked string, cutLeft bool) {
	valid := func(s string) []rune { return []rune(strings.ToValidUTF8(s, "\uFFFD")) }
	p, m, rest := valid(prefix), valid(marked), valid(line[len(prefix)+len(marked):])
	if len(p) > 40 {
		p, cutLeft = p[len(p)-40:], true
	}
	room := maxSnippetRunes - len(p)
	cutRight := false
	switch {
	case len(m) > room:
		m, rest, cutRight = m[:room], nil, true
	case len(m)+len(rest) > room:
		rest, cutRight = rest[:room-len(m)], true
	}
	var b strings.Builder
	if cutLeft {
		b.WriteString("…")
	}
	b.WriteString(string(p))
	b.WriteString(string(m))
	b.WriteString(string(rest))
	if cutRight {
		b.WriteString("…")
	}
	return b.String(), string(p), string(m), cutLeft
}
