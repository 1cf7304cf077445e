package transport

// A look at the top level of a JSON-RPC message, without decoding it.
//
// The checks in this package need two or three members of each message
// that crosses a remote server's HTTP client: the id and the method of the
// call a POST carries (AnswerCheck), its method and params.name for the
// headers legacy sessions lack (HeaderShim), the id of each answer
// (strayAnswer). Decoding the whole message for them with encoding/json
// scanned every byte of the arguments and of the result twice more per
// call, on top of go-sdk's own encoding and decoding (BenchmarkUpstreamCall
// in host/internal/upstream). scanMembers finds the members by skipping
// over the values it is not asked for, and says when it cannot be sure of
// what encoding/json would have decoded: the callers then decode as before,
// so every answer is still what the decoding gave.

import (
	"bytes"
	"encoding/json"
)

// scanMembers looks at the members of the JSON object data holds and puts
// the raw value of each member named names[i] into vals[i] (nil when there
// is none). With toEnd false it stops as soon as every name has been seen
// (what a json.Decoder reading tokens up to them would see), and every
// value up to there is checked to be JSON; with toEnd true it reads to the
// object's end, and checks only the framing of the values it skips.
//
// It reports false when it cannot say what encoding/json would decode: data
// does not hold an object, the object or a value is cut short, a key holds
// an escape or a byte outside printable ASCII, or a key matches one of
// names twice or in another case (encoding/json matches names without
// regard to case, and the last one wins).
func scanMembers(data []byte, names []string, vals [][]byte, toEnd bool) bool {
	clear(vals)
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return true
	}
	seen := 0
	for {
		if i >= len(data) || data[i] != '"' {
			return false
		}
		end, plain := stringEnd(data, i)
		if end < 0 || !plain {
			return false
		}
		key := data[i+1 : end-1]
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		i = skipSpace(data, i+1)
		vend := valueEnd(data, i)
		if vend < 0 {
			return false
		}
		value := data[i:vend]
		if !toEnd && !json.Valid(value) {
			return false
		}
		for n, name := range names {
			if !bytes.EqualFold(key, []byte(name)) {
				continue
			}
			if vals[n] != nil || string(key) != name {
				return false
			}
			vals[n] = value
			seen++
		}
		if !toEnd && seen == len(names) {
			return true
		}
		i = skipSpace(data, vend)
		switch {
		case i >= len(data):
			return false
		case data[i] == '}':
			return true
		case data[i] != ',':
			return false
		}
		i = skipSpace(data, i+1)
	}
}

// plainString returns the contents of value when it is a JSON string with
// no escape and only printable ASCII (what encoding/json decodes to the
// same bytes), "" and true for null or no value, and false otherwise.
func plainString(value []byte) (string, bool) {
	if value == nil || string(value) == "null" {
		return "", true
	}
	if len(value) < 2 || value[0] != '"' {
		return "", false
	}
	end, plain := stringEnd(value, 0)
	if end != len(value) || !plain {
		return "", false
	}
	return string(value[1 : end-1]), true
}

func skipSpace(b []byte, i int) int {
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

// stringEnd returns the index just past the JSON string that starts at
// b[i] (a quote), or -1 when it does not end within b; plain says that it
// holds no escape and only printable ASCII.
func stringEnd(b []byte, i int) (end int, plain bool) {
	plain = true
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1, plain
		case c == '\\':
			plain = false
			j++ // the escaped byte (of \uXXXX, the u) is not a quote
		case c < 0x20 || c >= 0x7f:
			plain = false
		}
	}
	return -1, false
}

// valueEnd returns the index just past the JSON value that starts at b[i],
// or -1 when it does not end within b. It follows strings and the nesting
// of brackets, and takes a number or a literal to run up to the next
// delimiter; it does not check that the value is JSON.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		end, _ := stringEnd(b, i)
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, _ := stringEnd(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	case ',', '}', ']', ':':
		return -1
	}
	for j := i; j < len(b); j++ {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
	}
	return -1 // inside an object, a value at the very end is cut short
}
