package jsonkeys

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/mcphost/mcphost/internal/jsonlex"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Clash is a set of keys of one object that a parser may read as one key.
type Clash struct {
	// Pointer is the JSON Pointer (RFC 6901) of the object: "" for the
	// document itself, "/opts" for the member opts, "/items/0" for the
	// first element of items.
	Pointer string
	// Keys are the clashing keys as encoding/json decodes them, in the
	// order of the document; a key given twice is listed twice.
	Keys []string
}

// Duplicate reports whether a key of c is given more than once.
func (c Clash) Duplicate() bool {
	if len(c.Keys) <= pairwiseMax {
		for i, k := range c.Keys {
			if slices.Contains(c.Keys[:i], k) {
				return true
			}
		}
		return false
	}
	seen := make(map[string]struct{}, len(c.Keys))
	for _, k := range c.Keys {
		if _, dup := seen[k]; dup {
			return true
		}
		seen[k] = struct{}{}
	}
	return false
}

// MaxClashes is the most clashes [Scan] reports; past it, the rest of the
// document is still validated.
const MaxClashes = 16

// maxDepth matches encoding/json's nesting limit.
const maxDepth = 10000

// pairwiseMax is the number of keys up to which an object's keys are
// compared pair by pair; a larger object is grouped through a map.
const pairwiseMax = 16

var errTooDeep = errors.New("jsonkeys: exceeded max nesting depth")

// Scan validates data as one JSON value, accepting exactly what
// encoding/json.Valid accepts, and returns the clashes among the keys of
// each of its objects, at any depth, in the order the objects end (an
// inner object before the one holding it), at most [MaxClashes].
//
// Scan asks allow about each clash in which no key is given twice, with
// the keys as in [Clash.Keys]; a clash it accepts (keys the caller knows
// to be distinct members) is not reported. A key given twice is always
// reported. A nil allow accepts nothing.
//
// The error is for data that is not valid JSON, or nests deeper than
// encoding/json does (10,000 levels).
func Scan(data []byte, allow func(keys []string) bool) ([]Clash, error) {
	s := &scanner{Lexer: jsonlex.Lexer{Data: data, Prefix: "jsonkeys"}, allow: allow}
	if err := s.value(); err != nil {
		return nil, err
	}
	s.WS()
	if s.Pos != len(data) {
		return nil, s.Errorf("unexpected data after the value")
	}
	return s.clashes, nil
}

// Clashes groups keys, the keys of one decoded object, as [Scan] groups
// an object's keys: each group holds two or more keys that a parser may
// read as one, in the order of keys. A map's keys are distinct, so only
// case folding makes a group of them.
func Clashes(keys []string) [][]string {
	if len(keys) < 2 {
		return nil
	}
	first := make(map[string]int, len(keys))
	var groups [][]string
	var index map[int]int // first key's position -> its group
	for i, k := range keys {
		f := fold(k)
		j, seen := first[f]
		if !seen {
			first[f] = i
			continue
		}
		if index == nil {
			index = map[int]int{}
		}
		g, ok := index[j]
		if !ok {
			g = len(groups)
			index[j] = g
			groups = append(groups, []string{keys[j]})
		}
		groups[g] = append(groups[g], k)
	}
	return groups
}

// fold returns the key under which s is equal to every string that
// strings.EqualFold deems equal to it: each rune replaced by the smallest
// rune of its simple folding orbit (encoding/json's foldName does the
// same).
func fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		b.WriteRune(foldRune(r))
	}
	return b.String()
}

func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' {
			r -= 'a' - 'A'
		}
		// 'K' and 'S' have larger orbit mates (U+212A, U+017F), which
		// fold to them.
		return r
	}
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}

// frame is one open container.
type frame struct {
	obj   bool
	keys  int // len(scanner.keys) when the container opened: an object's keys follow
	index int // an array's current element
}

// scanner validates JSON (RFC 8259, as encoding/json reads it) and collects
// each open object's keys on one stack.
type scanner struct {
	jsonlex.Lexer
	frames  []frame
	keys    [][]byte // decoded keys of the open objects, innermost last
	allow   func([]string) bool
	clashes []Clash
}

