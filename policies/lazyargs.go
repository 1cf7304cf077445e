package policies

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"unicode/utf8"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
)

// lazyArgs is the args map read from raw JSON: one validating pass records
// where each top-level member is, and a member's value is decoded only when
// a rule reads it. A generic decode of a 2 KB object costs ~30 µs, far over
// the budget of a whole decision; rules read a few keys. Anything else a
// rule does with the whole map (size, iteration, equality, conversion)
// decodes it all once and delegates to CEL's own map, so the behaviour is
// exactly that of a decoded map[string]any.
type lazyArgs struct {
	raw       []byte
	members   []member
	unescaped []string // keys with escapes, by member.unescaped
	decoded   []decodedMember
	adapter   types.Adapter
	whole     traits.Mapper // set once fully decoded
}

// member is one top-level member, as spans of raw.
type member struct {
	keyStart, keyEnd int32 // key without quotes
	start, end       int32 // value
	unescaped        int32 // index into lazyArgs.unescaped, or -1
}

type decodedMember struct {
	member int
	val    ref.Val
}

func (l *lazyArgs) is(m *member, key string) bool {
	if m.unescaped >= 0 {
		return l.unescaped[m.unescaped] == key
	}
	return string(l.raw[m.keyStart:m.keyEnd]) == key
}

// maxArgsDepth matches encoding/json's nesting limit.
const maxArgsDepth = 10000

var _ traits.Mapper = (*lazyArgs)(nil)

// newLazyArgs validates raw as JSON and indexes its top-level members. It
// returns nil, nil when raw is valid JSON but not an object (the caller
// decodes it generically).
func newLazyArgs(raw []byte, adapter types.Adapter) (*lazyArgs, error) {
	if len(raw) > math.MaxInt32 {
		return nil, errors.New("args: larger than 2 GiB")
	}
	sc := scanner{data: raw}
	sc.ws()
	if sc.pos >= len(raw) || raw[sc.pos] != '{' {
		if err := sc.value(); err != nil {
			return nil, err
		}
		if err := sc.end(); err != nil {
			return nil, err
		}
		return nil, nil
	}
	l := &lazyArgs{raw: raw, adapter: adapter, members: make([]member, 0, 32)}
	sc.pos++
	sc.ws()
	if sc.peek() == '}' {
		sc.pos++
		return l, sc.end()
	}
	for {
		sc.ws()
		ks := sc.pos
		escaped, err := sc.str()
		if err != nil {
			return nil, err
		}
		m := member{keyStart: int32(ks + 1), keyEnd: int32(sc.pos - 1), unescaped: -1}
		// encoding/json replaces invalid UTF-8 in keys with U+FFFD, so such
		// keys are decoded like escaped ones.
		if escaped || !utf8.Valid(raw[m.keyStart:m.keyEnd]) {
			var key string
			if err := json.Unmarshal(raw[ks:sc.pos], &key); err != nil {
				return nil, err
			}
			m.unescaped = int32(len(l.unescaped))
			l.unescaped = append(l.unescaped, key)
		}
		sc.ws()
		if sc.peek() != ':' {
			return nil, sc.errorf("expected ':' after object key")
		}
		sc.pos++
		sc.ws()
		vs := sc.pos
		if err := sc.value(); err != nil {
			return nil, err
		}
		m.start, m.end = int32(vs), int32(sc.pos)
		l.members = append(l.members, m)
		sc.ws()
		switch sc.peek() {
		case ',':
			sc.pos++
			continue
		case '}':
			sc.pos++
			return l, sc.end()
		}
		return nil, sc.errorf("expected ',' or '}' after object value")
	}
}

// lookup returns the member's decoded value; the last duplicate wins, as in
// encoding/json (the schema check's decode agrees). The host refuses tool
// arguments with a duplicate key before any rule reads them, so that no
// server can read the first.
func (l *lazyArgs) lookup(key string) (ref.Val, bool) {
	if l.whole != nil {
		return l.whole.Find(types.String(key))
	}
	for i := len(l.members) - 1; i >= 0; i-- {
		m := &l.members[i]
		if !l.is(m, key) {
			continue
		}
		for _, d := range l.decoded {
			if d.member == i {
				return d.val, true
			}
		}
		v := l.decode(l.raw[m.start:m.end])
		l.decoded = append(l.decoded, decodedMember{member: i, val: v})
		return v, true
	}
	return nil, false
}

