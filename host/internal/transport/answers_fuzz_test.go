package transport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzAnswerCheck feeds arbitrary answer bodies, as a server sends them on
// a call's POST, through the JSON and event-stream checks. Beyond never
// panicking: a JSON body passes unchanged unless it is a response with
// another id, and then it becomes one error answer to the call; an event
// stream passes unchanged up to the first stray response, which ends it
// with one error answer event; reading never hangs.
func FuzzAnswerCheck(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":7,"result":{}}`,
		`{"jsonrpc":"2.0","id":8,"result":{}}`,
		`{"jsonrpc":"2.0","id":"abc","result":{}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`,
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n",
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}\n\n",
		"event: other\ndata: {\"id\":9}\n\n",
		"data: {\"id\":\ndata: 9}\r\n\r\n",
		": comment\n\ndata",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		const id = 7
		// JSON.
		out, err := io.ReadAll(&jsonAnswerCheck{body: io.NopCloser(bytes.NewReader(body)), id: id})
		if err != nil {
			t.Fatalf("JSON: %v", err)
		}
		if _, stray := strayAnswer(body, id); !stray {
			if !bytes.Equal(out, body) {
				t.Fatalf("JSON: a body that answers the call (or is no response) changed:\n%q\n%q", body, out)
			}
		} else {
			checkErrorAnswer(t, out, id)
		}

		// Event stream, read through a small buffer so long lines split.
		rc := io.NopCloser(bytes.NewReader(body))
		// Each message is also handed to the progress reader (the host's
		// is fuzzed by FuzzProgressMessage).
		sse := &sseAnswerCheck{body: rc, br: bufio.NewReaderSize(rc, 16), id: id, onMessage: func(*http.Request, []byte) {}}
		out, err = io.ReadAll(sse)
		if err != nil {
			t.Fatalf("event stream: %v", err)
		}
		if bytes.Equal(out, body) {
			return
		}
		// Changed: everything before the last event is the body's start,
		// and the last event is the error answer.
		const prefix = "event: message\ndata: "
		i := bytes.LastIndex(out, []byte(prefix))
		if i < 0 || !bytes.HasPrefix(body, out[:i]) || !bytes.HasSuffix(out, []byte("\n\n")) {
			t.Fatalf("event stream changed other than by a final error answer:\n%q\n%q", body, out)
		}
		checkErrorAnswer(t, out[i+len(prefix):len(out)-2], id)
	})
}

// checkErrorAnswer fails unless msg is a JSON-RPC error response to id
// that says mcphost never sent the id.
func checkErrorAnswer(t *testing.T, msg []byte, id int64) {
	t.Helper()
	m, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		t.Fatalf("the replacement %q does not decode: %v", msg, err)
	}
	r, ok := m.(*jsonrpc.Response)
	if !ok || r.ID != intID(id) || r.Error == nil {
		t.Fatalf("the replacement %q is not an error answer to %d", msg, id)
	}
	var e struct {
		Message string `json:"message"`
	}
	raw, _ := json.Marshal(r.Error)
	if json.Unmarshal(raw, &e) != nil || !bytes.Contains([]byte(e.Message), []byte("which mcphost never sent")) {
		t.Fatalf("the replacement's message %q", raw)
	}
}

// FuzzMessageScan checks the look at a message's members (scanMembers)
// against the decoding it spares, on arbitrary messages: a look that says
// a message is no stray answer agrees with decodeStray; a look at the start
// of a POST's body that is sure of its call id gives what decodeCallID
// gives; and on JSON, a look at the headers' fields gives what
// json.Unmarshal gives.
func FuzzMessageScan(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"progressToken":"mcphost-1"},"name":"echo","arguments":{"text":"a\"}{]["}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"file:///a b"}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x\\"}]}}`,
		`{"jsonrpc":"2.0","id":7,"ID":8,"result":{}}`,
		`{"jsonrpc":"2.0","id":7,"id":8,"result":{}}`,
		`{"jsonrpc":"2.0","i\u0064":8,"id":7,"result":{}}`,
		`{"jsonrpc":"2.0","id":7,"method":null,"result":{}}`,
		`{"jsonrpc":"2.0","id":7,"Method":"x","result":{}}`,
		`{"jsonrpc":"2.0","id":7.0,"result":{}}`,
		`{"jsonrpc":"2.0","id":-7,"method":"x"}`,
		`{"jsonrpc":"2.0","id":"7","result":{}}`,
		`{"jsonrpc":"2.0","id":7 , "method" : "ping" }`,
		`{"jsonrpc":tru,"id":7,"method":"ping"}`,
		`{"params":[1,2],"method":"tools/call","id":1}`,
		`{"method":"tools/call","params":{"name":"caf\u00e9","NAME":"x"}}`,
		"\u00a0{\"id\":7,\"result\":{}}",
		`{"id":7,"result":{}} trailing`,
		`{}`,
		`[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const id = 7
		if lookAt(data, id) != lookUnsure {
			if _, stray := decodeStray(data, id); stray {
				t.Fatalf("the look says %q answers call %d, the decoding says it is a stray answer", data, id)
			}
		}

		wantID, wantOK := decodeCallID(bytes.NewReader(data))
		for _, n := range []int{len(data), callHeadMax, 16} {
			head := data[:min(n, len(data))]
			if got, ok, sure := scanCallID(head); sure && (got != wantID || ok != wantOK) {
				t.Fatalf("the look at %q says call id %d (%v), the decoding of %q %d (%v)", head, got, ok, data, wantID, wantOK)
			}
		}

		if json.Valid(data) {
			var scanned shimMessage
			if scanShimMessage(data, &scanned) {
				var decoded shimMessage
				if err := json.Unmarshal(data, &decoded); err != nil || decoded != scanned {
					t.Fatalf("the look at %q reads %+v, json.Unmarshal %+v (%v)", data, scanned, decoded, err)
				}
			}
		}
	})
}
