package upstream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mcphost/mcphost/internal/jsonlex"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzOwnAnswer holds the own call's decoding of a message to go-sdk's:
// what it takes for the answer to call 42 go-sdk also decodes as a
// response to call 42, and what it decodes go-sdk does not refuse for
// its nesting or version.
func FuzzOwnAnswer(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":42,"result":{"content":[]}}`,
		`{"jsonrpc":"2.0","id":4.2e1,"result":{}}`,
		`{"jsonrpc":"2.0","id":42.0,"error":{"code":-1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":"42","result":{}}`,
		`{"jsonrpc":"2.0","ID":42,"result":{}}`,
		`{"jsonrpc":"2.0","id":42,"method":null}`,
		`{"jsonrpc":"2.0","id":42,"id":7}`,
		`{"jsonrpc":"1.0","id":42}`,
		`[[[[`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m ownMessage
		if m.decode(data) != nil || !m.answers(42) {
			return
		}
		msg, err := jsonrpc.DecodeMessage(data)
		if err != nil {
			t.Fatalf("taken as the answer to 42, but go-sdk refuses %q: %v", data, err)
		}
		resp, ok := msg.(*jsonrpc.Response)
		if !ok {
			t.Fatalf("taken as the answer to 42, but go-sdk decodes %q as a %T", data, msg)
		}
		if want, _ := jsonrpc.MakeID(float64(42)); resp.ID != want {
			t.Fatalf("taken as the answer to 42, but go-sdk reads id %v in %q", resp.ID.Raw(), data)
		}
	})
}

// FuzzEventStream reads any bytes as an event stream: it ends, and no
// message it returns is larger than the stream.
func FuzzEventStream(f *testing.F) {
	for _, s := range []string{
		"data: {}\n\n",
		"id: 1\nretry: 10\ndata:\n\nevent: other\ndata: x\n\ndata: a\r\ndata: b\r\n\r\n",
		": comment\n\ndata",
		"data: " + string(bytes.Repeat([]byte("x"), 5000)) + "\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		es := &eventStream{br: bufio.NewReaderSize(bytes.NewReader(stream), 16)}
		for range len(stream) + 1 {
			data, err := es.next()
			if err != nil {
				return
			}
			if len(data) > len(stream) {
				t.Fatalf("a message of %d bytes from a stream of %d", len(data), len(stream))
			}
		}
		t.Fatalf("the stream of %d bytes did not end", len(stream))
	})
}

// FuzzOwnResult holds decodeResult to go-sdk's CallToolResult.UnmarshalJSON:
// the same error or the same result.
func FuzzOwnResult(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hi","annotations":{"priority":1},"_meta":{"a":1}}],"structuredContent":{"n":1},"isError":true,"_meta":{"m":"x"}}`,
		`{"content":null}`,
		`{}`,
		`{"content":[{"type":"text","text":"a","size":"not a number"}]}`,
		`{"content":[{"type":"image","data":"aGk=","mimeType":"image/png"}]}`,
		`{"content":[{"type":"text","text":"a"},{"type":"resource_link","uri":"x","name":"n"}]}`,
		`{"content":[null]}`,
		`{"content":[{"type":"bogus"}]}`,
		`{"resultType":"input_required","inputRequests":{}}`,
		`{"requestState":"s","Content":[]}`,
		`{"content":{"type":"text","text":"one"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if jsonlex.TooDeep(data, jsonlex.MaxDepth) {
			return
		}
		got, gotErr := decodeResult(data)
		want := &mcp.CallToolResult{}
		wantErr := want.UnmarshalJSON(data)
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("%q: decodeResult err %v, go-sdk err %v", data, gotErr, wantErr)
		}
		if gotErr == nil && !reflect.DeepEqual(got, want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			t.Fatalf("%q:\ndecodeResult %s\ngo-sdk       %s", data, g, w)
		}
	})
}
