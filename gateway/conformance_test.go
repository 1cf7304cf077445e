package gateway_test

// Tests for what the official conformance suite's server scenarios found
// (testdata/conformance/server.sh): each fix of the gateway, against the
// suite's own upstream, go-sdk's conformance everything-server, over stdio
// (dual-era; version_negotiation = "auto" finds it modern).

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// everythingPkg is go-sdk's conformance server, a module dependency.
const everythingPkg = "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"

// newEverythingEnv is newEnv with one server, "everything": go-sdk's
// conformance server over stdio, negotiated (modern).
func newEverythingEnv(t *testing.T) *env {
	t.Helper()
	srv := stdioServer("everything", testbin.Build(t, everythingPkg))
	srv.VersionNegotiation = config.NegotiationAuto
	e := newEnvServers(t, []config.Server{srv})
	if st := e.h.Servers(); len(st) != 1 || st[0].State != host.StateReady || st[0].ProtocolVersion != modernVersion {
		t.Fatalf("everything-server: %+v, want ready at %s", st, modernVersion)
	}
	return e
}

const everything = "/mcp/servers/everything"

// modernClient is the options of a 2026-07-28 client that answers input
// requests itself (MultiRoundTrip off), declaring caps.
func modernClient(caps *mcp.ClientCapabilities) *mcp.ClientOptions {
	return &mcp.ClientOptions{Capabilities: caps, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}}
}

func elicitCaps() *mcp.ClientCapabilities {
	return &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}
}

func wantJSONRPCError(t *testing.T, err error, code int64, text string) {
	t.Helper()
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != code || !strings.Contains(je.Message, text) {
		t.Fatalf("error %v, want JSON-RPC %d containing %q", err, code, text)
	}
}

// TestInputRequiredRelayed: a server's input_required answer reaches a
// 2026-07-28 client as it came (resultType, inputRequests) but with the
// requestState sealed by the gateway; the client's retry with its answers
// and that token completes the call; a token altered, or replayed by
// another principal or for another tool, is refused with -32602 before the
// server sees it.
func TestInputRequiredRelayed(t *testing.T) {
	e := newEverythingEnv(t)
	alice := e.connect(t, everything, aliceToken, modernVersion, modernClient(elicitCaps()))
	params := &mcp.CallToolParams{Name: "test_input_required_result_request_state", Arguments: map[string]any{}}
	res, err := alice.CallTool(t.Context(), params)
	if err != nil || !res.NeedsInput() {
		t.Fatalf("first round = %+v, %v; want input_required", res, err)
	}
	if _, ok := res.InputRequests["confirm"].(*mcp.ElicitParams); !ok {
		t.Fatalf("inputRequests = %v, want the server's elicitation \"confirm\"", res.InputRequests)
	}
	sealed := res.RequestState
	if !strings.HasPrefix(sealed, "mh1.") || strings.Contains(sealed, "request_state") {
		t.Fatalf("requestState %q: want the gateway's sealed token, not the server's", sealed)
	}
	answer := mcp.InputResponseMap{"confirm": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}}
	retry := func(cs *mcp.ClientSession, name, state string) (*mcp.CallToolResult, error) {
		return cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}, InputResponses: answer, RequestState: state})
	}

	res, err = retry(alice, params.Name, sealed)
	if err != nil || res.NeedsInput() || !strings.Contains(textOf(res), "state-ok") {
		t.Fatalf("retry = %+v, %v; want the server's complete answer", res, err)
	}

	_, err = retry(alice, params.Name, sealed+"x")
	wantJSONRPCError(t, err, jsonrpc.CodeInvalidParams, "invalid requestState")
	_, err = retry(alice, "test_input_required_result_tampered_state", sealed)
	wantJSONRPCError(t, err, jsonrpc.CodeInvalidParams, "invalid requestState")
	bob := e.connect(t, everything, bobToken, modernVersion, modernClient(elicitCaps()))
	_, err = retry(bob, params.Name, sealed)
	wantJSONRPCError(t, err, jsonrpc.CodeInvalidParams, "invalid requestState")

	// A multi-round call: each round's state is sealed anew.
	mr := &mcp.CallToolParams{Name: "test_input_required_result_multi_round", Arguments: map[string]any{}}
	r1, err := alice.CallTool(t.Context(), mr)
	if err != nil || !r1.NeedsInput() {
		t.Fatalf("multi-round r1 = %+v, %v", r1, err)
	}
	r2, err := alice.CallTool(t.Context(), &mcp.CallToolParams{Name: mr.Name, Arguments: map[string]any{}, RequestState: r1.RequestState,
		InputResponses: mcp.InputResponseMap{"step1": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}}})
	if err != nil || !r2.NeedsInput() || r2.RequestState == r1.RequestState {
		t.Fatalf("multi-round r2 = %+v, %v", r2, err)
	}
	r3, err := alice.CallTool(t.Context(), &mcp.CallToolParams{Name: mr.Name, Arguments: map[string]any{}, RequestState: r2.RequestState,
		InputResponses: mcp.InputResponseMap{"step2": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"color": "teal"}}}})
	if err != nil || r3.NeedsInput() || textOf(r3) != "Multi-round complete: Ada likes teal" {
		t.Fatalf("multi-round r3 = %+v, %v", r3, err)
	}
}

