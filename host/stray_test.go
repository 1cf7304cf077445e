package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// strayCallTimeout is the call_timeout of the stray-answer servers. It only
// keeps a regression from hanging the test: a stray answer must fail its
// call at once, long before it.
const strayCallTimeout = 10 * time.Second

// strayCases are the answers with an id mcphost never sent, by tool: the
// fixtures answer the tool with that id.
var strayCases = []struct {
	tool, id string
}{
	{"wrong-id", "987654321"},
	{"string-id", `"abc"`},
	{"null-id", "null"},
}

// strayErr is the start of the error a call answered with id gets.
func strayErr(id string) string {
	return fmt.Sprintf("the server answered with id %s, which mcphost never sent (a broken or hostile server)", id)
}

// holdCall starts a call of the hold tool (which reports progress, then
// waits) and returns once the server has it, with a channel that receives
// the call's outcome.
func holdCall(t *testing.T, h *host.Host, server string) <-chan error {
	t.Helper()
	held := make(chan struct{})
	var once sync.Once
	errc := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(t.Context(), remoteWait)
		defer cancel()
		res, err := h.CallTool(ctx, host.CallToolRequest{Server: server, Tool: "hold",
			OnProgress: func(host.Progress) { once.Do(func() { close(held) }) }})
		if err == nil && textOf(res) != "released" {
			err = fmt.Errorf("hold answered %q", textOf(res))
		}
		errc <- err
	}()
	select {
	case <-held:
	case err := <-errc:
		t.Fatalf("hold returned before the server had it: %v", err)
	case <-time.After(remoteWait):
		t.Fatal("the server never reported the hold call")
	}
	return errc
}

// outcome waits for a call started by holdCall.
func outcome(t *testing.T, errc <-chan error) error {
	t.Helper()
	select {
	case err := <-errc:
		return err
	case <-time.After(remoteWait):
		t.Fatal("the held call did not return")
		return nil
	}
}

// checkSessionKept checks that the server still answers on the session it
// had before (no restart).
func checkSessionKept(t *testing.T, h *host.Host, server string, before host.ServerStatus) {
	t.Helper()
	if got := textOf(mustCallWithin(t, h, server, "hello", `{}`)); !strings.HasPrefix(got, "hello") {
		t.Errorf("hello after a stray answer = %q", got)
	}
	st := mustStatus(t, h, server)
	if st.State != host.StateReady || st.Restarts != before.Restarts || st.PID != before.PID {
		t.Errorf("after a stray answer: state %s, restarts %d, pid %d; want ready on the same session (restarts %d, pid %d); last error %q",
			st.State, st.Restarts, st.PID, before.Restarts, before.PID, st.LastError)
	}
}

// TestStrayAnswersStdio: a stdio server that answers a call with an id
// mcphost never sent (a number, a string, null) fails that call at once with
// an error that says so, and keeps its session. A call in flight at that
// moment fails with it too, because stdio cannot tell which call the answer
// was for.
func TestStrayAnswersStdio(t *testing.T) {
	bin := testbin.Build(t, misbehavePkg)
	for _, negotiation := range []string{config.NegotiationLegacy, config.NegotiationAuto} {
		t.Run(negotiation, func(t *testing.T) {
			s := stdioServer("fx", bin, "-mode", "stray-id")
			s.CallTimeout = strayCallTimeout
			s.VersionNegotiation = negotiation
			s.StdioProbe = config.StdioProbeSibling
			h := startHost(t, host.Options{}, s)
			before := mustStatus(t, h, "fx")
			if before.State != host.StateReady {
				t.Fatalf("state %s: %s", before.State, before.LastError)
			}
			for _, tc := range strayCases {
				t.Run(tc.tool, func(t *testing.T) {
					_, err := callWithin(t, h, host.CallToolRequest{Server: "fx", Tool: tc.tool})
					t.Logf("error: %v", err)
					if err == nil || !strings.Contains(err.Error(), strayErr(tc.id)) {
						t.Errorf("error = %v, want it to contain %q", err, strayErr(tc.id))
					}
					checkSessionKept(t, h, "fx", before)
				})
			}
			t.Run("call in flight", func(t *testing.T) {
				held := holdCall(t, h, "fx")
				_, err := callWithin(t, h, host.CallToolRequest{Server: "fx", Tool: "string-id"})
				if err == nil || !strings.Contains(err.Error(), strayErr(`"abc"`)) {
					t.Errorf("stray call error = %v", err)
				}
				if err := outcome(t, held); err == nil || !strings.Contains(err.Error(), strayErr(`"abc"`)) {
					t.Errorf("held call error = %v, want the stray answer's", err)
				}
				checkSessionKept(t, h, "fx", before)
			})
		})
	}
}

