package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// toolParams summarises a tool's input schema for `mcphost tools`: each
// top-level property as "name: type", required ones marked with "*", in the
// schema's required order first and then by name, e.g.
// "quarter*: string, region: string". A schema without properties gives "".
func toolParams(inputSchema any) string {
	s := schemaObject(inputSchema)
	props, _ := s["properties"].(map[string]any)
	if len(props) == 0 {
		return ""
	}
	var required []string
	if r, ok := s["required"].([]any); ok {
		for _, v := range r {
			if name, ok := v.(string); ok && props[name] != nil && !slices.Contains(required, name) {
				required = append(required, name)
			}
		}
	}
	var optional []string
	for name := range props {
		if !slices.Contains(required, name) {
			optional = append(optional, name)
		}
	}
	sort.Strings(optional)
	parts := make([]string, 0, len(props))
	for _, name := range required {
		parts = append(parts, fmt.Sprintf("%s*: %s", name, schemaType(props[name])))
	}
	for _, name := range optional {
		parts = append(parts, fmt.Sprintf("%s: %s", name, schemaType(props[name])))
	}
	return strings.Join(parts, ", ")
}

// schemaObject returns a JSON schema as a map, whatever Go type holds it
// (a decoded map, a jsonschema.Schema, raw JSON); nil when it is none.
func schemaObject(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return m
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

// schemaType names the type of one property: its values ("Q1|Q2|Q3")
// when it is a short enum, else its "type" ("string", "integer|null"),
// "string[]" for an array of strings, "enum" or "object" when that is all
// there is, "any" otherwise.
func schemaType(v any) string {
	p, _ := v.(map[string]any)
	if values := enumValues(p); values != "" {
		return values
	}
	switch t := p["type"].(type) {
	case string:
		if t == "array" {
			if items, ok := p["items"].(map[string]any); ok {
				if it, ok := items["type"].(string); ok {
					return it + "[]"
				}
			}
		}
		return t
	case []any:
		var names []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				names = append(names, s)
			}
		}
		if len(names) > 0 {
			return strings.Join(names, "|")
		}
	}
	switch {
	case p["enum"] != nil:
		return "enum"
	case p["properties"] != nil:
		return "object"
	}
	return "any"
}

// maxEnumText bounds how long the values of an enum may be, joined, for
// `mcphost tools` to show them instead of its type.
const maxEnumText = 60

// enumValues returns the values of p's enum joined with "|", or "" when it
// has none, one that is not a string or number, or too many to show.
func enumValues(p map[string]any) string {
	values, _ := p["enum"].([]any)
	if len(values) == 0 {
		return ""
	}
	parts := make([]string, 0, len(values))
	for _, v := range values {
		switch v := v.(type) {
		case string:
			parts = append(parts, v)
		case float64:
			parts = append(parts, strconv.FormatFloat(v, 'g', -1, 64))
		default:
			return ""
		}
	}
	text := strings.Join(parts, "|")
	if len(text) > maxEnumText {
		return ""
	}
	return text
}
