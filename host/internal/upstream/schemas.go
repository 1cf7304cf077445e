package upstream

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcphost/mcphost/host/internal/transport"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Validate checks args against the tool's input schema. A schema that
// cannot be compiled (remote $ref, unsupported draft) is not enforced here:
// the server validates its own input, and the catalog reports the tool in
// the server's status (uncheckedTools) and logs it once per fetch.
//
// It returns the decoded arguments when it decoded them (the policies reuse
// them), else nil.
func (cat *Catalog) Validate(tool *mcp.Tool, args json.RawMessage) (any, error) {
	rs := cat.Schema(tool)
	if rs == nil {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return nil, &ArgumentsError{Reason: err.Error()}
	}
	w := withoutOptionalNulls(v, rs.Schema())
	if check := cat.flat(rs); check != nil && check(w) {
		return v, nil
	}
	if err := rs.Validate(w); err != nil {
		why := readableMismatch(rs.Schema(), v)
		if why == "" {
			why = err.Error()
		}
		return nil, &ArgumentsError{Reason: fmt.Sprintf("the arguments do not match the input schema of %s: %s", tool.Name, why)}
	}
	return v, nil
}

// readableMismatch says, in words a person reads, the first of the
// simplest ways args miss s: a required argument missing, a value that is
// not one of its enum, or not of its type; "" when the mismatch is none of
// these (the validator's own message is then shown).
func readableMismatch(s *jsonschema.Schema, args any) string {
	obj, ok := args.(map[string]any)
	if !ok || s == nil {
		return ""
	}
	for _, name := range s.Required {
		if _, ok := obj[name]; !ok {
			return fmt.Sprintf("the required argument %s is missing", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		p := s.Properties[name]
		if p == nil {
			continue
		}
		v := obj[name]
		if len(p.Enum) > 0 && !slices.ContainsFunc(p.Enum, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(v) && jsonKind(e) == jsonKind(v) }) {
			values := make([]string, len(p.Enum))
			for i, e := range p.Enum {
				values[i] = fmt.Sprint(e)
			}
			return fmt.Sprintf("%s must be one of %s (got %s)", name, strings.Join(values, ", "), shortJSON(v))
		}
		types := p.Types
		if p.Type != "" {
			types = []string{p.Type}
		}
		if len(types) > 0 && !slices.ContainsFunc(types, func(t string) bool { return jsonKind(v) == t || t == "number" && jsonKind(v) == "integer" }) {
			return fmt.Sprintf("%s must be %s (got %s)", name, strings.Join(types, " or "), shortJSON(v))
		}
	}
	return ""
}

// jsonKind is the JSON schema type of a decoded JSON value ("integer" for
// a whole number).
func jsonKind(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if v == float64(int64(v)) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}

// shortJSON is v as JSON, cut for a message.
func shortJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return transport.CutText(string(b), 60)
}

// withoutOptionalNulls returns args without its top-level null values of
// properties the schema does not require: clients (and models) commonly
// send null for "not given", and the server, which still gets the
// arguments as sent, decides what a null means (the conformance suite's
// custom-header scenario sends one and expects the call to go out). A
// null for a required property is still refused.
func withoutOptionalNulls(args any, s *jsonschema.Schema) any {
	obj, ok := args.(map[string]any)
	if !ok || s == nil {
		return args
	}
	var out map[string]any
	for k, val := range obj {
		if val != nil || slices.Contains(s.Required, k) {
			continue
		}
		if out == nil {
			out = maps.Clone(obj)
		}
		delete(out, k)
	}
	if out == nil {
		return args
	}
	return out
}

// flat returns the flat check of a compiled schema, nil when it is not
// flat (flatschema.go); made once per catalog and schema.
func (cat *Catalog) flat(rs *jsonschema.Resolved) flatCheck {
	cat.schemaMu.Lock()
	defer cat.schemaMu.Unlock()
	check, ok := cat.flats[rs]
	if !ok {
		if cat.flats == nil {
			cat.flats = map[*jsonschema.Resolved]flatCheck{}
		}
		check = newFlatCheck(rs.Schema())
		cat.flats[rs] = check
	}
	return check
}

// Schema returns the compiled input schema of a tool; nil when it cannot
// be compiled. compileSchemas compiled every tool of the catalog when it was
// fetched.
func (cat *Catalog) Schema(tool *mcp.Tool) *jsonschema.Resolved {
	cat.schemaMu.Lock()
	defer cat.schemaMu.Unlock()
	return cat.schemas[tool.Name]
}

// CompileSchemas compiles every tool's input schema when the catalog is
// fetched, so that one that does not compile is known (and reported) at
// once, not skipped silently at its first call.
func (cat *Catalog) CompileSchemas() {
	cat.schemaMu.Lock()
	defer cat.schemaMu.Unlock()
	if cat.schemas == nil {
		cat.schemas = make(map[string]*jsonschema.Resolved, len(cat.Tools))
	}
	for _, t := range cat.Tools {
		rs, err := compileInputSchema(t)
		cat.schemas[t.Name] = rs
		if err != nil {
			cat.Unchecked = append(cat.Unchecked, RejectedTool{Name: t.Name, Reason: err.Error()})
		}
	}
}

// compileInputSchema compiles a tool's input schema.
func compileInputSchema(tool *mcp.Tool) (*jsonschema.Resolved, error) {
	raw, err := json.Marshal(tool.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("encoding the input schema: %w", err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("the input schema is not a JSON Schema: %w", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("the input schema does not compile: %w", err)
	}
	return rs, nil
}

// ArgumentsError is returned for tool arguments that are not a JSON
// object, do not match the tool's input schema, or have keys a server may
// read as one (checkArgumentKeys), and for a prompt's arguments whose names
// differ only in case.
type ArgumentsError struct{ Reason string }

func (e *ArgumentsError) Error() string { return "invalid arguments: " + e.Reason }
