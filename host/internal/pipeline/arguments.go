package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcphost/mcphost/host/internal/upstream"
	"github.com/mcphost/mcphost/internal/jsonkeys"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ObjectArguments checks that raw is a JSON object (or empty) and returns it
// ready to send unchanged.
func ObjectArguments(raw json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return json.RawMessage("{}"), nil
	}
	if trimmed[0] != '{' || !json.Valid(trimmed) {
		return nil, &upstream.ArgumentsError{Reason: "the arguments must be a JSON object, such as {\"quarter\": \"Q3\"}"}
	}
	return json.RawMessage(trimmed), nil
}

// CheckArgumentKeys refuses arguments in which an object, at any depth,
// has a key twice or two keys equal under Unicode simple case folding
// (strings.EqualFold), unless the tool's input schema lists those keys as
// properties of one object. The policies read the arguments by exact key,
// the last duplicate winning as in encoding/json, while the server gets
// the arguments as sent: a parser that keeps the first duplicate, or binds
// keys to struct fields regardless of case as Go's encoding/json does,
// would act on a value no rule saw (research/redteam.md F4). Without such
// keys every parser reads each member alike, so the bytes the policies
// decided on are the ones forwarded.
func CheckArgumentKeys(args json.RawMessage, tool *mcp.Tool) error {
	var named func([]string) bool
	clashes, err := jsonkeys.Scan(args, func(keys []string) bool {
		if named == nil {
			named = schemaNamesApart(tool) // only when keys clash
		}
		return named(keys)
	})
	if err != nil {
		return &upstream.ArgumentsError{Reason: err.Error()}
	}
	if len(clashes) == 0 {
		return nil
	}
	return &upstream.ArgumentsError{Reason: ClashReason(clashes)}
}

// schemaNamesApart returns whether one object of tool's input schema
// lists every one of keys as a property: then the server names them apart
// itself. Any object of the schema counts, wherever the clashing keys
// are in the arguments; a schema that does not decode names none.
func schemaNamesApart(tool *mcp.Tool) func(keys []string) bool {
	var sets []map[string]*jsonschema.Schema
	var s jsonschema.Schema
	if raw, err := json.Marshal(tool.InputSchema); err == nil && json.Unmarshal(raw, &s) == nil {
		walkSchemas(&s, func(s *jsonschema.Schema) {
			if len(s.Properties) > 1 {
				sets = append(sets, s.Properties)
			}
		})
	}
	return func(keys []string) bool {
		for _, props := range sets {
			all := true
			for _, k := range keys {
				if _, ok := props[k]; !ok {
					all = false
					break
				}
			}
			if all {
				return true
			}
		}
		return false
	}
}

// walkSchemas calls f on s and every schema inside it: every field of
// jsonschema.Schema that holds schemas (properties, items, allOf, $defs,
// if/then/else …), found by type as jsonschema-go walks them itself.
func walkSchemas(s *jsonschema.Schema, f func(*jsonschema.Schema)) {
	if s == nil {
		return
	}
	f(s)
	v := reflect.ValueOf(s).Elem()
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		switch fv := v.Field(i).Interface().(type) {
		case *jsonschema.Schema:
			walkSchemas(fv, f)
		case []*jsonschema.Schema:
			for _, c := range fv {
				walkSchemas(c, f)
			}
		case map[string]*jsonschema.Schema:
			for _, c := range fv {
				walkSchemas(c, f)
			}
		}
	}
}

// ClashReason names the clashing keys (at most three clashes, each key cut
// to 64 bytes and quoted in ASCII, so that a look-alike such as the Kelvin
// sign shows as \u212a) and says what to send instead.
func ClashReason(clashes []jsonkeys.Clash) string {
	var b strings.Builder
	b.WriteString("keys that a server may read as one key: ")
	for i, c := range clashes {
		if i == 3 {
			fmt.Fprintf(&b, "; and %d more", len(clashes)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		seen := map[string]bool{}
		var names []string
		for _, k := range c.Keys {
			if !seen[k] {
				seen[k] = true
				names = append(names, fmt.Sprintf("%+q", Cut(k, 64)))
			}
		}
		switch {
		case len(names) == 1:
			fmt.Fprintf(&b, "%s given %d times", names[0], len(c.Keys))
		case len(names) > 4:
			fmt.Fprintf(&b, "%s and %d more that differ only in case", strings.Join(names[:4], ", "), len(names)-4)
		default:
			fmt.Fprintf(&b, "%s and %s", strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
			if c.Duplicate() {
				b.WriteString(" (one of them given twice, the others differing only in case)")
			} else {
				b.WriteString(" (they differ only in case)")
			}
		}
		if c.Pointer != "" {
			fmt.Fprintf(&b, " in the object at %+q", Cut(c.Pointer, 128))
		}
	}
	b.WriteString(". Send each key once, in one spelling")
	return b.String()
}

// Cut shortens s to at most n bytes, on a rune boundary, marking the cut.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
