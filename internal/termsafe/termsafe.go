package termsafe

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Unsafe reports whether r is a rune that [Line] always escapes: a control
// (Cc), format (Cf), line separator (Zl) or paragraph separator (Zp)
// character. [Text] keeps '\n' and '\t' although they are unsafe here.
func Unsafe(r rune) bool {
	if r < utf8.RuneSelf {
		return r < 0x20 || r == 0x7f
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp)
}

// Line returns s for a one-line field: every unsafe rune, '\n' and '\t'
// included, and every byte of invalid UTF-8 is escaped. It returns s itself
// when nothing needs escaping.
func Line(s string) string { return escape(s, false) }

// Text returns s for multi-line text such as a tool result: like [Line], but
// '\n' and '\t' are kept as they are ('\r' is still escaped, so no line can
// be overwritten).
func Text(s string) string { return escape(s, true) }

func escape(s string, multiline bool) string {
	keep := func(r rune) bool { return multiline && (r == '\n' || r == '\t') }
	// Fast path: find the first byte that needs a look.
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || (Unsafe(rune(c)) && !keep(rune(c))) {
			break
		}
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			writeByte(&b, s[i])
		case Unsafe(r) && !keep(r):
			writeRune(&b, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

const hex = "0123456789abcdef"

func writeByte(b *strings.Builder, c byte) {
	b.WriteString(`\x`)
	b.WriteByte(hex[c>>4])
	b.WriteByte(hex[c&0xf])
}

func writeRune(b *strings.Builder, r rune) {
	switch {
	case r == '\t':
		b.WriteString(`\t`)
	case r == '\n':
		b.WriteString(`\n`)
	case r == '\r':
		b.WriteString(`\r`)
	case r < utf8.RuneSelf:
		writeByte(b, byte(r))
	case r <= 0xffff:
		b.WriteString(`\u`)
		writeHex(b, uint32(r), 4)
	default:
		b.WriteString(`\U`)
		writeHex(b, uint32(r), 8)
	}
}

func writeHex(b *strings.Builder, v uint32, digits int) {
	s := strconv.FormatUint(uint64(v), 16)
	for range digits - len(s) {
		b.WriteByte('0')
	}
	b.WriteString(s)
}

// JSON returns an encoded JSON document with every unsafe rune that is left
// raw written as a JSON escape (\u202e; a surrogate pair above U+FFFF) and
// every byte of invalid UTF-8 as \ufffd, the replacement encoding/json
// itself makes when decoding. In valid JSON such runes can only stand inside
// strings, so the result decodes to the same values. encoding/json already
// escapes C0 controls, U+2028 and U+2029; this adds DEL, C1 and the format
// characters, which it leaves raw. JSON whitespace (tab, newline, carriage
// return) is kept: doc must be valid JSON, where raw whitespace only stands
// between tokens. It returns doc itself when nothing needs escaping.
func JSON(doc []byte) []byte {
	i := 0
	for ; i < len(doc); i++ {
		if c := doc[i]; c >= utf8.RuneSelf || (Unsafe(rune(c)) && !jsonSpace(c)) {
			break
		}
	}
	if i == len(doc) {
		return doc
	}
	out := make([]byte, 0, len(doc)+16)
	out = append(out, doc[:i]...)
	for i < len(doc) {
		r, size := utf8.DecodeRune(doc[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = append(out, `\ufffd`...)
		case Unsafe(r) && !(r < utf8.RuneSelf && jsonSpace(byte(r))):
			if r1, r2 := utf16.EncodeRune(r); r1 != unicode.ReplacementChar {
				out = appendU(appendU(out, r1), r2)
			} else {
				out = appendU(out, r)
			}
		default:
			out = append(out, doc[i:i+size]...)
		}
		i += size
	}
	return out
}

// jsonSpace reports whether c is JSON whitespace that is unsafe on its own
// (valid JSON has raw tabs, newlines and carriage returns only between
// tokens, where they must stay raw).
func jsonSpace(c byte) bool { return c == '\t' || c == '\n' || c == '\r' }

func appendU(out []byte, r rune) []byte {
	return append(out, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
}
