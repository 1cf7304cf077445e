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
		{"arrays, unions, enums, objects", `{"properties":{"tags":{"type":"array","items":{"type":"string"}},"n":{"type":["integer","null"]},"e":{"enum":[1,2]},"o":{"properties":{}},"x":{}}}`, "e: enum, n: integer|null, o: object, tags: string[], x: any"},
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
