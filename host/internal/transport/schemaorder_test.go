package transport_test

import (
	"encoding/json"
	"testing"

	"github.com/mcphost/mcphost/host/internal/transport"
)

// TestOrderedSchema: a tools/list answer noted as read gives back each
// input schema as the server wrote it, for the schema go-sdk decoded into
// a map; a schema already in sorted order, or never noted, gives nil.
func TestOrderedSchema(t *testing.T) {
	const schema = `{"type":"object","properties":{"name":{"type":"string"},"entityType":{"type":"string"},"observations":{"type":"array","items":{"type":"string"}}},"required":["name","entityType"]}`
	msg := `{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"create","inputSchema":` + schema + `},{"name":"sorted","inputSchema":{"a":1,"b":2}}]}}`
	transport.NoteToolsAnswer([]byte(msg), false)

	decoded := func(s string) any {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if got := transport.OrderedSchema(decoded(schema)); string(got) != schema {
		t.Errorf("OrderedSchema = %s, want %s", got, schema)
	}
	if got := transport.OrderedSchema(decoded(`{"a":1,"b":2}`)); got != nil {
		t.Errorf("a sorted schema gives %s, want nil", got)
	}
	if got := transport.OrderedSchema(decoded(`{"z":1,"y":2}`)); got != nil {
		t.Errorf("a schema never noted gives %s, want nil", got)
	}

	// Only the result, as answerGuard passes it.
	const other = `{"properties":{"zeta":{},"alpha":{}}}`
	transport.NoteToolsAnswer([]byte(`{"tools":[{"name":"x","inputSchema":`+other+`}]}`), true)
	if got := transport.OrderedSchema(decoded(other)); string(got) != other {
		t.Errorf("OrderedSchema of a noted result = %s, want %s", got, other)
	}
}
