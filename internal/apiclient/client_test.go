package apiclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mcphost/mcphost/internal/apiclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const token = "tok-0123456789abcdef"

// mcpResults leaves out what go-sdk's result types keep to themselves.
var mcpResults = cmpopts.IgnoreUnexported(mcp.ReadResourceResult{}, mcp.GetPromptResult{})

// request is what the test server saw of one request.
type request struct {
	Method, Path, Auth, ContentType, Body string
}

// answer is what the test server sends back.
type answer struct {
	status int
	body   string
}

// daemon is an httptest server on 127.0.0.1 that records each request and
// answers with the next canned answer.
type daemon struct {
	*httptest.Server
	mu      sync.Mutex
	seen    []request
	answers []answer
}

func newDaemon(t *testing.T, answers ...answer) *daemon {
	t.Helper()
	d := &daemon{answers: answers}
	d.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		d.mu.Lock()
		d.seen = append(d.seen, request{r.Method, r.URL.RequestURI(), r.Header.Get("Authorization"), r.Header.Get("Content-Type"), string(b)})
		a := answer{http.StatusInternalServerError, `{"error":{"code":"internal","message":"no answer left"}}`}
		if len(d.answers) > 0 {
			a, d.answers = d.answers[0], d.answers[1:]
		}
		d.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
	}))
	t.Cleanup(d.Close)
	return d
}

func (d *daemon) requests() []request {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]request(nil), d.seen...)
}

