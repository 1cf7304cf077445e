package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cache"
	"github.com/mcphost/mcphost/host/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ownServer is a go-sdk server over Streamable HTTP (stateful, resumable)
// whose tools exercise what a call's stream may carry, behind a hook that
// can answer a tools/call itself (raw) the way a broken or hostile server
// would. It records what reached it.
type ownServer struct {
	url string
	h   http.Handler // go-sdk's
	// raw, when it handles the request, answers a tools/call of a tool
	// whose name starts with "raw"; it gets the call's id.
	raw func(w http.ResponseWriter, r *http.Request, tool string, id json.RawMessage) bool

	mu        sync.Mutex
	calls     []string // the tools/call POSTs: headers, then the body with its id cut out
	posted    []string // bodies POSTed that are not calls (answers, notifications)
	cancelled chan struct{}
	gets      []string // Last-Event-ID of each GET
}

func startOwnServer(t *testing.T) *ownServer {
	return startOwnServerWith(t, &mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)})
}

// startOwnServerWith is startOwnServer with go-sdk's handler options.
func startOwnServerWith(t *testing.T, opts *mcp.StreamableHTTPOptions) *ownServer {
	t.Helper()
	s := &ownServer{cancelled: make(chan struct{}, 8)}
	srv := mcp.NewServer(&mcp.Implementation{Name: "own", Version: "1"}, nil)
	obj := json.RawMessage(`{"type":"object"}`)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: obj}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}},
			StructuredContent: map[string]any{"n": 1}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "fail", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it failed"}}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "name?", RequestedSchema: json.RawMessage(
			`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		if err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action + " " + fmt.Sprint(res.Content["name"])}}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "roots", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := req.Session.Ping(ctx, nil); err != nil {
			return nil, fmt.Errorf("ping: %w", err)
		}
		res, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, err
		}
		var uris []string
		for _, r := range res.Roots {
			uris = append(uris, r.URI)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(uris, ",")}}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "progress", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for i, m := range []string{"one", "two", "three"} {
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(),
				Progress: float64(i + 1), Total: 3, Message: m}); err != nil {
				return nil, err
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "slow", InputSchema: obj}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		<-ctx.Done()
		s.cancelled <- struct{}{}
		return nil, ctx.Err()
	})
	for _, name := range []string{"raw", "rawcut"} {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			// A request first, so that the stream has an event with an
			// id before the answer.
			if err := req.Session.Ping(ctx, nil); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "from go-sdk"}}}, nil
		})
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, opts)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.h = h
	hs := &http.Server{Handler: http.HandlerFunc(s.hook)}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	s.url = "http://" + ln.Addr().String()
	return s
}

// hook records what reached the server and lets raw answer a call.
func (s *ownServer) hook(w http.ResponseWriter, r *http.Request) {
	h := s.h
	if r.Method == http.MethodGet {
		s.mu.Lock()
		s.gets = append(s.gets, r.Header.Get("Last-Event-ID"))
		s.mu.Unlock()
	}
	if r.Method != http.MethodPost {
		h.ServeHTTP(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &m)
	s.mu.Lock()
	switch {
	case m.Method == "" || strings.HasPrefix(m.Method, "notifications/"):
		s.posted = append(s.posted, string(body))
	case m.Method == "tools/call":
		b := progressToken.ReplaceAllString(strings.Replace(string(body), string(m.ID), "ID", 1), `"progressToken":"T"`)
		s.calls = append(s.calls, fmt.Sprintf("%s %s %s %s %s", r.Header.Get("Mcp-Method"), r.Header.Get("Mcp-Name"),
			r.Header.Get("Mcp-Protocol-Version"), r.Header.Get("Mcp-Session-Id"), b))
	}
	s.mu.Unlock()
	if m.Method == "tools/call" && strings.HasPrefix(m.Params.Name, "raw") && s.raw != nil && s.raw(w, r, m.Params.Name, m.ID) {
		return
	}
	h.ServeHTTP(w, r)
}

// progressToken is a call's progress token, which differs from call to
// call.
var progressToken = regexp.MustCompile(`"progressToken":"[^"]*"`)

// sameCalls fails unless the last two tools/call requests were the same
// (headers and body, id and progress token aside).
func (s *ownServer) sameCalls(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.calls); n < 2 || s.calls[n-2] != s.calls[n-1] {
		t.Fatalf("the requests differ:\nown:    %s\ngo-sdk: %s", s.calls[n-2], s.calls[n-1])
	}
}

