package main

import (
	"encoding/json"
	"testing"
)

func TestToolParams(t *testing.T) {
	for _, tc := range []struct{ name, schema, want string }{
		{"none", `{"type":"object"}`, ""},
		{"not an object", `"x"`, ""},
		{"required first, then by name", `{"type":"object","required":["q"],"properties":{"z":{"type":"integer"},"a":{"type":"boolean"},"q":{"type":"string"}}}`, "q*: string, a: boolean, z: integer"},
		{"required in their own order, then by name", `{"required":["b","a","b"],"properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"string"}}}`, "a*: string, b*: string, c: string"},
		{"arrays, unions, enums, objects", `{"properties":{"tags":{"type":"array","items":{"type":"string"}},"n":{"type":["integer","null"]},"e":{"enum":[1,2]},"o":{"properties":{}},"x":{}}}`, "e: 1|2, n: integer|null, o: object, tags: string[], x: any"},
		{"required naming no property", `{"required":["ghost"],"properties":{"a":{"type":"string"}}}`, "a: string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s any
			if err := json.Unmarshal([]byte(tc.schema), &s); err != nil {
				t.Fatal(err)
			}
			if got := toolParams(s); got != tc.want {
				t.Errorf("toolParams(%s) = %q, want %q", tc.schema, got, tc.want)
			}
		})
	}
}

// TestToolParamsInSchemaOrder: a raw schema gives its properties in the
// order the server wrote them, required ones first; a key written twice
// keeps its first place (its last value, as decoding keeps).
func TestToolParamsInSchemaOrder(t *testing.T) {
	for _, tc := range []struct{ name, schema, want string }{
		{"written order", `{"required":["query"],"properties":{"query":{"type":"string"},"limit":{"type":"integer"},"cursor":{"type":"string"}}}`, "query*: string, limit: integer, cursor: string"},
		{"required in written order", `{"required":["b","a"],"properties":{"z":{},"b":{},"a":{}}}`, "b*: any, a*: any, z: any"},
		{"a key twice keeps its first place", `{"properties":{"z":{},"a":{},"z":{"type":"string"}}}`, "z: string, a: any"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := toolParams(json.RawMessage(tc.schema)); got != tc.want {
				t.Errorf("toolParams(%s) = %q, want %q", tc.schema, got, tc.want)
			}
		})
	}
}

func TestKVArguments(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"q":    map[string]any{"type": "string"},
		"n":    map[string]any{"type": "integer"},
		"x":    map[string]any{"type": "number"},
		"b":    map[string]any{"type": "boolean"},
		"tags": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		"ns":   map[string]any{"type": "array", "items": map[string]any{"type": "integer"}},
		"o":    map[string]any{"type": "object", "properties": map[string]any{}},
		"any":  map[string]any{},
	}}
	for _, tc := range []struct {
		name  string
		pairs []string
		want  string // JSON, or the error
		err   bool
	}{
		{"typed", []string{"q=Q3", "n=42", "x=1.5", "b=true"}, `{"b":true,"n":42,"q":"Q3","x":1.5}`, false},
		{"string keeps = and spaces", []string{"q=a = b "}, `{"q":"a = b "}`, false},
		{"repeated array keys", []string{"tags=a", "tags=b", "ns=1", "ns=2"}, `{"ns":[1,2],"tags":["a","b"]}`, false},
		{"JSON array", []string{`tags=["a","b"]`}, `{"tags":["a","b"]}`, false},
		{"raw JSON", []string{`q:="x"`, `n:=null`, `any:={"k":[1]}`}, `{"any":{"k":[1]},"n":null,"q":"x"}`, false},
		{"object as JSON", []string{`o={"a":1}`}, `{"o":{"a":1}}`, false},
		{"untyped is text", []string{"any=7"}, `{"any":"7"}`, false},
		{"not an integer", []string{"n=4.5"}, `n is an integer: "4.5" is not one (write n:=JSON for any other value)`, true},
		{"not a boolean", []string{"b=yes"}, `b is true or false, not "yes"`, true},
		{"unknown key", []string{"colour=red"}, `the tool has no parameter "colour" (it has: any, b, n, ns, o, q, tags, x)`, true},
		{"a near miss", []string{"tag=red"}, `the tool has no parameter "tag"; did you mean "tags"? (it has: any, b, n, ns, o, q, tags, x)`, true},
		{"twice", []string{"q=a", "q=b"}, `q is given twice, and it is not an array`, true},
		{"bad raw JSON", []string{"q:={"}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := kvArguments(schema, tc.pairs)
			switch {
			case tc.err && err == nil:
				t.Fatalf("kvArguments(%q) = %s, want an error", tc.pairs, got)
			case tc.err && tc.want != "" && err.Error() != tc.want:
				t.Errorf("error %q, want %q", err, tc.want)
			case !tc.err && err != nil:
				t.Fatalf("kvArguments(%q): %v", tc.pairs, err)
			case !tc.err && string(got) != tc.want:
				t.Errorf("kvArguments(%q) = %s, want %s", tc.pairs, got, tc.want)
			}
		})
	}
}
