package wasmserver

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestExtismPlugin(t *testing.T) {
	path := echoPlugin(t)
	kind, err := Detect(context.Background(), path)
	if err != nil || kind != KindExtismV2 {
		t.Fatalf("Detect = %q, %v; want %q", kind, err, KindExtismV2)
	}
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	}))
	defer web.Close()
	_, port, _ := net.SplitHostPort(web.Listener.Addr().String())

	for _, version := range []string{legacyVersion, "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			dir, file := dataDir(t)
			s := start(t, Spec{
				Name:       "echo-plugin",
				Path:       path,
				Env:        map[string]string{"prefix": "> "},
				Read:       []string{dir},
				AllowHosts: []string{"127.0.0.1:" + port},
			})
			if s.Kind() != KindExtismV2 {
				t.Fatalf("Kind = %q", s.Kind())
			}
			cs := connect(t, s, version, nil)
			if got := cs.InitializeResult().ServerInfo.Name; got != "echo-plugin" {
				t.Errorf("serverInfo.name = %q", got)
			}
			if names := toolNames(t, cs); !slices.Equal(names, []string{"echo", "fetch_status", "read_file"}) {
				t.Errorf("tools = %v", names)
			}
			if text, isErr := call(t, cs, "echo", map[string]any{"text": "hello"}); text != "> hello" || isErr {
				t.Errorf("echo = %q (error %v), want the config prefix and the text", text, isErr)
			}
			if text, isErr := call(t, cs, "read_file", map[string]any{"path": file}); text != "granted content" || isErr {
				t.Errorf("read_file of a granted file = %q (error %v)", text, isErr)
			}
			if text, isErr := call(t, cs, "read_file", map[string]any{"path": "/etc/passwd"}); !isErr {
				t.Errorf("read_file /etc/passwd = %q, want an error result", text)
			}
			// The allowed host, whatever its port: the rule's port is
			// stripped, since Extism matches names.
			if text, isErr := call(t, cs, "fetch_status", map[string]any{"url": web.URL}); text != "418" || isErr {
				t.Errorf("fetch_status of an allowed host = %q (error %v), want 418", text, isErr)
			}
			text, isErr := call(t, cs, "fetch_status", map[string]any{"url": "https://example.com/"})
			if !isErr || !strings.Contains(text, "not allowed") {
				t.Errorf("fetch_status of a host not allowed = %q (error %v), want a refusal", text, isErr)
			}
			// The refusal replaced the instance; the next call works.
			if text, _ := call(t, cs, "echo", map[string]any{"text": "again"}); text != "> again" {
				t.Errorf("echo after a refusal = %q", text)
			}
		})
	}
}

// A plugin serves several sessions at once; their calls take turns.
func TestExtismPluginSessions(t *testing.T) {
	s := start(t, Spec{Path: echoPlugin(t)})
	var wg sync.WaitGroup
	for i := range 3 {
		cs := connect(t, s, legacyVersion, nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 20 {
				want := strings.Repeat("x", i*100+j)
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": want}})
				if err != nil {
					t.Error(err)
					return
				}
				if got := res.Content[0].(*mcp.TextContent).Text; got != want {
					t.Errorf("session %d call %d: got %d bytes, want %d", i, j, len(got), len(want))
				}
			}
		}()
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Transport().Connect(context.Background()); err == nil {
		t.Error("Connect after Close succeeded")
	}
}

func TestExtismPluginHostile(t *testing.T) {
	var (
		mu       sync.Mutex
		logs     []string
		progress []string
	)
	opts := &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			mu.Lock()
			logs = append(logs, string(r.Params.Level)+" "+r.Params.Data.(string))
			mu.Unlock()
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, r.Params.Message)
			mu.Unlock()
		},
	}
	s := start(t, Spec{Name: "hostile", Path: hostilePlugin(t), CallTimeout: time.Second})
	cs := connect(t, s, legacyVersion, opts)
	if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ tool, want string }{
		{"spin", "call_tool: timed out after 1s"},
		{"crash", "wasm error: unreachable (stderr: panic: deliberate crash"},
		{"elicit", "host call refused: create_elicitation is not available"},
		{"roots", "host call refused: list_roots is not available"},
		{"sample", "host call refused: create_message is not available"},
		{"garbage", "call_tool returned an invalid result"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			text, isErr := call(t, cs, tc.tool, nil)
			if !isErr || !strings.Contains(text, tc.want) {
				t.Fatalf("%s = %q (error %v), want an error result with %q", tc.tool, text, isErr, tc.want)
			}
			t.Logf("%s: %s", tc.tool, text)
			// Each failure replaced the instance: the next call works and
			// its notifications reach this session.
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{
				Name: "notify",
				Meta: mcp.Meta{"progressToken": "tok-" + tc.tool},
			})
			if err != nil || res.IsError || firstText(t, res) != "notified" {
				t.Fatalf("notify after %s: %+v, %v", tc.tool, res, err)
			}
		})
	}
	// Notifications are delivered before the result they precede.
	mu.Lock()
	defer mu.Unlock()
	if len(logs) == 0 || logs[0] != "warning a log line" {
		t.Errorf("log messages = %q", logs)
	}
	if len(progress) == 0 || progress[0] != "half" {
		t.Errorf("progress messages = %q", progress)
	}
}