// TestInputRequiredCapabilities: the server sees the capabilities the
// gateway's client declared (not mcphost's own), so it asks only for what
// that client can answer.
func TestInputRequiredCapabilities(t *testing.T) {
	e := newEverythingEnv(t)
	for _, tc := range []struct {
		name string
		caps *mcp.ClientCapabilities
		want []string // the input requests, or nil for a complete answer
	}{
		{"none", &mcp.ClientCapabilities{}, nil},
		{"sampling", &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}}, []string{"greeting"}},
		{"elicitation", elicitCaps(), []string{"user_name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := e.connect(t, everything, aliceToken, modernVersion, modernClient(tc.caps))
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "test_input_required_result_capabilities", Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for id := range res.InputRequests {
				got = append(got, id)
			}
			if res.NeedsInput() != (tc.want != nil) || strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("answer %+v (input requests %v), want input requests %v", res, got, tc.want)
			}
		})
	}
}

// TestInputRequiredPrompt: prompts/get relays input_required and the retry
// the same way.
func TestInputRequiredPrompt(t *testing.T) {
	e := newEverythingEnv(t)
	cs := e.connect(t, everything, aliceToken, modernVersion, modernClient(elicitCaps()))
	const name = "test_input_required_result_prompt"
	res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: name})
	if err != nil || !res.NeedsInput() || res.InputRequests["user_context"] == nil {
		t.Fatalf("prompts/get = %+v, %v; want input_required for user_context", res, err)
	}
	res, err = cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: name, RequestState: res.RequestState,
		InputResponses: mcp.InputResponseMap{"user_context": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"context": "tea"}}}})
	if err != nil || res.NeedsInput() || len(res.Messages) != 1 {
		t.Fatalf("retry = %+v, %v", res, err)
	}
	if tc, ok := res.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Context: tea" {
		t.Fatalf("message = %+v", res.Messages[0].Content)
	}
}

