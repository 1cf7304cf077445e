// Package jsonscan walks JSON text in place, without decoding it into Go
// values. The example plugins use it because encoding/json costs about half
// a microsecond per byte inside a Go wasm guest (a 2 KB result takes a
// millisecond to decode), while a byte loop costs a few nanoseconds.
//
// It expects valid JSON, such as the host's input, and reports an error
// (rather than guessing) when it meets anything else. Offsets are byte
// indexes into the same slice throughout.
package jsonscan

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds nesting, as the host's own validator does.
const maxDepth = 128

// WS returns the offset of the first non-whitespace byte at or after i.
func WS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// Peek returns the first non-whitespace byte at or after i, or 0 at the end.
func Peek(b []byte, i int) byte {
	if i = WS(b, i); i < len(b) {
		return b[i]
	}
	return 0
}

func errAt(b []byte, i int, want string) error {
	if i >= len(b) {
		return fmt.Errorf("jsonscan: unexpected end of input, want %s", want)
	}
	return fmt.Errorf("jsonscan: unexpected %q at offset %d, want %s", b[i], i, want)
}

// Skip returns the offset just after the JSON value that starts at i (after
// whitespace).
func Skip(b []byte, i int) (int, error) { return skip(b, i, 0) }

func skip(b []byte, i, depth int) (int, error) {
	i = WS(b, i)
	if i >= len(b) {
		return i, errAt(b, i, "a value")
	}
	if (b[i] == '{' || b[i] == '[') && depth >= maxDepth {
		return i, errors.New("jsonscan: nested too deep")
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{':
		return Object(b, i, func(_ string, v int) (int, error) { return skip(b, v, depth+1) })
	case c == '[':
		return Array(b, i, func(v int) (int, error) { return skip(b, v, depth+1) })
	case c == '-' || c >= '0' && c <= '9':
		j := i + 1
		for j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == '.' || b[j] == 'e' || b[j] == 'E' || b[j] == '+' || b[j] == '-') {
			j++
		}
		return j, nil
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
				return i + len(lit), nil
			}
		}
		return i, errAt(b, i, "a value")
	}
}

// skipString returns the offset after the string starting at b[i] == '"'.
// It looks for quotes with bytes.IndexByte, which is assembly even in a
// wasm guest, where a Go loop costs tens of nanoseconds per byte: a quote
// ends the string unless an odd number of backslashes precedes it.
func skipString(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			break
		}
		q := j + k
		n := 0
		for q-1-n > i && b[q-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return q + 1, nil
		}
		j = q + 1
	}
	return len(b), errAt(b, len(b), `a closing '"'`)
}

// String decodes the string that starts at i (after whitespace) and returns
// it with the offset after it.
func String(b []byte, i int) (string, int, error) {
	str, end, err := DecodeString(b, i)
	return str.S, end, err
}

// Str is a JSON string both as written and decoded.
type Str struct {
	Raw []byte // as written, without the quotes
	S   string // decoded
	esc []escape
}

// escape records that decoded bytes [dec, decEnd) were written as an escape
// sequence ending at Raw[rawEnd].
type escape struct{ dec, decEnd, rawEnd int }

