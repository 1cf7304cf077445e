package upstream

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestWithoutOptionalNulls: a null of a property the schema does not
// require counts as not given when arguments are checked; a required one
// stays (and fails the check), and nothing else changes.
func TestWithoutOptionalNulls(t *testing.T) {
	s := &jsonschema.Schema{Type: "object", Required: []string{"a"}, Properties: map[string]*jsonschema.Schema{
		"a": {Type: "integer"}, "verbose": {Type: "boolean"},
	}}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args string
		ok   bool
	}{
		{"optional null", `{"a":1,"verbose":null}`, true},
		{"optional omitted", `{"a":1}`, true},
		{"required null", `{"a":null}`, false},
		{"optional wrong type", `{"a":1,"verbose":"yes"}`, false},
		{"unknown null", `{"a":1,"x":null}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v any
			if err := json.Unmarshal([]byte(tc.args), &v); err != nil {
				t.Fatal(err)
			}
			before, _ := json.Marshal(v)
			err := rs.Validate(withoutOptionalNulls(v, rs.Schema()))
			if (err == nil) != tc.ok {
				t.Errorf("validate: %v, want ok %v", err, tc.ok)
			}
			if after, _ := json.Marshal(v); string(after) != string(before) {
				t.Errorf("the arguments changed: %s → %s", before, after)
			}
		})
	}
}

// TestReadableMismatch: the arguments' simplest mismatches are said in
// words; others are left to the validator's message.
func TestReadableMismatch(t *testing.T) {
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(`{"type":"object","required":["quarter"],"properties":{
		"quarter":{"type":"string","enum":["Q1","Q2","Q3","Q4"]},
		"n":{"type":"integer"},"ratio":{"type":"number"},"tags":{"type":"array"},
		"flag":{"type":["boolean","null"]}}}`), &s); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, args, want string
	}{
		{"enum", `{"quarter":"Q5"}`, `quarter must be one of Q1, Q2, Q3, Q4 (got "Q5")`},
		{"missing", `{"n":1}`, `the required argument quarter is missing`},
		{"type", `{"quarter":"Q1","n":"3"}`, `n must be integer (got "3")`},
		{"not whole", `{"quarter":"Q1","n":1.5}`, `n must be integer (got 1.5)`},
		{"an integer is a number", `{"quarter":"Q1","ratio":2}`, ``},
		{"union", `{"quarter":"Q1","flag":"yes"}`, `flag must be boolean or null (got "yes")`},
		{"fits", `{"quarter":"Q1","tags":[],"flag":null}`, ``},
		{"not an object", `[]`, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v any
			if err := json.Unmarshal([]byte(tc.args), &v); err != nil {
				t.Fatal(err)
			}
			if got := readableMismatch(&s, v); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