// TestInputRequiredLegacyClient: a legacy client knows no input_required,
// so the gateway asks it on its session (elicitation here) and retries the
// server until the answer is complete.
func TestInputRequiredLegacyClient(t *testing.T) {
	e := newEverythingEnv(t)
	var asked []string
	var mu sync.Mutex
	cs := e.connect(t, everything, aliceToken, legacyVersion, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, req.Params.Message)
			mu.Unlock()
			content := map[string]any{"name": "Ada"}
			if strings.HasPrefix(req.Params.Message, "Step 2") {
				content = map[string]any{"color": "teal"}
			}
			return &mcp.ElicitResult{Action: "accept", Content: content}, nil
		},
	})
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "test_input_required_result_multi_round", Arguments: map[string]any{}})
	if err != nil || res.IsError || textOf(res) != "Multi-round complete: Ada likes teal" {
		t.Fatalf("call = %+v, %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 {
		t.Fatalf("the client was asked %q, want the server's two rounds", asked)
	}

	// A legacy client that declared no elicitation cannot answer: an error
	// that says so, not a result it cannot read.
	plain := e.connect(t, everything, aliceToken, legacyVersion, nil)
	_, err = plain.CallTool(t.Context(), &mcp.CallToolParams{Name: "test_input_required_result_elicitation", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "did not give") {
		t.Fatalf("call without elicitation: %v, want an error naming the input the client did not give", err)
	}
}

// TestInputRequiredOtherDoors: where the host answers input_required
// rounds itself (the CLI's one-shot door here, with nobody to ask), a round
// that asks for sampling fails with an error saying that mcphost has no
// model.
func TestInputRequiredOtherDoors(t *testing.T) {
	e := newEverythingEnv(t)
	_, err := e.h.CallTool(t.Context(), host.CallToolRequest{Server: "everything", Tool: "test_input_required_result_multiple_inputs"})
	if err == nil || !strings.Contains(err.Error(), "mcphost has no model") {
		t.Fatalf("error %v, want one saying that mcphost has no model to sample", err)
	}
}

// TestUpstreamErrorVerbatim: a server's JSON-RPC error reaches the client
// with its code and data (here -32021 with the capabilities it needs).
func TestUpstreamErrorVerbatim(t *testing.T) {
	e := newEverythingEnv(t)
	cs := e.connect(t, everything, aliceToken, modernVersion, modernClient(&mcp.ClientCapabilities{}))
	_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "test_missing_capability", Arguments: map[string]any{}})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != mcp.CodeMissingRequiredClientCapabilities || !strings.Contains(string(je.Data), `"sampling"`) {
		t.Fatalf("error %v, want -32021 with data.requiredCapabilities.sampling", err)
	}
}

// TestListChangedRelayed: a server's tools/list_changed reaches the
// gateway's clients even when the list came out the same (the server
// re-registered a tool as it was).
func TestListChangedRelayed(t *testing.T) {
	e := newEverythingEnv(t)
	changed := make(chan struct{}, 8)
	cs := e.connect(t, everything, aliceToken, legacyVersion, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	for round := range 3 { // the first adds a tool, the next ones change nothing
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "test_trigger_tool_change", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("round %d: %+v, %v", round, res, err)
		}
		select {
		case <-changed:
		case <-time.After(waitBound):
			t.Fatalf("round %d: no tools/list_changed", round)
		}
	}
}

// TestResourceSubscriptions: resources/subscribe (legacy) and a listen
// stream (2026-07-28) subscribe through the gateway to the server, whose
// resources/updated reach the client; unsubscribing works.
func TestResourceSubscriptions(t *testing.T) {
	e := newEverythingEnv(t)
	const uri = "test://watched-resource" // the server updates it every 3 s
	for _, version := range []string{legacyVersion, modernVersion} {
		t.Run(version, func(t *testing.T) {
			updated := make(chan string, 8)
			cs := e.connect(t, everything, aliceToken, version, &mcp.ClientOptions{
				ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
					select {
					case updated <- req.Params.URI:
					default:
					}
				},
			})
			if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}); err != nil {
				t.Fatalf("subscribe: %v", err)
			}
			select {
			case got := <-updated:
				if got != uri {
					t.Fatalf("updated %q, want %q", got, uri)
				}
			case <-time.After(waitBound):
				t.Fatal("no resources/updated")
			}
			if err := cs.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: uri}); err != nil {
				t.Fatalf("unsubscribe: %v", err)
			}
		})
	}
}

// TestLegacyStreamsResumable: a legacy session's SSE events carry ids
// (the gateway keeps them for Last-Event-ID), starting with a priming
// event.
func TestLegacyStreamsResumable(t *testing.T) {
	e := newEverythingEnv(t)
	cs := e.connect(t, everything, aliceToken, legacyVersion, nil)
	toolNames(t, cs) // the session is initialized
	body := `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"test_simple_text","arguments":{}}}`
	req, _ := http.NewRequest("POST", e.base+everything, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Mcp-Protocol-Version", legacyVersion)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); !strings.HasPrefix(got, "event: prime\nid: ") || !strings.Contains(got, "event: message\nid: ") || !strings.Contains(got, "simple text response") {
		t.Fatalf("tools/call stream:\n%s\nwant a priming event and the answer, each with an id", got)
	}
}
