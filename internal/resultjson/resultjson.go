package resultjson

import (
	"encoding/json"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// resultType is the index of CallToolResult's unexported result type
// (go-sdk writes it as resultType when set); nil when this go-sdk has no
// such string field, and then no result is encoded here.
var resultType = func() []int {
	f, ok := reflect.TypeFor[mcp.CallToolResult]().FieldByName("resultType")
	if !ok || f.Type.Kind() != reflect.String {
		return nil
	}
	return f.Index
}()

// Marshal returns json.Marshal(res).
func Marshal(res *mcp.CallToolResult) ([]byte, error) {
	if b, ok := plain(res); ok {
		return b, nil
	}
	return json.Marshal(res)
}

// plain encodes res when it is a plain result: text content without
// metadata or annotations, no metadata, structured content or input
// round. ok is false for any other result.
func plain(res *mcp.CallToolResult) (_ []byte, ok bool) {
	if res == nil || resultType == nil || res.Content == nil || res.Meta != nil ||
		res.StructuredContent != nil || res.InputRequests != nil || res.RequestState != "" {
		return nil, false
	}
	n := 32
	for _, c := range res.Content {
		t, ok := c.(*mcp.TextContent)
		if !ok || t == nil || t.Meta != nil || t.Annotations != nil {
			return nil, false
		}
		n += len(t.Text) + 24
	}
	b := make([]byte, 0, n)
	b = append(b, `{"content":[`...)
	for i, c := range res.Content {
		if i > 0 {
			b = append(b, ',')
		}
		text, err := json.Marshal(c.(*mcp.TextContent).Text)
		if err != nil {
			return nil, false
		}
		b = append(b, `{"type":"text","text":`...)
		b = append(b, text...)
		b = append(b, '}')
	}
	b = append(b, ']')
	if res.IsError {
		b = append(b, `,"isError":true`...)
	}
	if rt := reflect.ValueOf(res).Elem().FieldByIndex(resultType).String(); rt != "" {
		kind, err := json.Marshal(rt)
		if err != nil {
			return nil, false
		}
		b = append(b, `,"resultType":`...)
		b = append(b, kind...)
	}
	return append(b, '}'), true
}