// strayHTTP wraps a Streamable HTTP handler: a tools/call of one of the
// strayCases tools is answered here, with the case's id instead of the
// request's, as a JSON body or (arguments {"sse": true}) as an event stream
// that then stays open until the request ends.
func strayHTTP(next http.Handler) http.Handler {
	ids := map[string]string{}
	for _, c := range strayCases {
		ids[c.tool] = c.id
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Name      string `json:"name"`
				Arguments struct {
					SSE bool `json:"sse"`
				} `json:"arguments"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &msg)
		id, ok := ids[msg.Params.Name]
		if msg.Method != "tools/call" || !ok {
			next.ServeHTTP(w, r)
			return
		}
		answer := `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"stray"}]}}`
		if id == "null" {
			answer = `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"test: an answer with a null id"}}`
		}
		if !msg.Params.Arguments.SSE {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, answer)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: "+answer+"\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
}

// TestStrayAnswersStreamableHTTP: over Streamable HTTP the answer to a call
// comes on that call's own POST, so a stray id there fails exactly that
// call, at once, whether the body is JSON or an event stream; a call in
// flight on the same session is not affected, and the session stays.
func TestStrayAnswersStreamableHTTP(t *testing.T) {
	release := make(chan struct{})
	s := mcp.NewServer(&mcp.Implementation{Name: "stray", Version: "1"}, nil)
	for _, name := range []string{"hello", "wrong-id", "string-id", "null-id"} {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " from go-sdk"}}}, nil
			})
	}
	s.AddTool(&mcp.Tool{Name: "hold", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Message: "holding"})
			}
			select {
			case <-release:
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	srv := serveHTTP(t, strayHTTP(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)))
	rs := remoteServer("fx", config.TransportStreamableHTTP, srv.URL)
	rs.CallTimeout = strayCallTimeout
	h := startHost(t, host.Options{}, rs)
	before := mustStatus(t, h, "fx")
	if before.State != host.StateReady {
		t.Fatalf("state %s: %s", before.State, before.LastError)
	}
	for _, body := range []string{"json", "sse"} {
		for _, tc := range strayCases {
			t.Run(body+"/"+tc.tool, func(t *testing.T) {
				args := json.RawMessage(fmt.Sprintf(`{"sse":%v}`, body == "sse"))
				_, err := callWithin(t, h, host.CallToolRequest{Server: "fx", Tool: tc.tool, Arguments: args})
				if err == nil || !strings.Contains(err.Error(), strayErr(tc.id)) {
					t.Errorf("error = %v, want it to contain %q", err, strayErr(tc.id))
				}
				checkSessionKept(t, h, "fx", before)
			})
		}
	}
	t.Run("call in flight", func(t *testing.T) {
		held := holdCall(t, h, "fx")
		for _, body := range []string{`{"sse":false}`, `{"sse":true}`} {
			_, err := callWithin(t, h, host.CallToolRequest{Server: "fx", Tool: "string-id", Arguments: json.RawMessage(body)})
			if err == nil || !strings.Contains(err.Error(), strayErr(`"abc"`)) {
				t.Errorf("stray call %s: error = %v", body, err)
			}
		}
		close(release)
		if err := outcome(t, held); err != nil {
			t.Errorf("the call in flight failed: %v", err)
		}
		checkSessionKept(t, h, "fx", before)
	})
}

// straySSE serves a raw MCP server over the HTTP+SSE transport: GET /sse
// opens the event stream, each POST to /message is accepted and answered on
// it. Its tools are hello, hold (progress, then no answer) and the
// strayCases tools, answered with the case's id.
func straySSE(t *testing.T) string {
	t.Helper()
	events := make(chan string, 64)
	ids := map[string]string{}
	for _, c := range strayCases {
		ids[c.tool] = c.id
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /sse", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: endpoint\ndata: /message\n\n")
		w.(http.Flusher).Flush()
		for {
			select {
			case e := <-events:
				io.WriteString(w, "event: message\ndata: "+e+"\n\n")
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	})
	mux.HandleFunc("POST /message", func(w http.ResponseWriter, r *http.Request) {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
				Name            string `json:"name"`
				Meta            struct {
					ProgressToken any `json:"progressToken"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		if msg.Method == "" || len(msg.ID) == 0 {
			return // a notification or an answer
		}
		id := string(msg.ID)
		result := func(v any) string {
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": v})
			return string(b)
		}
		switch msg.Method {
		case "initialize":
			events <- result(map[string]any{"protocolVersion": msg.Params.ProtocolVersion,
				"capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "straysse", "version": "1"}})
		case "tools/list":
			var tools []map[string]any
			for _, name := range []string{"hello", "hold", "wrong-id", "string-id", "null-id"} {
				tools = append(tools, map[string]any{"name": name, "inputSchema": map[string]any{"type": "object"}})
			}
			events <- result(map[string]any{"tools": tools})
		case "tools/call":
			if sid, ok := ids[msg.Params.Name]; ok {
				id = sid
			}
			switch {
			case msg.Params.Name == "hold":
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
					"params": map[string]any{"progressToken": msg.Params.Meta.ProgressToken, "progress": 0}})
				events <- string(b)
			case id == "null":
				events <- `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"test: an answer with a null id"}}`
			default:
				events <- `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"` + msg.Params.Name + ` from sse"}]}}`
			}
		default:
			events <- `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32601,"message":"method not found"}}`
		}
	})
	return serveHTTP(t, mux).URL + "/sse"
}

