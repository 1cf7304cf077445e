package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/mcphost/mcphost/policies"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// searchEnv is a daemon over the fixture servers fx and alt in the given
// discovery mode, with fx__add pinned and rules that hide fx__fail, deny
// a shout and ask before an echo of "ask me".
func searchEnv(t *testing.T, mode string, threshold int) *env {
	t.Helper()
	bin := testbin.Build(t, wellbehavedPkg)
	set, errs := policies.Compile([]policies.Rule{
		{Name: "no-fail", Phase: policies.PhaseList, Effect: policies.EffectDeny, When: `tool.name == "fail"`},
		{Name: "no-shouting", Phase: policies.PhaseCall, Effect: policies.EffectDeny, When: `has(args.text) && args.text == "SHOUT"`, Message: "no shouting"},
		{Name: "ask-echo", Phase: policies.PhaseCall, Effect: policies.EffectAsk, When: `tool.name == "echo" && has(args.text) && args.text == "ask me"`, Message: "echo needs a yes"},
	}, policies.EffectAllow)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return newEnvConfig(t, &config.Config{
		Servers:   []config.Server{stdioServer("fx", bin), stdioServer("alt", bin)},
		PolicySet: set,
		Gateway:   config.Gateway{Discovery: mode, DiscoveryThreshold: threshold, Pin: []string{"fx__add", "fx__fail"}},
	})
}

// metaCall calls a meta-tool and decodes its structured result into out.
func metaCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
	if out != nil {
		if res.IsError {
			t.Fatalf("%s(%v): %s", name, args, textOf(res))
		}
		if err := json.Unmarshal([]byte(textOf(res)), out); err != nil {
			t.Fatalf("%s: the text is not the JSON result: %v", name, err)
		}
		var text any
		_ = json.Unmarshal([]byte(textOf(res)), &text)
		if !reflect.DeepEqual(res.StructuredContent, text) {
			t.Errorf("%s: structuredContent %v differs from the text %s", name, res.StructuredContent, textOf(res))
		}
	}
	return res
}

type searchOut struct {
	Tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	} `json:"tools"`
	Total    int      `json:"total"`
	More     bool     `json:"more"`
	NotFound []string `json:"notFound"`
	Hint     string   `json:"hint"`
}

func (s searchOut) names() []string {
	var out []string
	for _, t := range s.Tools {
		out = append(out, t.Name)
	}
	return out
}

func listJSON(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.Tools)
	return string(b)
}