// decode converts one validated JSON value, with fast paths for scalars.
func (l *lazyArgs) decode(b []byte) ref.Val {
	switch b[0] {
	case 't':
		return types.True
	case 'f':
		return types.False
	case 'n':
		return types.NullValue
	case '"':
		if s := b[1 : len(b)-1]; bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
			return types.String(s)
		}
	case '{', '[':
	default:
		if f, err := strconv.ParseFloat(string(b), 64); err == nil {
			return types.Double(f)
		}
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return types.NewErr("args: %v", err)
	}
	return l.adapter.NativeToValue(v)
}

// full decodes the whole object once; afterwards every method delegates.
func (l *lazyArgs) full() traits.Mapper {
	if l.whole == nil {
		var m map[string]any
		if err := json.Unmarshal(l.raw, &m); err != nil {
			// Unreachable: newLazyArgs accepted raw only if encoding/json
			// decodes it. CEL turns the panic into an evaluation error,
			// which denies.
			panic(fmt.Sprintf("args: %v", err))
		}
		l.whole = types.NewStringInterfaceMap(l.adapter, m)
	}
	return l.whole
}

// FindStringKey is the interpreter's fast path for field selection.
func (l *lazyArgs) FindStringKey(key string) (any, bool) {
	return l.lookup(key)
}

func (l *lazyArgs) Find(key ref.Val) (ref.Val, bool) {
	if s, ok := key.(types.String); ok {
		return l.lookup(string(s))
	}
	return l.full().Find(key)
}

func (l *lazyArgs) Contains(key ref.Val) ref.Val {
	if s, ok := key.(types.String); ok {
		_, found := l.lookup(string(s))
		return types.Bool(found)
	}
	return l.full().Contains(key)
}

func (l *lazyArgs) Get(key ref.Val) ref.Val {
	if s, ok := key.(types.String); ok {
		if v, found := l.lookup(string(s)); found {
			return v
		}
	}
	return l.full().Get(key)
}

func (l *lazyArgs) Iterator() traits.Iterator { return l.full().Iterator() }
func (l *lazyArgs) Size() ref.Val             { return l.full().Size() }
func (l *lazyArgs) Equal(other ref.Val) ref.Val {
	if o, ok := other.(*lazyArgs); ok {
		other = o.full()
	}
	return l.full().Equal(other)
}
func (l *lazyArgs) ConvertToNative(t reflect.Type) (any, error) { return l.full().ConvertToNative(t) }
func (l *lazyArgs) ConvertToType(t ref.Type) ref.Val {
	if t == types.MapType {
		return l
	}
	return l.full().ConvertToType(t)
}
func (l *lazyArgs) Type() ref.Type { return types.MapType }
func (l *lazyArgs) Value() any     { return l.full().Value() }

// scanner validates JSON (RFC 8259) without building values.
type scanner struct {
	data  []byte
	pos   int
	stack [64]byte // backs the container stack of shallow values
}

var errArgsTooDeep = errors.New("args: exceeded max nesting depth")

func (s *scanner) errorf(format string, a ...any) error {
	return fmt.Errorf("args: invalid JSON at byte %d: %s", s.pos, fmt.Sprintf(format, a...))
}

