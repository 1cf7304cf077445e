package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// isKeyValue reports whether a call argument is a key=value or key:=JSON
// pair rather than the JSON arguments object.
func isKeyValue(a string) bool {
	k, _, ok := strings.Cut(a, "=")
	return ok && k != "" && !strings.HasPrefix(strings.TrimSpace(a), "{")
}

// kvArguments builds the arguments object of `mcphost call SERVER.TOOL
// key=value …` from the tool's input schema: a value is typed by its
// property's type (a number for "integer" and "number", true or false for
// "boolean", JSON for "object", the text itself for "string"); an array
// property takes each repetition of its key as one element (typed by its
// "items"), or a JSON array; key:=JSON gives any value as raw JSON. A key
// the schema does not name is an error that lists the parameters. The
// whole object is then checked against the schema by the call pipeline.
func kvArguments(inputSchema any, pairs []string) (json.RawMessage, error) {
	props, _ := schemaObject(inputSchema)["properties"].(map[string]any)
	out := map[string]any{}
	for _, pair := range pairs {
		key, raw, isJSON := strings.Cut(pair, ":=")
		if !isJSON || strings.Contains(key, "=") {
			key, raw, _ = strings.Cut(pair, "=")
			isJSON = false
		}
		prop, known := props[key]
		if !known {
			if s := suggest(key, slices.Collect(maps.Keys(props))); s != "" {
				return nil, fmt.Errorf("the tool has no parameter %q; did you mean %q? (it has: %s)", key, s, paramNames(props))
			}
			return nil, fmt.Errorf("the tool has no parameter %q (it has: %s)", key, paramNames(props))
		}
		if isJSON {
			var v any
			if err := json.Unmarshal([]byte(raw), &v); err != nil {
				return nil, fmt.Errorf("%s:= needs a JSON value: %s", key, jsonError([]byte(raw)))
			}
			out[key] = v
			continue
		}
		p, _ := prop.(map[string]any)
		if schemaType(p) == "array" || strings.HasSuffix(schemaType(p), "[]") {
			if strings.HasPrefix(strings.TrimSpace(raw), "[") {
				var v []any
				if err := json.Unmarshal([]byte(raw), &v); err != nil {
					return nil, fmt.Errorf("%s is an array: give its elements as repeated %s=… or one JSON array: %s", key, key, jsonError([]byte(raw)))
				}
				out[key] = v
				continue
			}
			items, _ := p["items"].(map[string]any)
			v, err := typedValue(key, items, raw)
			if err != nil {
				return nil, err
			}
			cur, _ := out[key].([]any)
			out[key] = append(cur, v)
			continue
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("%s is given twice, and it is not an array", key)
		}
		v, err := typedValue(key, p, raw)
		if err != nil {
			return nil, err
		}
		out[key] = v
	}
	return json.Marshal(out)
}

// typedValue converts the text of key=value to the type its schema names.
func typedValue(key string, prop map[string]any, raw string) (any, error) {
	switch t := schemaType(prop); {
	case strings.Contains(t, "integer"):
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s is an integer: %q is not one (write %s:=JSON for any other value)", key, raw, key)
		}
		return n, nil
	case strings.Contains(t, "number"):
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return nil, fmt.Errorf("%s is a number: %q is not one (write %s:=JSON for any other value)", key, raw, key)
		}
		return f, nil
	case strings.Contains(t, "boolean"):
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return nil, fmt.Errorf("%s is true or false, not %q", key, raw)
		}
		return b, nil
	case t == "object":
		var v any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			return nil, fmt.Errorf("%s is an object: give it as JSON: %s", key, jsonError([]byte(raw)))
		}
		return v, nil
	}
	return raw, nil
}

// paramNames lists a schema's property names, sorted.
func paramNames(props map[string]any) string {
	if len(props) == 0 {
		return "no parameters"
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