// TestSearchMode: in search mode a client lists the meta-tools and the
// pinned tools, finds, describes and calls the tools of its view through
// them, in both eras; list and call rules, ask and the transcript apply
// to the real tool.
func TestSearchMode(t *testing.T) {
	e := searchEnv(t, config.DiscoverySearch, 0)
	for _, version := range []string{legacyVersion, modernVersion} {
		t.Run(version, func(t *testing.T) {
			approve := true
			cs := e.connect(t, "/mcp", aliceToken, version, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					if !strings.Contains(r.Params.Message, "echo needs a yes") || !strings.Contains(r.Params.Message, "echo") {
						return nil, errors.New("unexpected message: " + r.Params.Message)
					}
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": approve}}, nil
				},
			})
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("negotiated %s, want %s", got, version)
			}
			instr := cs.InitializeResult().Instructions
			for _, s := range []string{"search_tools", "describe_tools", "call_tool", "fx", "alt"} {
				if !strings.Contains(instr, s) {
					t.Errorf("the instructions lack %q: %q", s, instr)
				}
			}
			res, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range res.Tools {
				names = append(names, tl.Name)
				if tl.Meta["anthropic/alwaysLoad"] != true {
					t.Errorf("%s has no anthropic/alwaysLoad", tl.Name)
				}
			}
			// fx__fail is pinned but hidden by a list rule: not listed.
			if want := []string{"search_tools", "describe_tools", "call_tool", "fx__add"}; !slices.Equal(names, want) {
				t.Fatalf("tools/list = %v, want %v", names, want)
			}
			desc := res.Tools[0].Description
			for _, s := range []string{"fx (", "alt (", "before saying a capability is unavailable", "call_tool"} {
				if !strings.Contains(desc, s) {
					t.Errorf("search_tools' description lacks %q: %s", s, desc)
				}
			}
			if a := res.Tools[0].Annotations; a == nil || !a.ReadOnlyHint || !a.IdempotentHint {
				t.Errorf("search_tools' annotations %+v", a)
			}
			before := listJSON(t, cs)

			var found searchOut
			search := func(args map[string]any) {
				found = searchOut{}
				metaCall(t, cs, "search_tools", args, &found)
			}
			search(map[string]any{"query": "echo text unchanged"})
			if len(found.Tools) == 0 || !strings.HasSuffix(found.Tools[0].Name, "__echo") || len(found.Tools[0].InputSchema) == 0 {
				t.Fatalf("search echo: %+v", found)
			}
			search(map[string]any{"query": "echo", "servers": []string{"alt"}, "limit": 1})
			if !slices.Equal(found.names(), []string{"alt__echo"}) || found.Total < 1 {
				t.Fatalf("search echo on alt: %+v", found)
			}
			search(map[string]any{"query": "always fails isError", "limit": 20})
			if slices.ContainsFunc(found.names(), func(n string) bool { return strings.HasSuffix(n, "__fail") }) {
				t.Fatalf("a hidden tool found: %v", found.names())
			}
			search(map[string]any{"query": "select:fx__fail,fx__echo,nope__x"})
			if !slices.Equal(found.names(), []string{"fx__echo"}) || !slices.Equal(found.NotFound, []string{"fx__fail", "nope__x"}) {
				t.Fatalf("select: %+v", found)
			}
			search(map[string]any{"query": "alt__add", "detail": "brief"})
			if !slices.Equal(found.names(), []string{"alt__add"}) || len(found.Tools[0].InputSchema) != 0 {
				t.Fatalf("exact name, brief: %+v", found)
			}
			for _, bad := range []map[string]any{{}, {"query": ""}, {"query": "x", "limit": 0}, {"query": "x", "limit": 21}, {"query": "x", "limit": 2.5},
				{"query": strings.Repeat("q", 5000)}, {"query": "x", "detail": "all"}, {"query": 3}} {
				if r := metaCall(t, cs, "search_tools", bad, nil); !r.IsError || !strings.Contains(textOf(r), "search_tools:") {
					t.Errorf("search_tools(%v) = %+v, want a tool error", bad, r)
				}
			}

			var described struct {
				Tools    []mcp.Tool `json:"tools"`
				NotFound []string   `json:"notFound"`
			}
			metaCall(t, cs, "describe_tools", map[string]any{"names": []string{"fx__echo", "fx__fail"}}, &described)
			if len(described.Tools) != 1 || described.Tools[0].Name != "fx__echo" || described.Tools[0].InputSchema == nil || !slices.Equal(described.NotFound, []string{"fx__fail"}) {
				t.Fatalf("describe: %+v", described)
			}
			if r := metaCall(t, cs, "describe_tools", map[string]any{"names": []string{}}, nil); !r.IsError {
				t.Errorf("describe of no names: %+v", r)
			}

			call := func(args map[string]any) (*mcp.CallToolResult, error) {
				return cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "call_tool", Arguments: args})
			}
			for _, args := range []map[string]any{
				{"name": "fx__echo", "arguments": map[string]any{"text": "hi"}},
				{"name": "fx__echo", "arguments": `{"text":"hi"}`},                                           // a JSON string
				{"arguments": map[string]any{"name": "fx__echo", "text": "hi"}},                              // name among the arguments
				{"arguments": map[string]any{"name": "fx__echo", "arguments": map[string]any{"text": "hi"}}}, // nested
			} {
				res, err := call(args)
				if err != nil || res.IsError || textOf(res) != "hi" {
					t.Fatalf("call_tool(%v) = %+v, %v", args, res, err)
				}
			}
			if _, err := call(map[string]any{"name": "fx__fail", "arguments": map[string]any{}}); err == nil || !strings.Contains(err.Error(), `unknown tool "fx__fail"`) {
				t.Fatalf("call_tool of a hidden tool: %v, want unknown tool", err)
			}
			_, hidden := call(map[string]any{"name": "fx__fail", "arguments": map[string]any{}})
			_, missing := call(map[string]any{"name": "fx__nothing", "arguments": map[string]any{}})
			if strings.ReplaceAll(hidden.Error(), "fx__fail", "X") != strings.ReplaceAll(missing.Error(), "fx__nothing", "X") {
				t.Errorf("hidden %q and missing %q differ", hidden, missing)
			}
			for _, args := range []map[string]any{{}, {"name": "fx__echo", "arguments": "not json"}, {"name": "fx__echo", "arguments": []any{1}}, {"name": "call_tool", "arguments": map[string]any{}}} {
				if _, err := call(args); err == nil {
					t.Errorf("call_tool(%v): no error", args)
				}
			}
			if _, err := call(map[string]any{"name": "fx__add", "arguments": map[string]any{"a": "not a number"}}); err == nil {
				t.Errorf("call_tool with arguments its schema refuses: no error")
			}
			cr, err := call(map[string]any{"name": "fx__echo", "arguments": map[string]any{"text": "SHOUT"}})
			if err != nil || !cr.IsError || !strings.Contains(textOf(cr), "no shouting") {
				t.Fatalf("call_tool of a denied call = %+v, %v", cr, err)
			}
			cr, err = call(map[string]any{"name": "fx__echo", "arguments": map[string]any{"text": "ask me"}})
			if err != nil || cr.IsError || textOf(cr) != "ask me" {
				t.Fatalf("call_tool with an approved ask = %+v, %v", cr, err)
			}
			approve = false
			cr, err = call(map[string]any{"name": "fx__echo", "arguments": map[string]any{"text": "ask me"}})
			if err != nil || !cr.IsError || !strings.Contains(textOf(cr), "not approved") {
				t.Fatalf("call_tool with a declined ask = %+v, %v", cr, err)
			}
			// A direct call of a tool that is in the view but not listed.
			cr, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alt__echo", Arguments: map[string]any{"text": "direct"}})
			if err != nil || textOf(cr) != "direct" {
				t.Fatalf("direct call = %+v, %v", cr, err)
			}
			if after := listJSON(t, cs); after != before {
				t.Errorf("tools/list changed after searches:\n%s\n%s", before, after)
			}
		})
	}
	// The transcript names the real tool, never call_tool: per era four
	// calls, a denied one and two asked ones of fx.echo, one of alt.echo.
	p := host.Principal{Name: "alice"}
	sessions, err := e.h.Sessions(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]int{}
	for _, s := range sessions {
		entries, _, err := e.h.Entries(t.Context(), p, s.ID, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, en := range entries {
			tools[en.Server+"."+en.Tool]++
		}
	}
	if len(sessions) == 0 {
		t.Fatal("no transcript session")
	}
	if tools["fx.echo"] != 2*7 || tools["alt.echo"] != 2 || len(tools) != 2 {
		t.Errorf("transcript entries by tool: %v", tools)
	}
}

