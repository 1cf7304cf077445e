package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// toolParams summarises a tool's input schema for `mcphost tools`: each
// top-level property as "name: type", required ones marked with "*" and
// first, each group in the order the server wrote its properties (by name
// when the schema is a decoded map, which lost it), e.g.
// "quarter*: string, region: string". A schema without properties gives "".
func toolParams(inputSchema any) string {
	s := schemaObject(inputSchema)
	props, _ := s["properties"].(map[string]any)
	if len(props) == 0 {
		return ""
	}
	required := map[string]bool{}
	if r, ok := s["required"].([]any); ok {
		for _, v := range r {
			if name, ok := v.(string); ok {
				required[name] = true
			}
		}
	}
	order := propertyOrder(inputSchema, props)
	parts := make([]string, 0, len(props))
	for _, name := range order {
		if required[name] {
			parts = append(parts, fmt.Sprintf("%s*: %s", name, schemaType(props[name])))
		}
	}
	for _, name := range order {
		if !required[name] {
			parts = append(parts, fmt.Sprintf("%s: %s", name, schemaType(props[name])))
		}
	}
	return strings.Join(parts, ", ")
}

// propertyOrder lists the names of props, the schema's properties, in the
// order the schema's own bytes give them when it is raw JSON, else by name.
func propertyOrder(schema any, props map[string]any) []string {
	var raw []byte
	switch v := schema.(type) {
	case json.RawMessage:
		raw = v
	case []byte:
		raw = v
	}
	var order []string
	if raw != nil {
		var s struct {
			Properties orderedKeys `json:"properties"`
		}
		if json.Unmarshal(raw, &s) == nil {
			order = s.Properties
		}
	}
	if len(order) != len(props) {
		order = slices.Sorted(maps.Keys(props))
	}
	return order
}

// orderedKeys decodes a JSON object into its keys, in order.
type orderedKeys []string

func (k *orderedKeys) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("not an object")
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := t.(string)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err
		}
		if !seen[name] {
			seen[name] = true
			*k = append(*k, name)
		}
	}
	return nil
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
