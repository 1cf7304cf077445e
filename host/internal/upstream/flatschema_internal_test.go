package upstream

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// flatSchemas are flat input schemas as servers write them.
var flatSchemas = []string{
	`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`,
	`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"integer","description":"whole"}},"required":["a","b"],"additionalProperties":false}`,
	`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","title":"t","properties":{"on":{"type":"boolean"},"n":{"type":["integer","null"]}}}`,
	`{"type":"object"}`,
	`{"type":"object","properties":{},"additionalProperties":false}`,
}

func resolve(t testing.TB, schema string) *jsonschema.Resolved {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func TestNewFlatCheck(t *testing.T) {
	for _, s := range flatSchemas {
		if newFlatCheck(resolve(t, s).Schema()) == nil {
			t.Errorf("%s is flat, got no check", s)
		}
	}
	for _, s := range []string{
		`{"type":"object","properties":{"s":{"type":"string","minLength":2}}}`,
		`{"type":"object","properties":{"s":{"type":"string","enum":["a"]}}}`,
		`{"type":"object","properties":{"s":{"type":"string","format":"uri"}}}`,
		`{"type":"object","properties":{"o":{"type":"object"}}}`,
		`{"type":"object","properties":{"l":{"type":"array","items":{"type":"string"}}}}`,
		`{"type":"object","properties":{"s":{}}}`,
		`{"type":"object","additionalProperties":{"type":"string"}}`,
		`{"type":"object","patternProperties":{"^x":{"type":"string"}}}`,
		`{"type":"object","properties":{"s":{"$ref":"#/$defs/s"}},"$defs":{"s":{"type":"string"}}}`,
		`{"properties":{"s":{"type":"string"}}}`,
		`{"type":"object","anyOf":[{"required":["a"]}]}`,
	} {
		if newFlatCheck(resolve(t, s).Schema()) != nil {
			t.Errorf("%s is not flat, got a check", s)
		}
	}
}

// FuzzFlatCheck: on a flat schema, the flat check and the validator agree
// on every argument object.
func FuzzFlatCheck(f *testing.F) {
	for _, a := range []string{`{"text":"x"}`, `{}`, `{"a":1,"b":2}`, `{"a":1.5,"b":2.5}`, `{"a":"1","b":2}`, `{"a":1,"b":2,"c":3}`,
		`{"on":true,"n":null}`, `{"n":3}`, `{"n":3.1}`, `{"text":null}`, `[1]`, `"x"`, `{"on":"true"}`} {
		for i := range flatSchemas {
			f.Add(i, []byte(a))
		}
	}
	schemas := make([]*jsonschema.Resolved, len(flatSchemas))
	checks := make([]flatCheck, len(flatSchemas))
	for i, s := range flatSchemas {
		schemas[i] = resolve(f, s)
		checks[i] = newFlatCheck(schemas[i].Schema())
	}
	f.Fuzz(func(t *testing.T, i int, args []byte) {
		if i < 0 || i >= len(schemas) {
			return
		}
		var v any
		if json.Unmarshal(args, &v) != nil {
			return
		}
		flat := checks[i](v)
		full := schemas[i].Validate(v) == nil
		if flat != full {
			t.Fatalf("schema %s, arguments %s: flat check %v, validator %v", flatSchemas[i], args, flat, full)
		}
	})
}
