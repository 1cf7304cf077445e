// Command redact is an mcphost result plugin: it replaces every match of a
// regular expression in a tool result's text content, in the text of
// embedded text resources and in every string value of structuredContent.
//
// Config:
//
//	pattern      a Go regular expression (RE2 syntax); required
//	replacement  the replacement text; default "[REDACTED]" ($1 and ${name}
//	             expand as in regexp.ReplaceAllString)
//
// A result without a match is returned unchanged (empty output), so the host
// keeps the original. Object keys of structuredContent are never rewritten,
// nor are image or audio data, URIs and names.
//
// The plugin edits the input JSON in place (package jsonscan) rather than
// decoding it with encoding/json, which is slow inside a Go wasm guest.
//
// Build (from examples/plugins):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o redact.wasm ./redact
package main

import (
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strings"

	"github.com/extism/go-pdk"
	"github.com/mcphost/mcphost/examples/plugins/internal/jsonscan"
)

func main() {}

// The config cannot change during an instance's life, so the pattern is
// compiled once, on the first call (the host's warm-up call, which also makes
// a bad pattern a load error).
var (
	re                *regexp.Regexp
	replacement       string
	literal           bool   // replacement has no $ expansion
	quotedReplacement []byte // replacement escaped for JSON, when literal
	configErr         error
)

func loadConfig() error {
	if re != nil || configErr != nil {
		return configErr
	}
	p, ok := pdk.GetConfig("pattern")
	if !ok || p == "" {
		configErr = errors.New(`redact: config "pattern" is required`)
		return configErr
	}
	r, err := regexp.Compile(p)
	if err != nil {
		configErr = fmt.Errorf("redact: config pattern: %w", err)
		return configErr
	}
	replacement = "[REDACTED]"
	if s, ok := pdk.GetConfig("replacement"); ok {
		replacement = s
	}
	literal = !strings.Contains(replacement, "$")
	quotedReplacement = jsonscan.AppendQuoted(nil, replacement)
	re = r
	return nil
}

//go:wasmexport on_result
func onResult() int32 {
	defer runtime.Gosched() // let the guest's collector run before returning to the host
	if err := loadConfig(); err != nil {
		pdk.SetError(err)
		return 1
	}
	out, err := redact(pdk.Input())
	if err != nil {
		pdk.SetError(err)
		return 1
	}
	if out != nil {
		pdk.Output(out)
	}
	return 0
}

// redact returns the output document, or nil when nothing matched.
func redact(in []byte) ([]byte, error) {
	start, end := -1, -1
	var edits []jsonscan.Edit
	_, err := jsonscan.Object(in, 0, func(key string, v int) (int, error) {
		if key != "result" {
			return jsonscan.Skip(in, v)
		}
		start = jsonscan.WS(in, v)
		var err error
		end, err = result(in, v, &edits)
		return end, err
	})
	if err != nil {
		return nil, fmt.Errorf("redact: input: %w", err)
	}
	if len(edits) == 0 {
		return nil, nil
	}
	out := []byte(`{"result":`)
	out = append(out, jsonscan.Apply(in, start, end, edits)...)
	return append(out, '}'), nil
}

// replace adds an edit for the string at i when the pattern matches it, and
// returns the offset after the string.
func replace(in []byte, i int, edits *[]jsonscan.Edit) (int, error) {
	str, end, err := jsonscan.DecodeString(in, i)
	if err != nil {
		return end, err
	}
	replaceStr(str, jsonscan.WS(in, i), end, edits)
	return end, nil
}

// replaceStr adds an edit for str, written at [start, end), when the
// pattern matches it. The new string is the old one as written, between the
// matches, and the expanded replacements, so only the replacements need
// escaping.
func replaceStr(str jsonscan.Str, start, end int, edits *[]jsonscan.Edit) {
	var matches [][]int
	if literal {
		matches = re.FindAllStringIndex(str.S, -1) // no submatches to track: cheaper
	} else {
		matches = re.FindAllStringSubmatchIndex(str.S, -1)
	}
	if matches == nil {
		return
	}
	out := make([]byte, 0, len(str.Raw)+2)
	out = append(out, '"')
	prev := 0
	var exp []byte
	for _, m := range matches {
		out = append(out, str.Raw[str.RawOffset(prev):str.RawOffset(m[0])]...)
		if literal {
			out = append(out, quotedReplacement...)
		} else {
			exp = re.ExpandString(exp[:0], replacement, str.S, m)
			out = jsonscan.AppendQuoted(out, string(exp))
		}
		prev = m[1]
	}
	out = append(out, str.Raw[str.RawOffset(prev):]...)
	out = append(out, '"')
	*edits = append(*edits, jsonscan.Edit{Start: start, End: end, New: out})
}

// result walks the CallToolResult at i.
func result(in []byte, i int, edits *[]jsonscan.Edit) (int, error) {
	if jsonscan.Peek(in, i) != '{' {
		return jsonscan.Skip(in, i) // null: nothing to do
	}
	return jsonscan.Object(in, i, func(key string, v int) (int, error) {
		switch key {
		case "content":
			if jsonscan.Peek(in, v) != '[' {
				return jsonscan.Skip(in, v)
			}
			return jsonscan.Array(in, v, func(v int) (int, error) { return item(in, v, edits) })
		case "structuredContent":
			// Every string value, not the keys.
			return jsonscan.Strings(in, v, func(s jsonscan.Str, start, end int) error {
				replaceStr(s, start, end, edits)
				return nil
			})
		}
		return jsonscan.Skip(in, v)
	})
}

// item walks one content item. Its "type" may come after the strings it
// governs, so edits stay pending until the item ends.
func item(in []byte, i int, edits *[]jsonscan.Edit) (int, error) {
	if jsonscan.Peek(in, i) != '{' {
		return jsonscan.Skip(in, i)
	}
	var typ string
	var text, resource []jsonscan.Edit
	end, err := jsonscan.Object(in, i, func(key string, v int) (int, error) {
		switch key {
		case "type":
			s, end, err := jsonscan.String(in, v)
			typ = s
			return end, err
		case "text":
			return replace(in, v, &text)
		case "resource":
			if jsonscan.Peek(in, v) != '{' {
				return jsonscan.Skip(in, v)
			}
			return jsonscan.Object(in, v, func(key string, v int) (int, error) {
				if key != "text" {
					return jsonscan.Skip(in, v)
				}
				return replace(in, v, &resource)
			})
		}
		return jsonscan.Skip(in, v)
	})
	switch typ {
	case "text":
		*edits = append(*edits, text...)
	case "resource":
		*edits = append(*edits, resource...)
	}
	return end, err
}