// TestListModeUnchanged: the default lists every tool and serves no
// meta-tool.
func TestListModeUnchanged(t *testing.T) {
	e := searchEnv(t, "", 0)
	for _, version := range []string{legacyVersion, modernVersion} {
		cs := e.connect(t, "/mcp", aliceToken, version, nil)
		names := toolNames(t, cs)
		if !slices.Contains(names, "fx__echo") || slices.Contains(names, "search_tools") {
			t.Fatalf("%s: list mode lists %v", version, names)
		}
		if instr := cs.InitializeResult().Instructions; instr != "" {
			t.Errorf("%s: list mode has instructions %q", version, instr)
		}
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": "echo"}}); err == nil {
			t.Fatalf("%s: search_tools answered in list mode", version)
		}
	}
}

// TestAutoMode: past the threshold a client gets the meta-tools; Claude
// Code, which defers tools itself, gets the full list.
func TestAutoMode(t *testing.T) {
	e := searchEnv(t, config.DiscoveryAuto, 100)
	cs := e.connect(t, "/mcp", aliceToken, modernVersion, nil)
	if names := toolNames(t, cs); !slices.Contains(names, "search_tools") || slices.Contains(names, "fx__echo") {
		t.Fatalf("auto past the threshold lists %v", names)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "2.0"}, nil)
	cc, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: e.base + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{token: aliceToken, next: http.DefaultTransport}}}, &mcp.ClientSessionOptions{ProtocolVersion: modernVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	if names := toolNames(t, cc); slices.Contains(names, "search_tools") || !slices.Contains(names, "fx__echo") {
		t.Fatalf("auto lists %v to Claude Code", names)
	}

	small := searchEnv(t, config.DiscoveryAuto, 1<<20)
	if names := toolNames(t, small.connect(t, "/mcp", aliceToken, legacyVersion, nil)); slices.Contains(names, "search_tools") {
		t.Fatalf("auto under the threshold lists %v", names)
	}
}

