package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fastEndpoint is an endpoint serving one tool, fx__echo, with no host:
// enough for takeCall on a 2026-07-28 request.
func fastEndpoint() *endpoint {
	e := &endpoint{g: &Gateway{}}
	e.table.Store(&table{byName: map[string]host.GatewayTool{"fx__echo": {Name: "fx__echo", Server: "fx"}}})
	return e
}

func modernRequest(body []byte, name string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Protocol-Version", modernVersion)
	r.Header.Set("Mcp-Method", "tools/call")
	r.Header.Set("Mcp-Name", name)
	return r
}

const modernEcho = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"fx__echo","arguments":{"text":"x"}}}`

func TestTakeCall(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		header     map[string]string
		want       bool
	}{
		{"a plain call", modernEcho, nil, true},
		{"a progress token", strings.Replace(modernEcho, `"_meta":{`, `"_meta":{"progressToken":1,`, 1), nil, false},
		{"a log level", strings.Replace(modernEcho, `"_meta":{`, `"_meta":{"io.modelcontextprotocol/logLevel":"info",`, 1), nil, false},
		{"a retry with input", strings.Replace(modernEcho, `"name":`, `"requestState":"s","name":`, 1), nil, false},
		{"no version in _meta", strings.Replace(modernEcho, `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`, ``, 1), nil, false},
		{"another version in the header", modernEcho, map[string]string{"Mcp-Protocol-Version": "2026-12-01"}, false},
		{"Mcp-Name of another tool", modernEcho, map[string]string{"Mcp-Name": "fx__other"}, false},
		{"no Mcp-Method", modernEcho, map[string]string{"Mcp-Method": ""}, false},
		{"a tool it does not serve", strings.Replace(modernEcho, `fx__echo`, `fx__nope`, 1), map[string]string{"Mcp-Name": "fx__nope"}, false},
		{"a meta-tool", strings.Replace(modernEcho, `fx__echo`, `search_tools`, 1), map[string]string{"Mcp-Name": "search_tools"}, false},
		{"a field in other case", strings.Replace(modernEcho, `"name":`, `"Name":`, 1), nil, false},
		{"a batch", "[" + modernEcho + "]", nil, false},
		{"a notification", strings.Replace(modernEcho, `"id":7,`, ``, 1), nil, false},
		{"another method", strings.Replace(modernEcho, `tools/call`, `tools/list`, 1), nil, false},
		{"no params", `{"jsonrpc":"2.0","id":7,"method":"tools/call"}`, nil, false},
		{"broken JSON", modernEcho[:40], nil, false},
		{"nested deeper than go-sdk takes", strings.Replace(modernEcho, `{"text":"x"}`, strings.Repeat("[", 1001)+strings.Repeat("]", 1001), 1), nil, false},
		{"nested as deep as go-sdk takes", strings.Replace(modernEcho, `{"text":"x"}`, strings.Repeat("[", 997)+strings.Repeat("]", 997), 1), nil, true},
		{"an id that is an object", strings.Replace(modernEcho, `"id":7`, `"id":{}`, 1), nil, false},
		{"jsonrpc 1.0", strings.Replace(modernEcho, `"2.0"`, `"1.0"`, 1), nil, false},
		{"a form body", modernEcho, map[string]string{"Content-Type": "text/plain"}, false},
		{"JSON only accepted", modernEcho, map[string]string{"Accept": "application/json"}, false},
		{"a resumption", modernEcho, map[string]string{"Last-Event-ID": "x_1"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := modernRequest([]byte(tc.body), "fx__echo")
			for k, v := range tc.header {
				r.Header.Set(k, v)
			}
			fc := fastEndpoint().takeCall(r, host.Caller{})
			if got := fc != nil; got != tc.want {
				t.Fatalf("taken = %v, want %v", got, tc.want)
			}
			if fc == nil {
				if rest, _ := io.ReadAll(r.Body); string(rest) != tc.body {
					t.Fatalf("the body left for go-sdk is %q, want it as sent", rest)
				}
			}
		})
	}
}

// TestEncodeAnswer: the answer's status and body for each era: a result
// with its type on 2026-07-28 (and content never null), an input_required
// round, errors with the status go-sdk maps their code to.
func TestEncodeAnswer(t *testing.T) {
	id, _ := jsonrpc.MakeID(float64(3))
	text := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}
	for _, tc := range []struct {
		name   string
		res    *mcp.CallToolResult
		err    error
		modern bool
		status int
		want   string
	}{
		{"legacy result", text, nil, false, 200, `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hi"}]}}`},
		{"modern result", text, nil, true, 200, `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete"}}`},
		{"no content", &mcp.CallToolResult{}, nil, true, 200, `{"jsonrpc":"2.0","id":3,"result":{"content":[],"resultType":"complete"}}`},
		{"input required", &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{}, RequestState: "s"}, nil, true, 200,
			`{"jsonrpc":"2.0","id":3,"result":{"content":null,"inputRequests":{},"requestState":"s","resultType":"input_required"}}`},
		{"content and input", &mcp.CallToolResult{Content: text.Content, InputRequests: mcp.InputRequestMap{}}, nil, true, 200,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"server bug: result has both content and inputRequests"}}`},
		{"invalid params, legacy", nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad"}, false, 200, `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"bad"}}`},
		{"invalid params, modern", nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad"}, true, 400, `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"bad"}}`},
		{"server error, modern", nil, &jsonrpc.Error{Code: codeServerError, Message: "busy"}, true, 200, `{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"busy"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := encodeAnswer(id, tc.res, tc.err, tc.modern)
			if status != tc.status {
				t.Errorf("status %d, want %d", status, tc.status)
			}
			var got, want any
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("%q: %v", body, err)
			}
			_ = json.Unmarshal([]byte(tc.want), &want)
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(want)
			if !bytes.Equal(gb, wb) {
				t.Errorf("body\n%s\nwant\n%s", gb, wb)
			}
		})
	}
}