// TestStrayAnswersSSE: over the HTTP+SSE transport every answer comes on
// the one event stream, as on stdio: a stray id fails the calls in flight at
// once, and the session stays.
func TestStrayAnswersSSE(t *testing.T) {
	s := remoteServer("fx", config.TransportSSE, straySSE(t))
	s.CallTimeout = strayCallTimeout
	h := startHost(t, host.Options{}, s)
	before := mustStatus(t, h, "fx")
	if before.State != host.StateReady {
		t.Fatalf("state %s: %s", before.State, before.LastError)
	}
	for _, tc := range strayCases {
		t.Run(tc.tool, func(t *testing.T) {
			_, err := callWithin(t, h, host.CallToolRequest{Server: "fx", Tool: tc.tool})
			if err == nil || !strings.Contains(err.Error(), strayErr(tc.id)) {
				t.Errorf("error = %v, want it to contain %q", err, strayErr(tc.id))
			}
			checkSessionKept(t, h, "fx", before)
		})
	}
	t.Run("call in flight", func(t *testing.T) {
		held := holdCall(t, h, "fx")
		_, err := callWithin(t, h, host.CallToolRequest{Server: "fx", Tool: "wrong-id"})
		if err == nil || !strings.Contains(err.Error(), strayErr("987654321")) {
			t.Errorf("stray call error = %v", err)
		}
		if err := outcome(t, held); err == nil || !strings.Contains(err.Error(), strayErr("987654321")) {
			t.Errorf("held call error = %v, want the stray answer's", err)
		}
		checkSessionKept(t, h, "fx", before)
	})
}