func (s *scanner) peek() byte {
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

func (s *scanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *scanner) end() error {
	s.ws()
	if s.pos != len(s.data) {
		return s.errorf("unexpected data after the arguments object")
	}
	return nil
}

// value skips one value; containers are walked with an explicit stack so
// deep nesting cannot exhaust the goroutine stack.
func (s *scanner) value() error {
	stack := s.stack[:0] // '{' or '['
	for {
		s.ws()
		switch c := s.peek(); c {
		case '{', '[':
			if len(stack) >= maxArgsDepth {
				return errArgsTooDeep
			}
			stack = append(stack, c)
			s.pos++
			s.ws()
			if c == '{' && s.peek() == '}' || c == '[' && s.peek() == ']' {
				s.pos++
				stack = stack[:len(stack)-1]
				break
			}
			if c == '{' {
				if err := s.key(); err != nil {
					return err
				}
			}
			continue // the first element
		case '"':
			if _, err := s.str(); err != nil {
				return err
			}
		case 't':
			if err := s.lit("true"); err != nil {
				return err
			}
		case 'f':
			if err := s.lit("false"); err != nil {
				return err
			}
		case 'n':
			if err := s.lit("null"); err != nil {
				return err
			}
		default:
			if err := s.num(); err != nil {
				return err
			}
		}
		// A value ended: close containers or move to the next element.
		for {
			if len(stack) == 0 {
				return nil
			}
			s.ws()
			top := stack[len(stack)-1]
			c := s.peek()
			if c == ',' {
				s.pos++
				if top == '{' {
					s.ws()
					if err := s.key(); err != nil {
						return err
					}
				}
				break
			}
			if top == '{' && c == '}' || top == '[' && c == ']' {
				s.pos++
				stack = stack[:len(stack)-1]
				continue
			}
			return s.errorf("expected ',' or a closing bracket")
		}
	}
}

// key reads `"name" :` inside an object.
func (s *scanner) key() error {
	if _, err := s.str(); err != nil {
		return err
	}
	s.ws()
	if s.peek() != ':' {
		return s.errorf("expected ':' after object key")
	}
	s.pos++
	return nil
}

// strSpecial marks the bytes that end a run of plain string content.
var strSpecial = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// str skips a string and reports whether it has escapes.
func (s *scanner) str() (escaped bool, err error) {
	if s.peek() != '"' {
		return false, s.errorf("expected a string")
	}
	s.pos++
	for {
		rest := s.data[s.pos:]
		i := 0
		for i < len(rest) && !strSpecial[rest[i]] {
			i++
		}
		s.pos += i
		if i == len(rest) {
			return escaped, s.errorf("unterminated string")
		}
		switch rest[i] {
		case '"':
			s.pos++
			return escaped, nil
		case '\\':
			escaped = true
			s.pos++
			switch s.peek() {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.pos++
			case 'u':
				if s.pos+5 > len(s.data) {
					return escaped, s.errorf("short \\u escape")
				}
				for _, h := range s.data[s.pos+1 : s.pos+5] {
					if !isHex(h) {
						return escaped, s.errorf("invalid \\u escape")
					}
				}
				s.pos += 5
			default:
				return escaped, s.errorf("invalid escape")
			}
		default:
			return escaped, s.errorf("control character in string")
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func (s *scanner) lit(word string) error {
	if !bytes.HasPrefix(s.data[s.pos:], []byte(word)) {
		return s.errorf("invalid literal")
	}
	s.pos += len(word)
	return nil
}

// num skips a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) num() error {
	start := s.pos
	if s.peek() == '-' {
		s.pos++
	}
	switch c := s.peek(); {
	case c == '0':
		s.pos++
	case '1' <= c && c <= '9':
		s.digits()
	default:
		s.pos = start
		return s.errorf("invalid value")
	}
	if s.peek() == '.' {
		s.pos++
		if !s.digits() {
			return s.errorf("invalid number")
		}
	}
	exp := false
	if c := s.peek(); c == 'e' || c == 'E' {
		exp = true
		s.pos++
		if c := s.peek(); c == '+' || c == '-' {
			s.pos++
		}
		if !s.digits() {
			return s.errorf("invalid number")
		}
	}
	// encoding/json refuses numbers beyond float64; only long ones or ones
	// with an exponent can be.
	if exp || s.pos-start > 300 {
		if _, err := strconv.ParseFloat(string(s.data[start:s.pos]), 64); err != nil {
			return s.errorf("number out of range")
		}
	}
	return nil
}

func (s *scanner) digits() bool {
	start := s.pos
	for s.pos < len(s.data) && '0' <= s.data[s.pos] && s.data[s.pos] <= '9' {
		s.pos++
	}
	return s.pos > start
}