// TestRoutes calls each route against a daemon that gives a success answer
// and checks the request sent (method, path, token, body) and the value
// decoded from the answer.
func TestRoutes(t *testing.T) {
	type server struct {
		Name  string `json:"name"`
		State string `json:"state"`
	}
	type session struct {
		ID      string `json:"id"`
		Entries int    `json:"entries"`
	}
	type entry struct {
		Seq    int64  `json:"seq"`
		Status string `json:"status"`
	}
	auth := "Bearer " + token
	tests := []struct {
		name   string
		answer answer
		call   func(ctx context.Context, c *apiclient.Client) (any, error)
		want   request
		result any
	}{
		{
			name:   "me",
			answer: answer{200, `{"name":"alice","groups":["ops"],"origin":"api","admin":false}`},
			call: func(ctx context.Context, c *apiclient.Client) (any, error) {
				var me struct{ Name string }
				err := c.Me(ctx, &me)
				return me.Name, err
			},
			want:   request{Method: "GET", Path: "/api/v1/me", Auth: auth},
			result: "alice",
		},
		{
			name:   "servers",
			answer: answer{200, `{"servers":[{"name":"fx","state":"ready","era":"legacy"},{"name":"b","state":"failed"}]}`},
			call: func(ctx context.Context, c *apiclient.Client) (any, error) {
				var ss []server
				err := c.Servers(ctx, &ss)
				return ss, err
			},
			want:   request{Method: "GET", Path: "/api/v1/servers", Auth: auth},
			result: []server{{"fx", "ready"}, {"b", "failed"}},
		},
		{
			name:   "tools",
			answer: answer{200, `{"tools":[{"server":"fx","name":"echo"}]}`},
			call: func(ctx context.Context, c *apiclient.Client) (any, error) {
				var ts []struct{ Server, Name string }
				err := c.Tools(ctx, &ts)
				return ts, err
			},
			want:   request{Method: "GET", Path: "/api/v1/tools", Auth: auth},
			result: []struct{ Server, Name string }{{"fx", "echo"}},
		},
		{
			name:   "search tools",
			answer: answer{200, `{"tools":[{"server":"fx","name":"add"},{"server":"fx","name":"grow"}],"total":7}`},
			call: func(ctx context.Context, c *apiclient.Client) (any, error) {
				var ts []struct{ Server, Name string }
				total, err := c.SearchTools(ctx, "add two & more", []string{"fx", "a b"}, 2, &ts)
				return []any{ts, total}, err
			},
			want:   request{Method: "GET", Path: "/api/v1/tools?limit=2&search=add+two+%26+more&server=fx&server=a+b", Auth: auth},
			result: []any{[]struct{ Server, Name string }{{"fx", "add"}, {"fx", "grow"}}, 7},
		},
		{
			name:   "search tools with the daemon's limit",
			answer: answer{200, `{"tools":[],"total":0}`},
			call: func(ctx context.Context, c *apiclient.Client) (any, error) {
				var ts []struct{ Server, Name string }
				total, err := c.SearchTools(ctx, "zz", nil, 0, &ts)
				return total, err
			},
			want:   request{Method: "GET", Path: "/api/v1/tools?search=zz", Auth: auth},
			result: 0,
		},
		{
			name:   "resources of a server whose name needs escaping",
			answer: answer{200, `{"resources":[{"uri":"file:///a","name":"a"}],"resourceTemplates":[{"uriTemplate":"file:///{x}","name":"x"}]}`},
			call: func(ctx context.Context, c *apiclient.Client) (any, error) {
				rs, ts, err := c.Resources(ctx, "a/b c")
				return []any{rs, ts}, err
			},
			want: request{Method: "GET", Path: "/api/v1/servers/a%2Fb%20c/resources", Auth: auth},
			result: []any{
				[]*mcp.Resource{{URI: "file:///a", Name: "a"}},
				[]*mcp.ResourceTemplate{{URITemplate: "file:///{x}", Name: "x"}},
			},
		},
		{
			name:   "read a resource",
			answer: answer{200, `{"contents":[{"uri":"file:///a","text":"hello"}]}`},
			call: func(ctx context.Context, c *apiclient.Client) (any, error) {
				return c.ReadResource(ctx, "s_1", "fx", "file:///a")
			},
			want:   request{Method: "POST", Path: "/api/v1/servers/fx/resources/read", Auth: auth, ContentType: "application/json", Body: `{"sessionId":"s_1","uri":"file:///a"}`},
			result: &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "file:///a", Text: "hello"}}},
		},
		{
			name:   "prompts",
			answer: answer{200, `{"prompts":[{"name":"greet"}]}`},
			call: func(ctx context.Context, c *apiclient.Client) (any, error) {
				return c.Prompts(ctx, "fx")
			},
			want:   request{Method: "GET", Path: "/api/v1/servers/fx/prompts", Auth: auth},
			result: []*mcp.Prompt{{Name: "greet"}},
		},
		{
			name:   "get a prompt",
			answer: answer{200, `{"description":"d","messages":[{"role":"user","content":{"type":"text","text":"Hello, Ada!"}}]}`},
			call: func(ctx context.Context, c *apiclient.Client) (any, error) {
				return c.GetPrompt(ctx, "", "fx", "greet", map[string]string{"name": "Ada"})
			},
			want: request{Method: "POST", Path: "/api/v1/servers/fx/prompts/get", Auth: auth, ContentType: "application/json", Body: `{"arguments":{"name":"Ada"},"name":"greet"}`},
			result: &mcp.GetPromptResult{Description: "d", Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Hello, Ada!"}},
			}},
		},
		{
			name:   "sessions",
			answer: answer{200, `{"sessions":[{"id":"s_1","title":"t","entries":3}]}`},
			call: func(ctx context.Context, c *apiclient.Client) (any, error) {
				var ss []session
				err := c.Sessions(ctx, &ss)
				return ss, err
			},
			want:   request{Method: "GET", Path: "/api/v1/sessions", Auth: auth},
			result: []session{{"s_1", 3}},
		},
		{
			name:   "create a session",
			answer: answer{201, `{"id":"s_2","title":"mcphost CLI","entries":0}`},
			call: func(ctx context.Context, c *apiclient.Client) (any, error) {
				return c.CreateSession(ctx, "mcphost CLI")
			},
			want:   request{Method: "POST", Path: "/api/v1/sessions", Auth: auth, ContentType: "application/json", Body: `{"title":"mcphost CLI"}`},
			result: "s_2",
		},
		{
			name:   "call",
			answer: answer{200, `{"id":"e_1","seq":7,"status":"ok","result":{"content":[]}}`},
			call: func(ctx context.Context, c *apiclient.Client) (any, error) {
				var e entry
				err := c.Call(ctx, "s_1", apiclient.CallRequest{Server: "fx", Tool: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)}, &e)
				return e, err
			},
			want:   request{Method: "POST", Path: "/api/v1/sessions/s_1/calls", Auth: auth, ContentType: "application/json", Body: `{"server":"fx","tool":"echo","arguments":{"text":"hi"}}`},
			result: entry{7, "ok"},
		},
		{
			name:   "a page of entries",
			answer: answer{200, `{"entries":[{"seq":501,"status":"ok"}],"next":501}`},
			call: func(ctx context.Context, c *apiclient.Client) (any, error) {
				var es []entry
				next, more, err := c.Entries(ctx, "s_1", 500, 500, &es)
				return []any{es, next, more}, err
			},
			want:   request{Method: "GET", Path: "/api/v1/sessions/s_1/entries?after=500&limit=500", Auth: auth},
			result: []any{[]entry{{501, "ok"}}, int64(501), true},
		},
		{
			name:   "the last page of entries",
			answer: answer{200, `{"entries":[],"next":null}`},
			call: func(ctx context.Context, c *apiclient.Client) (any, error) {
				var es []entry
				next, more, err := c.Entries(ctx, "s_1", 0, 0, &es)
				return []any{es, next, more}, err
			},
			want:   request{Method: "GET", Path: "/api/v1/sessions/s_1/entries?after=0", Auth: auth},
			result: []any{[]entry{}, int64(0), false},
		},
		{
			name:   "reload, dry run",
			answer: answer{200, `{"from":"sha256:a","to":"sha256:b","dry_run":true}`},
			call: func(ctx context.Context, c *apiclient.Client) (any, error) {
				var plan json.RawMessage
				err := c.Reload(ctx, true, &plan)
				return string(plan), err
			},
			want:   request{Method: "POST", Path: "/api/v1/reload?dry_run=true", Auth: auth},
			result: `{"from":"sha256:a","to":"sha256:b","dry_run":true}`,
		},
		{
			name:   "start a sign-in",
			answer: answer{201, `{"id":"f_1","launchUrl":"http://x/oauth/launch/f_1"}`},
			call: func(ctx context.Context, c *apiclient.Client) (any, error) {
				var f struct {
					ID        string `json:"id"`
					LaunchURL string `json:"launchUrl"`
				}
				err := c.StartSignIn(ctx, "prot", &f)
				return f.ID, err
			},
			want:   request{Method: "POST", Path: "/api/v1/servers/prot/auth/start", Auth: auth},
			result: "f_1",
		},
		{
			name:   "wait for a sign-in",
			answer: answer{200, `{"id":"f_1","state":"done"}`},
			call: func(ctx context.Context, c *apiclient.Client) (any, error) {
				var f struct{ State string }
				err := c.SignInFlow(ctx, "f_1", 30*time.Second, &f)
				return f.State, err
			},
			want:   request{Method: "GET", Path: "/api/v1/auth/flows/f_1?wait=30s", Auth: auth},
			result: "done",
		},
		{
			name:   "credentials of one server",
			answer: answer{200, `{"credentials":[{"server":"prot","principal":"owner"}]}`},
			call: func(ctx context.Context, c *apiclient.Client) (any, error) {
				var cs []struct{ Server, Principal string }
				err := c.Credentials(ctx, "prot", &cs)
				return cs, err
			},
			want:   request{Method: "GET", Path: "/api/v1/auth?server=prot", Auth: auth},
			result: []struct{ Server, Principal string }{{"prot", "owner"}},
		},
		{
			name:   "sign out",
			answer: answer{204, ""},
			call: func(ctx context.Context, c *apiclient.Client) (any, error) {
				return nil, c.SignOut(ctx, "prot")
			},
			want: request{Method: "DELETE", Path: "/api/v1/servers/prot/auth", Auth: auth},
		},
		{
			name:   "any other request",
			answer: answer{200, `{"hash":"sha256:a"}`},
			call: func(ctx context.Context, c *apiclient.Client) (any, error) {
				var cfg struct{ Hash string }
				err := c.Do(ctx, "GET", "/api/v1/config", nil, &cfg)
				return cfg.Hash, err
			},
			want:   request{Method: "GET", Path: "/api/v1/config", Auth: auth},
			result: "sha256:a",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDaemon(t, tt.answer)
			c := apiclient.New(d.URL+"/", token) // a trailing slash is dropped
			got, err := tt.call(t.Context(), c)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]request{tt.want}, d.requests()); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.result, got, mcpResults); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

