package transport

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestAnswerCheckBodies runs the answer check of Streamable HTTP bodies
// (call id 7) over edge cases of the framing: the output either is the input
// unchanged or ends with one error answer to call 7.
func TestAnswerCheckBodies(t *testing.T) {
	const answer = `{"jsonrpc":"2.0","id":7,"result":{}}`
	const progress = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`
	long := `{"jsonrpc":"2.0","id":7,"result":{"text":"` + strings.Repeat("x", 100) + `"}}`
	tests := []struct {
		name, sse string
		json      string // instead of sse
		stray     string // the id the error names; "" = unchanged
	}{
		{name: "notification then answer", sse: "data: " + progress + "\n\nid: 1\ndata: " + answer + "\n\n"},
		{name: "priming event and comment", sse: "id: 0\ndata:\n\n: keep-alive\n\ndata: " + answer + "\n\n"},
		{name: "long line", sse: "data: " + long + "\n\n"},
		{name: "other event name", sse: "event: debug\ndata: {\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{}}\n\ndata: " + answer + "\n\n"},
		{name: "not JSON", sse: "data: hello\n\ndata: " + answer + "\n\n"},
		{name: "stray after a notification", sse: "data: " + progress + "\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{}}\n\ndata: " + answer + "\n\n", stray: "8"},
		{name: "stray with CRLF", sse: "event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"7\",\"result\":{}}\r\n\r\n", stray: `"7"`},
		{name: "stray over two data lines", sse: "data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":null,\"error\":{\"code\":-32700,\"message\":\"parse error\"}}\n\n", stray: "null"},
		{name: "stray long line", sse: "data: " + strings.Replace(long, `"id":7`, `"id":9`, 1) + "\n\n", stray: "9"},
		{name: "unterminated event", sse: "data: " + answer},
		{name: "json answer", json: answer},
		{name: "json request", json: `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{name: "json empty", json: ""},
		{name: "json stray", json: `{"jsonrpc":"2.0","id":70,"result":{}}`, stray: "70"},
		{name: "json missing id", json: `{"jsonrpc":"2.0","result":{}}`, stray: "null"},
		{name: "json bad id type", json: `{"jsonrpc":"2.0","id":true,"result":{}}`, stray: "true"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.sse
			var body io.Reader
			if tc.json != "" || tc.sse == "" {
				in = tc.json
				body = &jsonAnswerCheck{body: io.NopCloser(strings.NewReader(in)), id: 7}
			} else {
				// A small buffer, so that long lines come in parts.
				rc := io.NopCloser(strings.NewReader(in))
				body = &sseAnswerCheck{body: rc, br: bufio.NewReaderSize(rc, 16), id: 7}
			}
			out, err := io.ReadAll(body)
			if err != nil {
				t.Fatal(err)
			}
			if tc.stray == "" {
				if string(out) != in {
					t.Errorf("output %q, want the input unchanged", out)
				}
				return
			}
			last := strings.TrimSpace(string(out))
			if tc.sse != "" {
				i := strings.LastIndex(last, "data: ")
				last = last[i+len("data: "):]
			}
			var got struct {
				ID    int64 `json:"id"`
				Error struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(last), &got); err != nil || got.ID != 7 || !strings.HasPrefix(got.Error.Message, strayMessage(tc.stray, 1)) {
				t.Errorf("output %q (%v), want an error answer to 7 naming id %s", out, err, tc.stray)
			}
		})
	}
}

func TestPostedCallID(t *testing.T) {
	tests := []struct {
		name, method, body string
		id                 int64
		ok                 bool
	}{
		{"go-sdk call", http.MethodPost, `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"x"}}`, 12, true},
		{"params first", http.MethodPost, `{"params":{"a":[1,2]},"method":"tools/list","id":3,"jsonrpc":"2.0"}`, 3, true},
		{"probe's string id", http.MethodPost, `{"jsonrpc":"2.0","id":"mcphost-probe-1","method":"server/discover"}`, 0, false},
		{"notification", http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, false},
		{"answer to the server", http.MethodPost, `{"jsonrpc":"2.0","id":4,"result":{}}`, 0, false},
		{"not JSON", http.MethodPost, `hello`, 0, false},
		{"GET", http.MethodGet, "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, "http://127.0.0.1/mcp", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			id, ok := postedCallID(req)
			if id != tc.id || ok != tc.ok {
				t.Errorf("postedCallID = %d, %v; want %d, %v", id, ok, tc.id, tc.ok)
			}
		})
	}
}

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestAnswerCheckHearsGetStream: the session's GET stream answers no call,
// so nothing on it is checked (a response there passes unchanged), but
// every message on it is heard, as on a call's stream: a log message read
// there is counted like one read on a POST.
func TestAnswerCheckHearsGetStream(t *testing.T) {
	const (
		log   = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`
		other = `{"jsonrpc":"2.0","id":8,"result":{}}`
	)
	stream := "data: " + log + "\n\nevent: debug\ndata: skipped\n\ndata: " + other + "\n\n"
	var heard []string
	check := AnswerCheck{
		Base: roundTripFunc(func(*http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
				Body: io.NopCloser(strings.NewReader(stream))}, nil
		}),
		OnMessage: func(_ *http.Request, data []byte) { heard = append(heard, string(data)) },
	}
	req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := check.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != stream {
		t.Errorf("the GET stream came out as %q, want it unchanged", out)
	}
	if want := []string{log, other}; !slices.Equal(heard, want) {
		t.Errorf("heard %q, want %q", heard, want)
	}
}