// TestMetaToolNameTaken: on a passthrough endpoint in search mode a
// server's own tool named search_tools is not served; the meta-tool is.
func TestMetaToolNameTaken(t *testing.T) {
	e := searchEnv(t, config.DiscoverySearch, 0)
	cs := e.connect(t, "/mcp/servers/fx", aliceToken, legacyVersion, nil)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "grow", Arguments: map[string]any{"name": "search_tools"}})
	if err != nil || res.IsError {
		t.Fatalf("grow: %+v, %v", res, err)
	}
	// The server's tool is on /mcp as fx__search_tools, and the meta-tool
	// stays the gateway's on /mcp/servers/fx.
	agg := e.connect(t, "/mcp", aliceToken, legacyVersion, nil)
	waitFor(t, "fx__search_tools on /mcp", func() bool {
		var found searchOut
		metaCall(t, agg, "search_tools", map[string]any{"query": "select:fx__search_tools"}, &found)
		return len(found.Tools) == 1
	})
	var found searchOut
	metaCall(t, cs, "search_tools", map[string]any{"query": "echo"}, &found)
	if len(found.Tools) == 0 {
		t.Fatalf("search_tools on /mcp/servers/fx: %+v", found)
	}
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": "echo", "text": "x"}})
	if err != nil || textOf(res) == "x" {
		t.Fatalf("search_tools reached the server's tool: %+v, %v", res, err)
	}
}

// TestSearchPinPassthrough: a pin (SERVER__TOOL) lists the tool on its
// server's passthrough endpoint too, under the plain name it has there;
// another server's pin is not listed there.
func TestSearchPinPassthrough(t *testing.T) {
	e := searchEnv(t, config.DiscoverySearch, 0)
	for _, version := range []string{legacyVersion, modernVersion} {
		if names := toolNames(t, e.connect(t, "/mcp/servers/fx", aliceToken, version, nil)); !slices.Equal(names, []string{"search_tools", "describe_tools", "call_tool", "add"}) {
			t.Errorf("%s: /mcp/servers/fx lists %v, want the meta-tools and add", version, names)
		}
		if names := toolNames(t, e.connect(t, "/mcp/servers/alt", aliceToken, version, nil)); !slices.Equal(names, []string{"search_tools", "describe_tools", "call_tool"}) {
			t.Errorf("%s: /mcp/servers/alt lists %v, want the meta-tools alone", version, names)
		}
	}
}