// TestErrors maps error answers to *apiclient.Error: the API's error
// shape, a policy's refusal with the entry it recorded, and bodies that
// are not the API's.
func TestErrors(t *testing.T) {
	tests := []struct {
		name   string
		answer answer
		want   *apiclient.Error
		text   string // want.Error()
	}{
		{
			name:   "not found",
			answer: answer{404, `{"error":{"code":"not_found","message":"unknown server \"nope\""}}`},
			want:   &apiclient.Error{Status: 404, Code: "not_found", Message: `unknown server "nope"`},
			text:   `unknown server "nope"`,
		},
		{
			name:   "denied by policy, with the entry",
			answer: answer{403, `{"error":{"code":"denied_by_policy","message":"not under /etc","rule":"no-etc","phase":"call"},"entry":{"id":"e_9","status":"denied"}}`},
			want: &apiclient.Error{Status: 403, Code: "denied_by_policy", Message: "not under /etc", Rule: "no-etc", Phase: "call",
				Entry: json.RawMessage(`{"id":"e_9","status":"denied"}`)},
			text: "not under /etc",
		},
		{
			name:   "rate limited",
			answer: answer{429, `{"error":{"code":"rate_limited","message":"rate limit exceeded"}}`},
			want:   &apiclient.Error{Status: 429, Code: "rate_limited", Message: "rate limit exceeded"},
			text:   "rate limit exceeded",
		},
		{
			name:   "a code without a message",
			answer: answer{503, `{"error":{"code":"not_ready"}}`},
			want:   &apiclient.Error{Status: 503, Code: "not_ready"},
			text:   "the daemon answered 503 Service Unavailable",
		},
		{
			name:   "not JSON",
			answer: answer{502, "<html>Bad Gateway</html>\n"},
			want:   &apiclient.Error{Status: 502},
			text:   "the daemon answered 502 Bad Gateway",
		},
		{
			name:   "empty",
			answer: answer{401, ""},
			want:   &apiclient.Error{Status: 401},
			text:   "the daemon answered 401 Unauthorized",
		},
		{
			name:   "an entry of null",
			answer: answer{403, `{"error":{"code":"forbidden","message":"no"},"entry":null}`},
			want:   &apiclient.Error{Status: 403, Code: "forbidden", Message: "no"},
			text:   "no",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDaemon(t, tt.answer)
			var out struct{}
			err := apiclient.New(d.URL, token).Call(t.Context(), "s_1", apiclient.CallRequest{Server: "fx", Tool: "t"}, &out)
			var got *apiclient.Error
			if !errors.As(err, &got) {
				t.Fatalf("error %v (%T), want an *apiclient.Error", err, err)
			}
			want := *tt.want
			want.Method, want.Path, want.Body = "POST", "/api/v1/sessions/s_1/calls", []byte(tt.answer.body)
			if diff := cmp.Diff(&want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if got.Error() != tt.text {
				t.Errorf("Error() = %q, want %q", got.Error(), tt.text)
			}
			if errors.Is(err, apiclient.ErrNoAnswer) {
				t.Errorf("an answer is ErrNoAnswer: %v", err)
			}
		})
	}
}