// postedLike returns the non-call bodies POSTed so far that contain sub.
func (s *ownServer) postedLike(sub string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, p := range s.posted {
		if strings.Contains(p, sub) {
			out = append(out, p)
		}
	}
	return out
}

// ownConn connects a Conn to url (a legacy Streamable HTTP session) with
// roots and an Elicit that accepts with the name "ada".
func ownConn(t *testing.T, url string, roots []string) *Conn {
	return ownConnAt(t, url, roots, config.NegotiationLegacy)
}

// ownConnAt is ownConn with the block's version_negotiation.
func ownConnAt(t *testing.T, url string, roots []string, negotiation string) *Conn {
	t.Helper()
	s := config.Server{Name: "fx", Transport: config.TransportStreamableHTTP, URL: url, Enabled: true, Roots: roots,
		DiscoveryTimeout: 20 * time.Second, CallTimeout: time.Minute,
		VersionNegotiation: negotiation, HTTPProbeTimeout: config.HTTPProbeTimeoutFallback}
	deps := &Deps{Logger: slog.New(slog.DiscardHandler), Version: "test", OAuth: &OAuthRef{}, Restart: true, BackoffMin: 10 * time.Millisecond,
		Elicit: func(_ context.Context, call *Call, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ada for " + call.Tool}}, nil
		}}
	c := NewConn(s, deps, cache.New(cache.Options{}))
	ctx, cancel := context.WithCancel(context.Background())
	go c.Run(ctx)
	t.Cleanup(func() { cancel(); <-c.done })
	<-c.settled
	if _, _, err := c.Current(); err != nil {
		t.Fatal(err)
	}
	return c
}

// callOn calls tool on c as the pipeline does, with a progress listener;
// sdk sends it through go-sdk, otherwise the Conn makes it itself. The
// progress heard is appended to the result.
func callOn(ctx context.Context, c *Conn, tool string, sdk bool) (string, error) {
	c.sdkCalls.Store(sdk)
	defer c.sdkCalls.Store(false)
	t, err := c.Target(ctx, "alice")
	if err != nil {
		return "", err
	}
	call := &Call{Principal: "alice", SessionID: "s1", CallID: "c1", Server: "fx", Tool: tool, Ctx: ctx}
	defer t.Conn.Track(call)()
	var heard []string
	onProgress := func(p Progress) { heard = append(heard, fmt.Sprintf("%v/%v %s", p.Progress, p.Total, p.Message)) }
	res, err := t.Conn.CallTool(context.WithValue(ctx, RelayCallKey{}, call), t.Session, tool, json.RawMessage(`{"a":"<b>"}`), nil, onProgress)
	if err != nil {
		return "", err
	}
	out, err := json.Marshal(res)
	return string(out) + " progress: " + strings.Join(heard, ", "), err
}

// TestOwnCallAnswersAsGoSDK makes each call both ways and compares the
// requests (headers and body) and the outcomes: the result, a tool error, a JSON-RPC error (an unknown tool), calls during
// which the server asks (elicitation, ping, roots/list), and progress.
func TestOwnCallAnswersAsGoSDK(t *testing.T) {
	s := startOwnServer(t)
	c := ownConn(t, s.url, []string{"file:///b", "file:///a"})
	for _, tc := range []struct{ tool, want string }{
		{"echo", `"structuredContent":{"n":1}`},
		{"fail", `"isError":true`},
		{"nosuch", `unknown tool`},
		{"ask", `accept ada for ask`},
		{"roots", `file:///a,file:///b`},
		{"progress", `progress: 1/3 one, 2/3 two, 3/3 three`},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			before := c.ownIDs.Load()
			own, ownErr := callOn(t.Context(), c, tc.tool, false)
			if c.ownIDs.Load() != before+1 {
				t.Fatalf("the Conn did not make the call itself")
			}
			sdk, sdkErr := callOn(t.Context(), c, tc.tool, true)
			if c.ownIDs.Load() != before+1 {
				t.Fatalf("the call did not go through go-sdk")
			}
			if fmt.Sprint(ownErr) != fmt.Sprint(sdkErr) || own != sdk {
				t.Fatalf("own call: %s (err %v)\ngo-sdk:   %s (err %v)", own, ownErr, sdk, sdkErr)
			}
			if !strings.Contains(own+fmt.Sprint(ownErr), tc.want) {
				t.Fatalf("got %s (err %v), want %q in it", own, ownErr, tc.want)
			}
			s.sameCalls(t)
		})
	}
}

