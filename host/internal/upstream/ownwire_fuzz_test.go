package upstream

import (
	"bufio"
	"bytes"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