// TestNoAnswer covers requests the daemon does not answer: the client's
// timeout ends a quick request, not one that waits; nobody listening; an
// answer that is not JSON where JSON was due.
func TestNoAnswer(t *testing.T) {
	// hang answers once the request's context ends, or at release.
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
			io.WriteString(w, `{}`)
		}
	}))
	defer hang.Close()
	defer close(release)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	notJSON := newDaemon(t, answer{200, "<html>hello</html>"})

	tests := []struct {
		name      string
		do        func(ctx context.Context) error
		noAnswer  bool // errors.Is ErrNoAnswer
		deadline  bool // errors.Is context.DeadlineExceeded
		substring string
	}{
		{
			name: "the client's timeout ends a quick request",
			do: func(ctx context.Context) error {
				return apiclient.New(hang.URL, token).WithTimeout(20*time.Millisecond).Servers(ctx, &[]struct{}{})
			},
			noAnswer: true, deadline: true, substring: "no answer from the daemon at " + hang.URL + ": context deadline exceeded",
		},
		{
			name: "the caller's context ends a call",
			do: func(ctx context.Context) error {
				ctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
				defer cancel()
				return apiclient.New(hang.URL, token).Call(ctx, "s_1", apiclient.CallRequest{Server: "fx", Tool: "t"}, nil)
			},
			noAnswer: true, deadline: true, substring: "context deadline exceeded",
		},
		{
			name: "nobody listens",
			do: func(ctx context.Context) error {
				return apiclient.New(closed.URL, token).Me(ctx, &struct{}{})
			},
			noAnswer: true, substring: "no answer from the daemon at " + closed.URL + ": ",
		},
		{
			name: "an answer that is not JSON",
			do: func(ctx context.Context) error {
				return apiclient.New(notJSON.URL, token).Me(ctx, &struct{}{})
			},
			substring: "decoding the daemon's answer to GET /api/v1/me: ",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do(t.Context())
			if err == nil {
				t.Fatal("no error")
			}
			if got := errors.Is(err, apiclient.ErrNoAnswer); got != tt.noAnswer {
				t.Errorf("errors.Is(%v, ErrNoAnswer) = %v, want %v", err, got, tt.noAnswer)
			}
			if got := errors.Is(err, context.DeadlineExceeded); got != tt.deadline {
				t.Errorf("errors.Is(%v, DeadlineExceeded) = %v, want %v", err, got, tt.deadline)
			}
			if !strings.Contains(err.Error(), tt.substring) {
				t.Errorf("error %q, want it to contain %q", err, tt.substring)
			}
			if strings.Contains(err.Error(), token) {
				t.Errorf("error %q names the token", err)
			}
		})
	}
}