// TestEncodeRecorded: an answer written from the result's recorded
// encoding is, byte for byte, the answer encodeAnswer writes from the
// result (for a 2026-07-28 client, with the gateway named in its _meta),
// for ids of both kinds and results of a legacy and a 2026-07-28 server;
// and the recorded encoding is used only for the very result recorded,
// without an input round or null content, and (2026-07-28) without
// metadata of its own.
func TestEncodeRecorded(t *testing.T) {
	impl := &mcp.Implementation{Name: "mcphost", Title: "mcphost gateway", Version: "v1"}
	implMeta, _ := json.Marshal(mcp.Meta{mcp.MetaKeyServerInfo: impl})
	decoded := func(s string) *mcp.CallToolResult {
		var r mcp.CallToolResult
		if err := json.Unmarshal([]byte(s), &r); err != nil {
			t.Fatal(err)
		}
		return &r
	}
	results := map[string]*mcp.CallToolResult{
		"text":        {Content: []mcp.Content{&mcp.TextContent{Text: "hi <b> & \u2028"}}},
		"structured":  {Content: []mcp.Content{&mcp.TextContent{Text: "3"}}, StructuredContent: map[string]any{"sum": 3}},
		"error":       {Content: []mcp.Content{&mcp.TextContent{Text: "no"}}, IsError: true},
		"empty":       {Content: []mcp.Content{}},
		"complete":    decoded(`{"content":[{"type":"text","text":"x"}],"isError":true,"resultType":"complete"}`),
		"legacy wire": decoded(`{"content":[{"type":"text","text":"x"}]}`),
		"metadata":    {Content: []mcp.Content{&mcp.TextContent{Text: "no"}}, Meta: mcp.Meta{"k": "v"}},
	}
	num, _ := jsonrpc.MakeID(float64(3))
	str, _ := jsonrpc.MakeID("<a&b>")
	for name, res := range results {
		for _, modern := range []bool{false, true} {
			for _, id := range []jsonrpc.ID{num, str} {
				raw, err := json.Marshal(res)
				if err != nil {
					t.Fatal(err)
				}
				rec := &recordedResult{res: res, raw: raw}
				got := rec.answer(id, res, modern, implMeta)
				if got == nil {
					if !modern || res.Meta == nil {
						t.Errorf("%s (modern %v): the recorded encoding is not used", name, modern)
					}
					continue
				}
				want := res
				if modern {
					want = withServerInfo(res, impl)
				}
				if _, b := encodeAnswer(id, want, nil, modern); !bytes.Equal(got, b) {
					t.Errorf("%s (modern %v), id %v:\n%s\nwant\n%s", name, modern, id.Raw(), got, b)
				}
			}
		}
	}
	res := results["text"]
	raw, _ := json.Marshal(res)
	rec := &recordedResult{res: res, raw: raw}
	other := *res
	for name, tc := range map[string]struct {
		rec    *recordedResult
		res    *mcp.CallToolResult
		modern bool
	}{
		"another result": {rec, &other, false},
		"nothing kept":   {&recordedResult{}, res, false},
		"null content":   {&recordedResult{res: &mcp.CallToolResult{}, raw: raw}, nil, false},
		"an input round": {&recordedResult{res: &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{}}, raw: raw}, nil, true},
	} {
		r := tc.res
		if r == nil {
			r = tc.rec.res
		}
		if got := tc.rec.answer(num, r, tc.modern, implMeta); got != nil {
			t.Errorf("%s: the recorded encoding is used", name)
		}
	}
}

// FuzzTakeCall: whatever a client sends, takeCall does not panic; what it
// leaves to go-sdk it leaves whole; what it takes is a tools/call of a
// tool the endpoint serves, as go-sdk decodes it.
func FuzzTakeCall(f *testing.F) {
	f.Add([]byte(modernEcho))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"fx__echo","arguments":[[[[]]]]}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fx__echo","name":"x"}}`))
	f.Add([]byte(`[{"jsonrpc":"2.0"}]`))
	f.Add([]byte(strings.Replace(modernEcho, `{"text":"x"}`, strings.Repeat("[", 1001)+strings.Repeat("]", 1001), 1)))
	f.Add([]byte(strings.Replace(modernEcho, `{"text":"x"}`, strings.Repeat("[", 997)+strings.Repeat("]", 997), 1)))
	f.Add([]byte(strings.Replace(modernEcho, `"x"`, `"\u00e9\"]]]"`, 1)))
	f.Fuzz(func(t *testing.T, body []byte) {
		r := modernRequest(body, "fx__echo")
		fc := fastEndpoint().takeCall(r, host.Caller{})
		if fc == nil {
			if rest, _ := io.ReadAll(r.Body); !bytes.Equal(rest, body) {
				t.Fatalf("the body left for go-sdk is %q, want %q", rest, body)
			}
			return
		}
		msg, err := jsonrpc.DecodeMessage(body)
		req, ok := msg.(*jsonrpc.Request)
		if err != nil || !ok || req.Method != "tools/call" || fc.params.Name != "fx__echo" {
			t.Fatalf("took %q: %v %T, name %q", body, err, msg, fc.params.Name)
		}
	})
}
