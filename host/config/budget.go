package config

import (
	"fmt"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
)

// Bounds on what loading one configuration may cost, beside MaxConfigSize,
// MaxFileSize and MaxNestingDepth (RATIONALE.md, "Config loading is
// bounded").
const (
	// MaxConfigTokens bounds the tokens of a configuration file, counted
	// by checkTokens before HCL's lexer sees the file. HCL's lexer and
	// parser allocate about a kilobyte for each token and keep a few
	// hundred bytes of it until the load ends, so 4 MiB of `${"a"}` (3
	// million tokens) took 1.4 GB and 13 s to refuse, on every reload too.
	// At the bound, the densest files take about 250 MB and 2 s. A real
	// configuration counts a few thousand; 3,500 policy blocks like those
	// of examples/hcl/policies.hcl count 255,000.
	MaxConfigTokens = 1 << 18

	// MaxFunctionBytes bounds what env(), file() and executable() return
	// in one load, all calls together (16 MiB, sixteen files as large as
	// file() reads). A call is a few bytes of source and its value up to
	// a megabyte, so 2,000 calls of file() in a 36 KB file took 13 GB
	// and two minutes; the call that passes the bound is an error, and
	// the calls after it return nothing and read nothing.
	MaxFunctionBytes = 16 << 20
)

// checkTokens returns a "Too many tokens" diagnostic at the first token of
// src past MaxConfigTokens, or nil. It reads src once and allocates
// nothing, so that a hostile file is refused before HCL lexes it.
//
// What it counts is an upper bound of HCL's tokens up to a small factor,
// whatever the lexer's mode (strings, heredocs, comments, templates), so
// that no input gets many more tokens past it than it counted:
//
//   - a run of ASCII letters, digits and '_' is one token (HCL makes at
//     most two of one: `1a` is a number and a name);
//   - each other byte is one, except spaces and tabs, which are none, and
//     each non-ASCII character is one (HCL makes one token of each
//     character it does not know, and of each byte of broken UTF-8).
//
// A token HCL makes of spaces alone (`" "`) lies between two that are
// counted. Text in strings and comments counts per word and symbol, so the
// count of a real configuration is about twice HCL's.
func checkTokens(src []byte, filename string) *hcl.Diagnostic {
	if _, at, size := tokensUpTo(src, MaxConfigTokens); at >= 0 {
		return tooManyTokens(src, filename, at, size)
	}
	return nil
}

// tokensUpTo counts the tokens of src as checkTokens describes, until the
// count passes limit. It returns the count and, when it passes limit, the
// offset and size of the token that passes it; at is -1 when it does not.
func tokensUpTo(src []byte, limit int) (n, at, size int) {
	inRun := false
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t':
			inRun = false
			i++
			continue
		case isWordByte(c):
			if inRun {
				i++
				continue
			}
			inRun = true
		default:
			inRun = false
		}
		n++
		size = 1
		if c >= utf8.RuneSelf {
			_, size = utf8.DecodeRune(src[i:])
		}
		if n > limit {
			return n, i, size
		}
		i += size
	}
	return n, -1, 0
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// tooManyTokens is checkTokens' diagnostic at the token that starts at
// src[at] (size bytes of it are marked).
func tooManyTokens(src []byte, filename string, at, size int) *hcl.Diagnostic {
	start := posAt(src, at)
	end := start
	end.Byte += size
	end.Column++
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Too many tokens",
		Detail: fmt.Sprintf("The configuration has more than %d tokens by here, the most mcphost reads: reading costs memory for each one, so a file this dense would make every load and reload take hundreds of megabytes. "+
			"Each name, number, symbol, line break and word of a string or comment is a token. A real configuration has a few thousand; remove repeated parts or move long text out of the file.", MaxConfigTokens),
		Subject: &hcl.Range{Filename: filename, Start: start, End: end},
	}
}

// posAt is the position of src[at]: its line, its column in characters
// (HCL counts grapheme clusters, which differs only after combining
// characters) and its byte offset. A UTF-8 byte order mark takes no column,
// as in HCL.
func posAt(src []byte, at int) hcl.Pos {
	pos := hcl.Pos{Line: 1, Column: 1, Byte: at}
	lineStart := 0
	for i := 0; i < at; i++ {
		if src[i] == '\n' {
			pos.Line++
			lineStart = i + 1
		}
	}
	line := src[lineStart:at]
	if pos.Line == 1 && len(line) >= 3 && string(line[:3]) == "\uFEFF" {
		line = line[3:]
	}
	pos.Column += utf8.RuneCount(line)
	return pos
}
