package questions

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzElicitRequest feeds arbitrary elicitation params (a server's
// untrusted request) to checkElicitation, and an arbitrary answer to
// checkAnswer. Properties: no panic; an accepted form request has a flat
// object schema within mcphost's bounds whose every property has a
// primitive type; an accepted url request has an http or https URL; an
// error always says what is wrong (non-empty, valid text).
func FuzzElicitRequest(f *testing.F) {
	f.Add([]byte(`{"mode":"form","message":"Who?","requestedSchema":{"type":"object","properties":{"name":{"type":"string","default":"Ada"}},"required":["name"]}}`), []byte(`{"name":"x"}`))
	f.Add([]byte(`{"mode":"url","message":"Open","url":"https://example.com/a?b=1","elicitationId":"1"}`), []byte(`{}`))
	f.Add([]byte(`{"mode":"url","message":"Open","url":"javascript:alert(1)"}`), []byte(`{}`))
	f.Add([]byte(`{"mode":"form","requestedSchema":{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string"}}}}}}`), []byte(`{"a":1}`))
	f.Add([]byte(`{"requestedSchema":{"type":"object","properties":{"p":{"type":"string","format":"password"},"c":{"type":"array","items":{"enum":["x","y"]}}}}}`), []byte(`{"p":"s","c":["x"]}`))
	f.Add([]byte(`{"requestedSchema":[[[[[[[[[[[]]]]]]]]]]]}`), []byte(`null`))
	f.Fuzz(func(t *testing.T, params, content []byte) {
		var p mcp.ElicitParams
		if json.Unmarshal(params, &p) != nil {
			return
		}
		e, rs, err := CheckElicitation(&p)
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("an empty error")
			}
			return
		}
		switch e.Mode {
		case ElicitForm:
			if rs == nil || len(e.RequestedSchema) > maxElicitSchemaBytes || jsonDepth(e.RequestedSchema) > maxElicitSchemaDepth {
				t.Fatalf("accepted schema out of bounds: %s", e.RequestedSchema)
			}
			var top struct {
				Properties map[string]struct {
					Type       any             `json:"type"`
					Properties json.RawMessage `json:"properties"`
				} `json:"properties"`
			}
			if err := json.Unmarshal(e.RequestedSchema, &top); err != nil {
				t.Fatalf("accepted schema does not decode: %v", err)
			}
			for name, prop := range top.Properties {
				switch prop.Type {
				case "string", "number", "integer", "boolean", "array":
				default:
					t.Fatalf("property %q of type %v accepted", name, prop.Type)
				}
				if len(prop.Properties) > 0 && string(prop.Properties) != "null" && string(prop.Properties) != "{}" {
					t.Fatalf("nested property %q accepted", name)
				}
			}
			var c map[string]any
			if json.Unmarshal(content, &c) == nil {
				_ = CheckAnswer(ElicitationAnswer{Action: ElicitAccept, Content: c}, rs)
			}
		case ElicitURL:
			if u := strings.ToLower(e.URL); !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
				t.Fatalf("url %q accepted", e.URL)
			}
		default:
			t.Fatalf("mode %q accepted", e.Mode)
		}
	})
}