// value reads one value; containers are walked with an explicit stack so
// deep nesting cannot exhaust the goroutine stack.
func (s *scanner) value() error {
	for {
		s.WS()
		switch c := s.Peek(); c {
		case '{', '[':
			if len(s.frames) >= maxDepth {
				return errTooDeep
			}
			s.Pos++
			s.WS()
			if c == '{' && s.Peek() == '}' || c == '[' && s.Peek() == ']' {
				s.Pos++
				break
			}
			s.frames = append(s.frames, frame{obj: c == '{', keys: len(s.keys)})
			if c == '{' {
				if err := s.key(); err != nil {
					return err
				}
			}
			continue // the first element
		default:
			if err := s.Scalar(false); err != nil {
				return err
			}
		}
		// A value ended: close containers or move to the next element.
		for {
			if len(s.frames) == 0 {
				return nil
			}
			s.WS()
			top := &s.frames[len(s.frames)-1]
			c := s.Peek()
			if c == ',' {
				s.Pos++
				if top.obj {
					s.WS()
					if err := s.key(); err != nil {
						return err
					}
				} else {
					top.index++
				}
				break
			}
			if top.obj && c == '}' || !top.obj && c == ']' {
				s.Pos++
				if top.obj {
					s.closeObject()
				}
				s.frames = s.frames[:len(s.frames)-1]
				continue
			}
			return s.Errorf("expected ',' or a closing bracket")
		}
	}
}

// key reads `"name" :` inside an object and puts the decoded name on the
// key stack.
func (s *scanner) key() error {
	start := s.Pos
	escaped, err := s.Str()
	if err != nil {
		return err
	}
	k := s.Data[start+1 : s.Pos-1]
	// encoding/json resolves escapes and replaces invalid UTF-8 and lone
	// surrogates with U+FFFD; such keys are decoded by it.
	if escaped || !utf8.Valid(k) {
		var d string
		if err := json.Unmarshal(s.Data[start:s.Pos], &d); err != nil {
			return s.Errorf("key: %v", err)
		}
		k = []byte(d)
	}
	s.keys = append(s.keys, k)
	s.WS()
	if s.Peek() != ':' {
		return s.Errorf("expected ':' after object key")
	}
	s.Pos++
	return nil
}

// closeObject reports the clashes among the keys of the innermost open
// object and drops them from the key stack.
func (s *scanner) closeObject() {
	top := s.frames[len(s.frames)-1]
	keys := s.keys[top.keys:]
	defer func() { s.keys = s.keys[:top.keys] }()
	if len(keys) < 2 || len(s.clashes) >= MaxClashes || !anyClash(keys) {
		return
	}
	strs := make([]string, len(keys))
	for i, k := range keys {
		strs[i] = string(k)
	}
	for _, g := range Clashes(strs) {
		c := Clash{Keys: g}
		if !c.Duplicate() && s.allow != nil && s.allow(g) {
			continue
		}
		if len(s.clashes) >= MaxClashes {
			return
		}
		c.Pointer = s.pointer()
		s.clashes = append(s.clashes, c)
	}
}

// anyClash reports whether two of keys clash, without allocating for a
// small object.
func anyClash(keys [][]byte) bool {
	if len(keys) > pairwiseMax {
		seen := make(map[string]struct{}, len(keys))
		for _, k := range keys {
			f := fold(string(k))
			if _, dup := seen[f]; dup {
				return true
			}
			seen[f] = struct{}{}
		}
		return false
	}
	for i := 1; i < len(keys); i++ {
		for _, k := range keys[:i] {
			if bytes.EqualFold(k, keys[i]) {
				return true
			}
		}
	}
	return false
}

// pointer returns the JSON Pointer of the innermost open container.
func (s *scanner) pointer() string {
	var b strings.Builder
	for i := 0; i+1 < len(s.frames); i++ {
		b.WriteByte('/')
		f := s.frames[i]
		if !f.obj {
			b.WriteString(strconv.Itoa(f.index))
			continue
		}
		// The member holding frame i+1 is the last key frame i read
		// before it opened.
		k := s.keys[s.frames[i+1].keys-1]
		for _, c := range string(k) {
			switch c {
			case '~':
				b.WriteString("~0")
			case '/':
				b.WriteString("~1")
			default:
				b.WriteRune(c)
			}
		}
	}
	return b.String()
}