// RawOffset maps an offset in S that is not inside a character to the
// offset in Raw where the same character starts.
func (s *Str) RawOffset(d int) int {
	lo, hi := 0, len(s.esc) // find the first escape at or after d
	for lo < hi {
		m := (lo + hi) / 2
		if s.esc[m].dec < d {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return d
	}
	e := s.esc[lo-1]
	return e.rawEnd + d - e.decEnd
}

// DecodeString decodes the string that starts at i (after whitespace) and
// returns it with the offset after it.
func DecodeString(b []byte, i int) (Str, int, error) {
	i = WS(b, i)
	if i >= len(b) || b[i] != '"' {
		return Str{}, i, errAt(b, i, "a string")
	}
	end, err := skipString(b, i)
	if err != nil {
		return Str{}, end, err
	}
	str := Str{Raw: b[i+1 : end-1]}
	if bytes.IndexByte(str.Raw, '\\') < 0 {
		str.S = string(str.Raw)
		return str, end, nil
	}
	err = str.unescape()
	return str, end, err
}

// unescape decodes s.Raw into s.S, copying the runs between escapes whole.
func (s *Str) unescape() error {
	raw := s.Raw
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		k := bytes.IndexByte(raw[i:], '\\')
		if k < 0 {
			out = append(out, raw[i:]...)
			break
		}
		out = append(out, raw[i:i+k]...)
		dec := len(out)
		i += k + 1
		if i >= len(raw) {
			return errors.New("jsonscan: bad escape")
		}
		switch raw[i] {
		case '"', '\\', '/':
			out = append(out, raw[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(raw, i+1)
			if !ok {
				return errors.New("jsonscan: bad \\u escape")
			}
			i += 4
			if utf16.IsSurrogate(r) {
				r2, ok := rune(0), false
				if i+2 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
					r2, ok = hex4(raw, i+3)
				}
				if d := utf16.DecodeRune(r, r2); ok && d != utf8.RuneError {
					r = d
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return errors.New("jsonscan: bad escape")
		}
		s.esc = append(s.esc, escape{dec: dec, decEnd: len(out), rawEnd: i + 1})
	}
	s.S = string(out)
	return nil
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// Object walks the object that starts at i (after whitespace). For each
// member it calls fn with the key and the offset of the value; fn returns
// the offset after the value (Skip does, when fn has no use for it).
// Object returns the offset after the object.
func Object(b []byte, i int, fn func(key string, v int) (int, error)) (int, error) {
	i = WS(b, i)
	if i >= len(b) || b[i] != '{' {
		return i, errAt(b, i, "an object")
	}
	i = WS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		key, j, err := String(b, i)
		if err != nil {
			return j, err
		}
		j = WS(b, j)
		if j >= len(b) || b[j] != ':' {
			return j, errAt(b, j, "':'")
		}
		if i, err = fn(key, j+1); err != nil {
			return i, err
		}
		i = WS(b, i)
		if i >= len(b) {
			return i, errAt(b, i, "',' or '}'")
		}
		switch b[i] {
		case ',':
			i++
		case '}':
			return i + 1, nil
		default:
			return i, errAt(b, i, "',' or '}'")
		}
	}
}

// Array walks the array that starts at i (after whitespace), calling fn
// with the offset of each element; fn returns the offset after it.
func Array(b []byte, i int, fn func(v int) (int, error)) (int, error) {
	i = WS(b, i)
	if i >= len(b) || b[i] != '[' {
		return i, errAt(b, i, "an array")
	}
	i = WS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		var err error
		if i, err = fn(i); err != nil {
			return i, err
		}
		i = WS(b, i)
		if i >= len(b) {
			return i, errAt(b, i, "',' or ']'")
		}
		switch b[i] {
		case ',':
			i++
		case ']':
			return i + 1, nil
		default:
			return i, errAt(b, i, "',' or ']'")
		}
	}
}

// Strings calls fn for every string value (not key) in the value that
// starts at i (after whitespace), in document order, with the string and
// the offsets [start, end) of its JSON text, quotes included; an error from
// fn stops the walk. Strings returns the offset after the value. It allows
// the nesting Skip does.
func Strings(b []byte, i int, fn func(s Str, start, end int) error) (int, error) {
	return stringsIn(b, i, 0, fn)
}

func stringsIn(b []byte, i, depth int, fn func(s Str, start, end int) error) (int, error) {
	i = WS(b, i)
	if i >= len(b) {
		return i, errAt(b, i, "a value")
	}
	if (b[i] == '{' || b[i] == '[') && depth >= maxDepth {
		return i, errors.New("jsonscan: nested too deep")
	}
	switch b[i] {
	case '"':
		s, end, err := DecodeString(b, i)
		if err == nil {
			err = fn(s, i, end)
		}
		return end, err
	case '{':
		return Object(b, i, func(_ string, v int) (int, error) { return stringsIn(b, v, depth+1, fn) })
	case '[':
		return Array(b, i, func(v int) (int, error) { return stringsIn(b, v, depth+1, fn) })
	}
	return Skip(b, i)
}

// Quote encodes s, valid UTF-8, as a JSON string, escaping only what JSON
// requires: '"', '\\' and control characters.
func Quote(s string) []byte {
	out := make([]byte, 0, len(s)+2)
	out = append(out, '"')
	out = AppendQuoted(out, s)
	return append(out, '"')
}

// AppendQuoted appends s to out as the inside of a JSON string.
func AppendQuoted(out []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		out = append(out, s[start:i]...)
		switch c {
		case '"', '\\':
			out = append(out, '\\', c)
		case '\n':
			out = append(out, '\\', 'n')
		case '\r':
			out = append(out, '\\', 'r')
		case '\t':
			out = append(out, '\\', 't')
		default:
			out = append(out, '\\', 'u', '0', '0', hexDigit[c>>4], hexDigit[c&0xf])
		}
		start = i + 1
	}
	return append(out, s[start:]...)
}

const hexDigit = "0123456789abcdef"

// Edit replaces b[Start:End] with New.
type Edit struct {
	Start, End int
	New        []byte
}

// Apply returns b[start:end] with edits applied. The edits must lie within
// [start, end), in order, without overlapping.
func Apply(b []byte, start, end int, edits []Edit) []byte {
	n := end - start
	for _, e := range edits {
		n += len(e.New) - (e.End - e.Start)
	}
	out := make([]byte, 0, n)
	at := start
	for _, e := range edits {
		out = append(out, b[at:e.Start]...)
		out = append(out, e.New...)
		at = e.End
	}
	return append(out, b[at:end]...)
}
