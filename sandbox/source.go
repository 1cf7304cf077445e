package sandbox

import (
	"errors"
	"fmt"
	"strings"
)

// ValidSource reports whether s is an allowed CSP source (apps.md §8.2):
//
//	source = scheme "://" ["*."] host [":" port]
//	scheme = "http" | "https" | "ws" | "wss"
//	host   = label *("." label)      label = 1*(ASCII letter | digit | "-")
//	port   = 1*5 digit, 1–65535
//
// It returns nil or an error saying what is wrong and at which byte. The
// error never quotes s, so it is safe to log and to send back.
//
// Every byte must be printable ASCII before anything else is looked at;
// nothing is case-folded on the way, so look-alikes such as U+212A KELVIN SIGN
// or U+017F LONG S (which Unicode folding maps to "k" and "s") are rejected.
// Scheme and host letters may be upper case; [CSP.Header] emits them lower
// case. Rejected by construction: ';', ',', quotes, whitespace, CR/LF, '*'
// alone, scheme-only sources ("https:"), data:, blob:, keywords ('self',
// 'none', 'unsafe-eval'), paths, queries, fragments, javascript:, userinfo and
// bracketed IP literals.
func ValidSource(s string) error {
	if s == "" {
		return errors.New("empty source")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x80:
			return fmt.Errorf("byte %d is not ASCII (look-alike characters are not folded)", i)
		case c < 0x20 || c == 0x7f:
			return fmt.Errorf("byte %d is a control character", i)
		case c == ' ':
			return fmt.Errorf("byte %d is whitespace", i)
		}
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return errors.New(`not of the form scheme://host: keywords, "*", scheme-only sources, data:, blob: and javascript: are not allowed`)
	}
	switch asciiLower(scheme) {
	case "http", "https", "ws", "wss":
	default:
		return errors.New("scheme must be http, https, ws or wss")
	}
	base := len(scheme) + len("://")
	if r, ok := strings.CutPrefix(rest, "*."); ok {
		rest = r
		base += len("*.")
	}
	// Name the first character that has no place in host or port, so that
	// "https://u:p@a.com" reads as userinfo rather than as a bad port.
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; !isAlnum(c) && c != '-' && c != '.' && c != ':' {
			return fmt.Errorf("byte %d: %s is not allowed", base+i, describe(c))
		}
	}
	host, port, hasPort := strings.Cut(rest, ":")
	if err := checkHost(host, base); err != nil {
		return err
	}
	if hasPort {
		if err := checkPort(port); err != nil {
			return err
		}
	}
	return nil
}

// checkHost checks host = label *("." label); base is host's offset in the
// source, for error positions.
func checkHost(host string, base int) error {
	if host == "" {
		return errors.New("empty host")
	}
	labelStart := true
	for i := 0; i < len(host); i++ {
		c := host[i]
		switch {
		case isAlnum(c) || c == '-':
			labelStart = false
		case c == '.':
			if labelStart {
				return fmt.Errorf("byte %d: empty label in host", base+i)
			}
			labelStart = true
		default:
			return fmt.Errorf("byte %d: %s is not allowed in a host", base+i, describe(c))
		}
	}
	if labelStart {
		return errors.New("host ends with an empty label")
	}
	return nil
}

// describe names a character that has no place in a source without echoing
// it: a fixed phrase for the usual suspects, a code point otherwise.
func describe(c byte) string {
	switch c {
	case ';':
		return "';' (directive separator)"
	case ',':
		return "',' (source separator)"
	case '\'', '"', '`':
		return "a quote"
	case '/', '?', '#':
		return "a path, query or fragment"
	case '@':
		return "userinfo"
	case '[', ']':
		return "a bracketed IP literal"
	case '*':
		return `a wildcard other than a leading "*."`
	}
	return fmt.Sprintf("U+%04X", c)
}

// checkPort checks port = 1*5 digit with a value of 1–65535.
func checkPort(port string) error {
	if port == "" || len(port) > 5 {
		return errors.New("port must be 1 to 5 digits")
	}
	n := 0
	for i := 0; i < len(port); i++ {
		c := port[i]
		if c < '0' || c > '9' {
			return errors.New("port must be 1 to 5 digits")
		}
		n = n*10 + int(c-'0')
	}
	if n < 1 || n > 65535 {
		return errors.New("port must be 1–65535")
	}
	return nil
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// asciiLower lowers ASCII letters only. strings.ToLower is not used on
// purpose: nothing in this package may fold non-ASCII input.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}
