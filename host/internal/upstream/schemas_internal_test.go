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