// TestDiscoveryParam: ?discovery= on the URL overrides the endpoint's
// mode for a client that can set nothing else, in both eras and both
// ways; a value that is no mode is refused with 400 and a JSON-RPC error.
func TestDiscoveryParam(t *testing.T) {
	list := searchEnv(t, config.DiscoveryList, 0)
	search := searchEnv(t, config.DiscoverySearch, 0)
	for _, version := range []string{legacyVersion, modernVersion} {
		t.Run(version, func(t *testing.T) {
			cs := list.connect(t, "/mcp?discovery=search", aliceToken, version, nil)
			if names := toolNames(t, cs); !slices.Equal(names, []string{"search_tools", "describe_tools", "call_tool", "fx__add"}) {
				t.Fatalf("list mode with ?discovery=search lists %v", names)
			}
			if instr := cs.InitializeResult().Instructions; !strings.Contains(instr, "search_tools") {
				t.Errorf("instructions with ?discovery=search: %q", instr)
			}
			var found searchOut
			metaCall(t, cs, "search_tools", map[string]any{"query": "echo text unchanged"}, &found)
			if len(found.Tools) == 0 || !strings.HasSuffix(found.Tools[0].Name, "__echo") {
				t.Fatalf("search_tools with ?discovery=search: %+v", found)
			}
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "fx__echo", "arguments": map[string]any{"text": "via url"}}})
			if err != nil || textOf(res) != "via url" {
				t.Fatalf("call_tool with ?discovery=search: %+v, %v", res, err)
			}
			// The passthrough endpoint takes it too.
			if names := toolNames(t, list.connect(t, "/mcp/servers/fx?discovery=search", aliceToken, version, nil)); !slices.Equal(names, []string{"search_tools", "describe_tools", "call_tool", "add"}) {
				t.Errorf("/mcp/servers/fx?discovery=search lists %v", names)
			}

			// Without the parameter the same daemon lists every tool and
			// has no meta-tool.
			plain := list.connect(t, "/mcp", aliceToken, version, nil)
			if names := toolNames(t, plain); slices.Contains(names, "search_tools") || !slices.Contains(names, "fx__echo") {
				t.Fatalf("list mode lists %v", names)
			}
			if _, err := plain.CallTool(t.Context(), &mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": "echo"}}); err == nil || !strings.Contains(err.Error(), `unknown tool "search_tools"`) {
				t.Fatalf("search_tools in list mode: %v, want unknown tool", err)
			}

			// ?discovery=list on a search endpoint: the whole list, no meta-tool.
			full := search.connect(t, "/mcp?discovery=list", aliceToken, version, nil)
			if names := toolNames(t, full); slices.Contains(names, "search_tools") || !slices.Contains(names, "alt__echo") {
				t.Fatalf("search mode with ?discovery=list lists %v", names)
			}
			if _, err := full.CallTool(t.Context(), &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "fx__echo"}}); err == nil {
				t.Fatalf("call_tool answered with ?discovery=list")
			}
		})
	}
	for _, q := range []string{"discovery=all", "discovery=", "discovery=SEARCH", "discovery=search&discovery=list"} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, list.base+"/mcp?"+q,
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Authorization", "Bearer "+aliceToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(body, &msg) != nil || msg.JSONRPC != "2.0" || msg.Error.Code != -32602 ||
			!strings.Contains(msg.Error.Message, "discovery") || !strings.Contains(msg.Error.Message, `"search"`) {
			t.Errorf("?%s: %d %s, want 400 and a JSON-RPC error naming the modes", q, resp.StatusCode, body)
		}
	}
	// An anonymous request is refused for its token first.
	resp, err := http.Post(list.base+"/mcp?discovery=all", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("anonymous ?discovery=all: %d, want 401", resp.StatusCode)
	}
}
