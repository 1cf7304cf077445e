package upstream

import (
	"encoding/json"
	"math"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// Most tools' input schemas are flat: an object of named properties, each
// a string, number, integer or boolean (or null beside one), some of them
// required, perhaps no others allowed. For those the validator's general
// walk costs more allocations than the rest of the call's own stages
// together; flatCheck checks them directly, and only what it does not pass
// goes to the validator (which then says why). It passes nothing the
// validator refuses (FuzzFlatCheck holds it to that).

// flatCheck reports whether decoded arguments match a flat schema.
type flatCheck func(args any) bool

// annotations are the keywords that do not constrain a value.
var annotations = map[string]bool{"title": true, "description": true, "default": true, "examples": true,
	"$comment": true, "deprecated": true, "readOnly": true, "writeOnly": true}

// flatTypes are the property types a flat schema may name.
var flatTypes = map[string]bool{"string": true, "number": true, "integer": true, "boolean": true, "null": true}

// newFlatCheck returns the check of s when s is flat, else nil.
func newFlatCheck(s *jsonschema.Schema) flatCheck {
	if s == nil {
		return nil
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return nil
	}
	var (
		props         = map[string][]string{}
		required      []string
		closed, typed bool
	)
	for k, v := range top {
		switch {
		case annotations[k], k == "$schema":
		case k == "type":
			var t string
			if json.Unmarshal(v, &t) != nil || t != "object" {
				return nil
			}
			typed = true
		case k == "required":
			if json.Unmarshal(v, &required) != nil {
				return nil
			}
		case k == "additionalProperties":
			// Only false (which the validator reads as {"not": {}}) is
			// flat; anything else constrains the other properties.
			var b bool
			var not map[string]map[string]any
			switch {
			case json.Unmarshal(v, &b) == nil && !b:
			case json.Unmarshal(v, &not) == nil && len(not) == 1 && not["not"] != nil && len(not["not"]) == 0:
			default:
				return nil
			}
			closed = true
		case k == "properties":
			var ps map[string]map[string]json.RawMessage
			if json.Unmarshal(v, &ps) != nil {
				return nil
			}
			for name, p := range ps {
				types, ok := flatProperty(p)
				if !ok {
					return nil
				}
				props[name] = types
			}
		default:
			return nil
		}
	}
	if !typed {
		return nil
	}
	return func(args any) bool {
		obj, ok := args.(map[string]any)
		if !ok {
			return false
		}
		for _, name := range required {
			if _, ok := obj[name]; !ok {
				return false
			}
		}
		for name, v := range obj {
			types, ok := props[name]
			if !ok {
				if closed {
					return false
				}
				continue
			}
			if !slices.ContainsFunc(types, func(t string) bool { return flatKind(v, t) }) {
				return false
			}
		}
		return true
	}
}

// flatProperty returns the types a property schema allows when it is
// flat: a "type" (one or a list of flat types) and annotations only.
func flatProperty(p map[string]json.RawMessage) ([]string, bool) {
	var types []string
	for k, v := range p {
		switch {
		case annotations[k]:
		case k == "type":
			var one string
			if json.Unmarshal(v, &one) == nil {
				types = []string{one}
			} else if json.Unmarshal(v, &types) != nil {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	if len(types) == 0 {
		return nil, false
	}
	for _, t := range types {
		if !flatTypes[t] {
			return nil, false
		}
	}
	return types, true
}

// flatKind reports whether a decoded JSON value is of schema type t.
func flatKind(v any, t string) bool {
	switch v := v.(type) {
	case nil:
		return t == "null"
	case string:
		return t == "string"
	case bool:
		return t == "boolean"
	case float64:
		if t == "number" {
			return true
		}
		_, frac := math.Modf(v)
		return t == "integer" && frac == 0
	}
	return false
}