// The v2 ABI's inputs, and the prompts, resources, templates and
// completions of a plugin that exports them.
func TestExtismPluginABI(t *testing.T) {
	s := start(t, Spec{Name: "abi", Path: hostilePlugin(t)})
	cs := connect(t, s, legacyVersion, nil)
	ctx := context.Background()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "context", Arguments: map[string]any{"k": "v"}, Meta: mcp.Meta{"progressToken": "p1"}})
	if err != nil || res.IsError {
		t.Fatalf("context: %+v, %v", res, err)
	}
	var in struct {
		Request map[string]any `json:"request"`
		Context struct {
			Meta map[string]any `json:"_meta"`
			ID   int64          `json:"id"`
		} `json:"context"`
	}
	if err := json.Unmarshal([]byte(firstText(t, res)), &in); err != nil {
		t.Fatal(err)
	}
	wantReq := map[string]any{"name": "context", "arguments": map[string]any{"k": "v"}}
	if diff := cmp.Diff(wantReq, in.Request); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
	if in.Context.Meta["progressToken"] != "p1" || in.Context.ID == 0 {
		t.Errorf("context = %+v, want the request's _meta and an id", in.Context)
	}

	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "greet" {
		t.Fatalf("prompts: %+v, %v", prompts, err)
	}
	pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"who": "Ada"}})
	if err != nil || len(pr.Messages) != 1 || pr.Messages[0].Content.(*mcp.TextContent).Text != "Hello, Ada" {
		t.Fatalf("get_prompt: %+v, %v", pr, err)
	}

	resources, err := cs.ListResources(ctx, nil)
	if err != nil || len(resources.Resources) != 1 || resources.Resources[0].URI != "mem://notes/1" {
		t.Fatalf("resources: %+v, %v", resources, err)
	}
	templates, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(templates.ResourceTemplates) != 1 {
		t.Fatalf("resource templates: %+v, %v", templates, err)
	}
	for _, uri := range []string{"mem://notes/1", "mem://notes/42"} {
		rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "note at "+uri {
			t.Fatalf("read %s: %+v, %v", uri, rr, err)
		}
	}

	for ref, want := range map[string]string{"ref/prompt": "prompt:A", "ref/resource": "resource:A"} {
		r := &mcp.CompleteReference{Type: ref, Name: "greet"}
		if ref == "ref/resource" {
			r = &mcp.CompleteReference{Type: ref, URI: "mem://notes/{id}"}
		}
		cr, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: r, Argument: mcp.CompleteParamsArgument{Name: "who", Value: "A"}})
		if err != nil || len(cr.Completion.Values) != 1 || cr.Completion.Values[0] != want {
			t.Errorf("complete %s: %+v, %v; want %q", ref, cr, err, want)
		}
	}
}

func TestExtismPluginV1(t *testing.T) {
	path := v1Plugin(t)
	if kind, err := Detect(context.Background(), path); err != nil || kind != KindExtismV1 {
		t.Fatalf("Detect = %q, %v", kind, err)
	}
	s := start(t, Spec{Path: path})
	cs := connect(t, s, legacyVersion, nil)
	if names := toolNames(t, cs); !slices.Equal(names, []string{"echo"}) {
		t.Fatalf("tools = %v", names)
	}
	text, isErr := call(t, cs, "echo", map[string]any{"text": "hi"})
	if isErr || text != `{"params":{"arguments":{"text":"hi"},"name":"echo"}}` {
		t.Errorf("call input = %s (error %v)", text, isErr)
	}
}

func TestExtismPluginStartFails(t *testing.T) {
	for _, tc := range []struct{ mode, want string }{
		{"failstart", "list_tools: deliberate list_tools failure"},
		{"badschema", `tool "bad": the input schema must be a JSON object with "type": "object"`},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			_, err := Start(context.Background(), Spec{Name: "bad", Path: hostilePlugin(t), Env: map[string]string{"mode": tc.mode}, CacheDir: testCacheDir(t)})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `"bad"`) {
				t.Fatalf("Start: %v, want %q", err, tc.want)
			}
		})
	}
}

func TestAllowedHosts(t *testing.T) {
	got, err := allowedHosts([]string{"api.example.com:443", "*.example.org:8443", "example.net", "*", "[::1]:8080", "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"api.example.com", "*.example.org", "example.net", "*", "::1", "127.0.0.1"}
	if !slices.Equal(got, want) {
		t.Errorf("allowedHosts = %q, want %q", got, want)
	}
	for _, bad := range []string{"", "a/b", "{a,b}.com", "exa*mple.com", "*.", "[abc]"} {
		if _, err := allowedHosts([]string{bad}); err == nil {
			t.Errorf("allowedHosts(%q) succeeded", bad)
		}
	}
}
