package policies

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcphost/mcphost/internal/jsonlex"
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
	sc := scanner{Lexer: jsonlex.Lexer{Data: raw, Prefix: "args"}}
	sc.WS()
	if sc.Pos >= len(raw) || raw[sc.Pos] != '{' {
		if err := sc.value(); err != nil {
			return nil, err
		}
		if err := sc.end(); err != nil {
			return nil, err
		}
		return nil, nil
	}
	l := &lazyArgs{raw: raw, adapter: adapter, members: make([]member, 0, 32)}
	sc.Pos++
	sc.WS()
	if sc.Peek() == '}' {
		sc.Pos++
		return l, sc.end()
	}
	for {
		sc.WS()
		ks := sc.Pos
		escaped, err := sc.Str()
		if err != nil {
			return nil, err
		}
		m := member{keyStart: int32(ks + 1), keyEnd: int32(sc.Pos - 1), unescaped: -1}
		// encoding/json replaces invalid UTF-8 in keys with U+FFFD, so such
		// keys are decoded like escaped ones.
		if escaped || !utf8.Valid(raw[m.keyStart:m.keyEnd]) {
			var key string
			if err := json.Unmarshal(raw[ks:sc.Pos], &key); err != nil {
				return nil, err
			}
			m.unescaped = int32(len(l.unescaped))
			l.unescaped = append(l.unescaped, key)
		}
		sc.WS()
		if sc.Peek() != ':' {
			return nil, sc.Errorf("expected ':' after object key")
		}
		sc.Pos++
		sc.WS()
		vs := sc.Pos
		if err := sc.value(); err != nil {
			return nil, err
		}
		m.start, m.end = int32(vs), int32(sc.Pos)
		l.members = append(l.members, m)
		sc.WS()
		switch sc.Peek() {
		case ',':
			sc.Pos++
			continue
		case '}':
			sc.Pos++
			return l, sc.end()
		}
		return nil, sc.Errorf("expected ',' or '}' after object value")
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
	jsonlex.Lexer
	stack [64]byte // backs the container stack of shallow values
}

var errArgsTooDeep = errors.New("args: exceeded max nesting depth")

func (s *scanner) end() error {
	s.WS()
	if s.Pos != len(s.Data) {
		return s.Errorf("unexpected data after the arguments object")
	}
	return nil
}

// value skips one value; containers are walked with an explicit stack so
// deep nesting cannot exhaust the goroutine stack.
func (s *scanner) value() error {
	stack := s.stack[:0] // '{' or '['
	for {
		s.WS()
		switch c := s.Peek(); c {
		case '{', '[':
			if len(stack) >= maxArgsDepth {
				return errArgsTooDeep
			}
			stack = append(stack, c)
			s.Pos++
			s.WS()
			if c == '{' && s.Peek() == '}' || c == '[' && s.Peek() == ']' {
				s.Pos++
				stack = stack[:len(stack)-1]
				break
			}
			if c == '{' {
				if err := s.key(); err != nil {
					return err
				}
			}
			continue // the first element
		default:
			if err := s.Scalar(true); err != nil {
				return err
			}
		}
		// A value ended: close containers or move to the next element.
		for {
			if len(stack) == 0 {
				return nil
			}
			s.WS()
			top := stack[len(stack)-1]
			c := s.Peek()
			if c == ',' {
				s.Pos++
				if top == '{' {
					s.WS()
					if err := s.key(); err != nil {
						return err
					}
				}
				break
			}
			if top == '{' && c == '}' || top == '[' && c == ']' {
				s.Pos++
				stack = stack[:len(stack)-1]
				continue
			}
			return s.Errorf("expected ',' or a closing bracket")
		}
	}
}

// key reads `"name" :` inside an object.
func (s *scanner) key() error {
	if _, err := s.Str(); err != nil {
		return err
	}
	s.WS()
	if s.Peek() != ':' {
		return s.Errorf("expected ':' after object key")
	}
	s.Pos++
	return nil
}
