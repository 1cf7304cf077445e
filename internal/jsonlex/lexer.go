package jsonlex

import (
	"bytes"
	"fmt"
	"strconv"
)

// Lexer reads tokens of Data from Pos on.
type Lexer struct {
	Data []byte
	Pos  int
	// Prefix starts every error, naming the reader ("args", "jsonkeys").
	Prefix string
}

// Errorf is an error at the current position.
func (l *Lexer) Errorf(format string, a ...any) error {
	return fmt.Errorf("%s: invalid JSON at byte %d: %s", l.Prefix, l.Pos, fmt.Sprintf(format, a...))
}

// Peek returns the byte at Pos, or 0 at the end.
func (l *Lexer) Peek() byte {
	if l.Pos < len(l.Data) {
		return l.Data[l.Pos]
	}
	return 0
}

// WS skips white space.
func (l *Lexer) WS() {
	for l.Pos < len(l.Data) {
		switch l.Data[l.Pos] {
		case ' ', '\t', '\n', '\r':
			l.Pos++
		default:
			return
		}
	}
}

// strSpecial marks the bytes that end a run of plain string content.
var strSpecial = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// Str skips a string and reports whether it has escapes.
func (l *Lexer) Str() (escaped bool, err error) {
	if l.Peek() != '"' {
		return false, l.Errorf("expected a string")
	}
	l.Pos++
	for {
		rest := l.Data[l.Pos:]
		i := 0
		for i < len(rest) && !strSpecial[rest[i]] {
			i++
		}
		l.Pos += i
		if i == len(rest) {
			return escaped, l.Errorf("unterminated string")
		}
		switch rest[i] {
		case '"':
			l.Pos++
			return escaped, nil
		case '\\':
			escaped = true
			l.Pos++
			if err := l.escape(); err != nil {
				return escaped, err
			}
		default:
			return escaped, l.Errorf("control character in string")
		}
	}
}

// escape skips the escape after a backslash.
func (l *Lexer) escape() error {
	switch l.Peek() {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		l.Pos++
	case 'u':
		if l.Pos+5 > len(l.Data) {
			return l.Errorf("short \\u escape")
		}
		for _, h := range l.Data[l.Pos+1 : l.Pos+5] {
			if !isHex(h) {
				return l.Errorf("invalid \\u escape")
			}
		}
		l.Pos += 5
	default:
		return l.Errorf("invalid escape")
	}
	return nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// Scalar skips the string, literal or number at Pos (inRange: see Num).
func (l *Lexer) Scalar(inRange bool) error {
	var err error
	switch l.Peek() {
	case '"':
		_, err = l.Str()
	case 't':
		err = l.Lit("true")
	case 'f':
		err = l.Lit("false")
	case 'n':
		err = l.Lit("null")
	default:
		err = l.Num(inRange)
	}
	return err
}

// Lit skips the literal word (true, false, null).
func (l *Lexer) Lit(word string) error {
	if !bytes.HasPrefix(l.Data[l.Pos:], []byte(word)) {
		return l.Errorf("invalid literal")
	}
	l.Pos += len(word)
	return nil
}

// Num skips a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
// With inRange it also refuses one beyond float64, as encoding/json's
// Unmarshal does (json.Valid does not check the range).
func (l *Lexer) Num(inRange bool) error {
	start := l.Pos
	if l.Peek() == '-' {
		l.Pos++
	}
	switch c := l.Peek(); {
	case c == '0':
		l.Pos++
	case '1' <= c && c <= '9':
		l.digits()
	default:
		l.Pos = start
		return l.Errorf("invalid value")
	}
	if l.Peek() == '.' {
		l.Pos++
		if !l.digits() {
			return l.Errorf("invalid number")
		}
	}
	exp := false
	if c := l.Peek(); c == 'e' || c == 'E' {
		exp = true
		l.Pos++
		if c := l.Peek(); c == '+' || c == '-' {
			l.Pos++
		}
		if !l.digits() {
			return l.Errorf("invalid number")
		}
	}
	// Only long numbers or ones with an exponent can be out of range.
	if inRange && (exp || l.Pos-start > 300) {
		if _, err := strconv.ParseFloat(string(l.Data[start:l.Pos]), 64); err != nil {
			return l.Errorf("number out of range")
		}
	}
	return nil
}

func (l *Lexer) digits() bool {
	start := l.Pos
	for l.Pos < len(l.Data) && '0' <= l.Data[l.Pos] && l.Data[l.Pos] <= '9' {
		l.Pos++
	}
	return l.Pos > start
}