// TestWaitingRequestsIgnoreTheTimeout: the client's timeout bounds quick
// requests only; a call, a read, a prompt get and a reload wait for the
// daemon however short it is.
func TestWaitingRequestsIgnoreTheTimeout(t *testing.T) {
	d := newDaemon(t,
		answer{200, `{"status":"ok"}`},
		answer{200, `{"contents":[]}`},
		answer{200, `{"messages":[]}`},
		answer{200, `{}`},
		answer{200, `{"servers":[]}`},
	)
	// A timeout that has passed before any request is sent.
	c := apiclient.New(d.URL, token).WithTimeout(time.Nanosecond)
	ctx := t.Context()
	if err := c.Call(ctx, "s_1", apiclient.CallRequest{Server: "fx", Tool: "t"}, nil); err != nil {
		t.Errorf("call: %v", err)
	}
	if _, err := c.ReadResource(ctx, "", "fx", "file:///a"); err != nil {
		t.Errorf("read: %v", err)
	}
	if _, err := c.GetPrompt(ctx, "", "fx", "p", nil); err != nil {
		t.Errorf("prompt: %v", err)
	}
	if err := c.Reload(ctx, false, nil); err != nil {
		t.Errorf("reload: %v", err)
	}
	if err := c.Servers(ctx, &[]struct{}{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("servers: %v, want the timeout", err)
	}
	if n := len(d.requests()); n != 4 {
		t.Errorf("the daemon saw %d requests, want 4 (none for the quick one)", n)
	}
}

// TestWithToken: a copy with another token, the original unchanged, and
// both on the same http.Client.
func TestWithToken(t *testing.T) {
	d := newDaemon(t, answer{200, `{}`}, answer{200, `{}`})
	hc := &http.Client{}
	alice := apiclient.New(d.URL, "alice-token").WithHTTPClient(hc)
	bob := alice.WithToken("bob-token")
	ctx := t.Context()
	if err := alice.Me(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := bob.Me(ctx, nil); err != nil {
		t.Fatal(err)
	}
	var auths []string
	for _, r := range d.requests() {
		auths = append(auths, r.Auth)
	}
	if diff := cmp.Diff([]string{"Bearer alice-token", "Bearer bob-token"}, auths); diff != "" {
		t.Errorf("Authorization headers (-want +got):\n%s", diff)
	}
	if alice.Base() != d.URL || bob.Base() != d.URL {
		t.Errorf("Base() = %q, %q; want %q", alice.Base(), bob.Base(), d.URL)
	}
}