// TestOwnCallCancelled: a call given up tells the server.
func TestOwnCallCancelled(t *testing.T) {
	s := startOwnServer(t)
	c := ownConn(t, s.url, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if _, err := callOn(ctx, c, "slow", false); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the deadline", err)
	}
	select {
	case <-s.cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the server's handler was never cancelled")
	}
	if got := s.postedLike("notifications/cancelled"); len(got) != 1 || !strings.Contains(got[0], fmt.Sprint(ownIDBase+c.ownIDs.Load())) {
		t.Fatalf("notifications/cancelled posted: %q", got)
	}
}

// sse writes events (each a data line, id lines given as "id:N|data")
// and flushes.
func sse(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, e := range events {
		if id, data, ok := strings.Cut(e, "|"); ok {
			fmt.Fprintf(w, "id: %s\n", id)
			e = data
		}
		fmt.Fprintf(w, "data: %s\n\n", e)
	}
	w.(http.Flusher).Flush()
}

// TestOwnCallHostileAndOdd answers calls the way broken, hostile or merely
// unusual servers do.
func TestOwnCallHostileAndOdd(t *testing.T) {
	s := startOwnServer(t)
	c := ownConn(t, s.url, nil)
	result := func(id json.RawMessage, text string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%q}]}}`, id, text)
	}
	for _, tc := range []struct {
		name string
		raw  func(w http.ResponseWriter, id json.RawMessage)
		want string // in the result, or in the error
		then func(t *testing.T)
	}{
		{"a JSON answer", func(w http.ResponseWriter, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, result(id, "json"))
		}, `"text":"json"`, nil},
		{"priming, named and multi-line events", func(w http.ResponseWriter, id json.RawMessage) {
			full := result(id, "multi")
			i := strings.Index(full, `,"result"`)
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "id: p\ndata:\n\nevent: other\ndata: {\"not\":\"json-rpc\"}\n\n: comment\r\ndata: "+
				full[:i]+"\r\ndata: "+full[i:]+"\r\n\r\n")
		}, `"text":"multi"`, nil},
		{"an id spelled as a float", func(w http.ResponseWriter, id json.RawMessage) {
			sse(w, result(json.RawMessage(string(id)+".0"), "float"))
		}, `"text":"float"`, nil},
		{"a stray answer", func(w http.ResponseWriter, _ json.RawMessage) {
			sse(w, result(json.RawMessage(`"someone-else"`), "stray"))
		}, `which mcphost never sent`, nil},
		{"a list change and an unknown request first", func(w http.ResponseWriter, id json.RawMessage) {
			sse(w, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
				`{"jsonrpc":"2.0","id":"q1","method":"tasks/teleport","params":{}}`, result(id, "after"))
		}, `"text":"after"`, func(t *testing.T) {
			waitFor(t, func() bool { return len(s.postedLike(`"q1"`)) == 1 })
			if got := s.postedLike(`"q1"`)[0]; !strings.Contains(got, `-32601`) {
				t.Fatalf("the unknown request's answer: %s", got)
			}
			if tools, _, _ := c.ListChanged(); tools == 0 {
				t.Fatal("the list change on the call's stream was not heard")
			}
		}},
		{"too deep", func(w http.ResponseWriter, id json.RawMessage) {
			sse(w, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":`+strings.Repeat("[", 1001)+strings.Repeat("]", 1001)+`}`)
		}, `nested deeper than 1000`, nil},
		{"not JSON-RPC", func(w http.ResponseWriter, id json.RawMessage) {
			sse(w, `{"jsonrpc":"1.0","id":`+string(id)+`,"result":{}}`)
		}, `expected "2.0"`, nil},
		{"a refusal with a JSON-RPC error", func(w http.ResponseWriter, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(id)+`,"error":{"code":-32602,"message":"bad arguments"}}`)
		}, `bad arguments: rejected by transport: Bad Request`, nil},
		{"busy", func(w http.ResponseWriter, _ json.RawMessage) {
			w.WriteHeader(http.StatusServiceUnavailable)
		}, `rejected by transport: sending "tools/call": Service Unavailable`, nil},
		{"an event larger than go-sdk accepts", func(w http.ResponseWriter, _ json.RawMessage) {
			sse(w, strings.Repeat("x", mcp.DefaultMaxEventSize+1))
		}, fmt.Sprintf("an event of more than %d bytes", mcp.DefaultMaxEventSize), nil},
		{"the stream ends before the answer", func(w http.ResponseWriter, _ json.RawMessage) {
			sse(w, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`)
		}, `request terminated without response`, nil},
		// Last: it closes the session, as go-sdk breaks its connection.
		{"a content type that is no MCP answer", func(w http.ResponseWriter, id json.RawMessage) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, result(id, "html"))
		}, `unsupported content type "text/html"`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.raw = func(w http.ResponseWriter, _ *http.Request, _ string, id json.RawMessage) bool {
				tc.raw(w, id)
				return true
			}
			before := c.ownIDs.Load()
			got, err := callOn(t.Context(), c, "raw", false)
			if c.ownIDs.Load() != before+1 {
				t.Fatal("the Conn did not make the call itself")
			}
			if !strings.Contains(got+fmt.Sprint(err), tc.want) {
				t.Fatalf("got %s (err %v), want %q in it", got, err, tc.want)
			}
			if tc.then != nil {
				tc.then(t)
			}
		})
	}
}

// TestOwnCallResumes: a call's stream cut after an event with an id is
// resumed with Last-Event-ID, and the answer comes on the new stream
// (go-sdk's event store replays it).
func TestOwnCallResumes(t *testing.T) {
	s := startOwnServer(t)
	c := ownConn(t, s.url, nil)
	var cut atomic.Bool
	s.raw = func(w http.ResponseWriter, r *http.Request, tool string, _ json.RawMessage) bool {
		if tool != "rawcut" || cut.Swap(true) {
			return false
		}
		// go-sdk answers on a stream with event ids; the writer drops
		// everything from the answer on and the connection is cut.
		cw := &cutWriter{ResponseWriter: w}
		defer func() { panic(http.ErrAbortHandler) }()
		s.h.ServeHTTP(cw, r)
		return true
	}
	got, err := callOn(t.Context(), c, "rawcut", false)
	if err != nil || !strings.Contains(got, "from go-sdk") {
		t.Fatalf("got %s (err %v)", got, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.gets) == 0 || s.gets[len(s.gets)-1] == "" {
		t.Fatalf("no GET with Last-Event-ID: %q", s.gets)
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cutWriter passes a response on until the answer to the call, which it
// drops with everything after it.
type cutWriter struct {
	http.ResponseWriter
	cut bool
}

func (w *cutWriter) Write(p []byte) (int, error) {
	if w.cut || bytes.Contains(p, []byte("from go-sdk")) {
		w.cut = true
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

func (w *cutWriter) Flush() {
	if !w.cut {
		w.ResponseWriter.(http.Flusher).Flush()
	}
}

// TestOwnCallSessionGone: a 404 on the session's POST is go-sdk's
// ErrSessionMissing, and the session ends, so the Conn connects again.
func TestOwnCallSessionGone(t *testing.T) {
	s := startOwnServer(t)
	c := ownConn(t, s.url, nil)
	first, _, err := c.Current()
	if err != nil {
		t.Fatal(err)
	}
	s.raw = func(w http.ResponseWriter, _ *http.Request, _ string, _ json.RawMessage) bool {
		http.Error(w, "no such session", http.StatusNotFound)
		return true
	}
	if _, err := callOn(t.Context(), c, "raw", false); !errors.Is(err, mcp.ErrSessionMissing) {
		t.Fatalf("err = %v, want ErrSessionMissing", err)
	}
	waitFor(t, func() bool {
		cs, _, err := c.Current()
		return err == nil && cs != first
	})
	s.raw = nil
	if got, err := callOn(t.Context(), c, "echo", false); err != nil || !strings.Contains(got, `"n":1`) {
		t.Fatalf("after the new session: %s (err %v)", got, err)
	}
}

// TestOwnCallModernAsGoSDK: on a 2026-07-28 session the own call sends
// what go-sdk sends (the same body, metadata included, and headers) and
// gets the same outcome.
func TestOwnCallModernAsGoSDK(t *testing.T) {
	s := startOwnServerWith(t, &mcp.StreamableHTTPOptions{Stateless: true})
	c := ownConnAt(t, s.url, []string{"file:///r"}, config.NegotiationAuto)
	cs, _, err := c.Current()
	if err != nil {
		t.Fatal(err)
	}
	if v := cs.InitializeResult().ProtocolVersion; v < modernProtocolVersion {
		t.Fatalf("negotiated %s, want 2026-07-28", v)
	}
	for _, tool := range []string{"echo", "fail", "nosuch", "progress"} {
		t.Run(tool, func(t *testing.T) {
			before := c.ownIDs.Load()
			own, ownErr := callOn(t.Context(), c, tool, false)
			sdk, sdkErr := callOn(t.Context(), c, tool, true)
			if c.ownIDs.Load() != before+1 {
				t.Fatalf("own calls: %d, want 1", c.ownIDs.Load()-before)
			}
			if fmt.Sprint(ownErr) != fmt.Sprint(sdkErr) || own != sdk {
				t.Fatalf("own call: %s (err %v)\ngo-sdk:   %s (err %v)", own, ownErr, sdk, sdkErr)
			}
			s.sameCalls(t)
		})
	}
}

// TestEncodePlainCall: the common call, encoded without reflection, is
// byte for byte what encoding/json writes for it; every other call is left
// to encoding/json.
func TestEncodePlainCall(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	for _, tc := range []struct {
		name  string
		p     mcp.CallToolParams
		plain bool
	}{
		{"no meta", mcp.CallToolParams{Name: "echo", Arguments: raw(`{"text":"hi"}`)}, true},
		{"progress token", mcp.CallToolParams{Name: "echo", Meta: mcp.Meta{"progressToken": "mcphost-7"}, Arguments: raw(`{"text":"hi"}`)}, true},
		{"two meta keys", mcp.CallToolParams{Name: "e", Meta: mcp.Meta{"z": "1", "a": "2"}, Arguments: raw(`{}`)}, true},
		{"spaces and html in arguments", mcp.CallToolParams{Name: "echo", Arguments: raw(" { \"t\" : \"<b> & \\u2028 \u2028 é\" ,\n\"n\": [1, 2.5e3, null] } ")}, true},
		{"html in the name", mcp.CallToolParams{Name: "a<b", Arguments: raw(`{}`)}, false},
		{"quote in the name", mcp.CallToolParams{Name: `a"b`, Arguments: raw(`{}`)}, false},
		{"non-ascii name", mcp.CallToolParams{Name: "é", Arguments: raw(`{}`)}, false},
		{"number token", mcp.CallToolParams{Name: "echo", Meta: mcp.Meta{"progressToken": 7}, Arguments: raw(`{}`)}, false},
		{"object meta", mcp.CallToolParams{Name: "echo", Meta: mcp.Meta{"x": map[string]any{"a": 1}}, Arguments: raw(`{}`)}, false},
		{"map arguments", mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"a": 1}}, false},
		{"no arguments", mcp.CallToolParams{Name: "echo"}, false},
		{"input round", mcp.CallToolParams{Name: "echo", Arguments: raw(`{}`), RequestState: "s"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := encodeCallJSON(7, &tc.p)
			if err != nil {
				t.Fatal(err)
			}
			got, plain := encodePlainCall(7, &tc.p)
			if plain != tc.plain {
				t.Fatalf("encoded without reflection: %v, want %v", plain, tc.plain)
			}
			if plain && !bytes.Equal(got, want) {
				t.Errorf("\n%s\nwant\n%s", got, want)
			}
			if all, _ := encodeOwnCall(7, &tc.p); !bytes.Equal(all, want) {
				t.Errorf("encodeOwnCall:\n%s\nwant\n%s", all, want)
			}
		})
	}
	bad := mcp.CallToolParams{Name: "echo", Arguments: raw(`{"a":`)}
	if _, plain := encodePlainCall(7, &bad); plain {
		t.Error("arguments that are not JSON encoded without reflection")
	}
	if _, err := encodeOwnCall(7, &bad); err == nil {
		t.Error("arguments that are not JSON encoded without an error")
	}
}

// FuzzEncodePlainCall: whatever the name, token and arguments, a call
// encoded without reflection is what encoding/json writes for it.
func FuzzEncodePlainCall(f *testing.F) {
	f.Add("echo", "mcphost-1", []byte(`{"text":"hi"}`))
	f.Add("a<b", "", []byte(` {"x" : [1, "\u2028"]} `))
	f.Add("echo", "t", []byte(`{"a":`))
	f.Fuzz(func(t *testing.T, name, token string, args []byte) {
		p := mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)}
		if token != "" {
			p.Meta = mcp.Meta{"progressToken": token}
		}
		got, plain := encodePlainCall(3, &p)
		if !plain {
			return
		}
		want, err := encodeCallJSON(3, &p)
		if err != nil {
			t.Fatalf("encoded without reflection, but encoding/json fails: %v", err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("\n%s\nwant\n%s", got, want)
		}
	})
}
