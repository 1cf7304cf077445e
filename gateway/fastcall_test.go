package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/gateway"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/mcphost/mcphost/policies"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawCall sends one tools/call as a client of version would (on session
// sid for a legacy one), with a progress token when progress is set, and
// returns the answer.
func (e *env) rawCall(t *testing.T, version, sid, tool, args string, progress bool) answer {
	t.Helper()
	meta := map[string]any{}
	if progress {
		meta["progressToken"] = "p1"
	}
	if version >= modernVersion {
		meta[mcp.MetaKeyProtocolVersion] = version
		meta[mcp.MetaKeyClientInfo] = map[string]any{"name": "fastcall-test", "version": "1"}
		meta[mcp.MetaKeyClientCapabilities] = map[string]any{}
	}
	m, _ := json.Marshal(meta)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":%s,"name":%q,"arguments":%s}}`, m, tool, args)
	h := http.Header{}
	h.Set("Authorization", "Bearer "+aliceToken)
	h.Set("Mcp-Protocol-Version", version)
	if sid != "" {
		h.Set("Mcp-Session-Id", sid)
	}
	if version >= modernVersion {
		h.Set("Mcp-Method", "tools/call")
		h.Set("Mcp-Name", tool)
	}
	return e.do(t, http.MethodPost, "/mcp", h, body)
}

// message returns the JSON-RPC answer to request 7 in a, whether it came
// as application/json or as an event stream, decoded generically, and the
// answer's media type.
func (a answer) message(t *testing.T) (map[string]any, string) {
	t.Helper()
	mt, _, _ := mime.ParseMediaType(a.header.Get("Content-Type"))
	var lines [][]byte
	if mt == "text/event-stream" {
		for line := range bytes.SplitSeq(a.body, []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				lines = append(lines, d)
			}
		}
	} else {
		lines = [][]byte{a.body}
	}
	for _, l := range lines {
		var m map[string]any
		if json.Unmarshal(l, &m) == nil && m["id"] == float64(7) {
			return m, mt
		}
	}
	t.Fatalf("no answer to request 7 in %d %s %q", a.status, mt, a.body)
	return nil, ""
}

// TestFastCallAnswersAsGoSDK: a tools/call the gateway answers itself (no
// progress token: nothing but the answer goes back) comes back as JSON,
// with the status, result or error that go-sdk's path gives the same call
// with a progress token (as an event stream), in both eras: a result, a
// policy's refusal, a server's tool error, arguments the schema refuses,
// a tool the caller may not see and one that does not exist. The gateway's
// own answer names its length.
func TestFastCallAnswersAsGoSDK(t *testing.T) {
	e := newEnv(t, []string{"fx"},
		policies.Rule{Name: "no-shouting", Phase: policies.PhaseCall, Effect: policies.EffectDeny, When: `has(args.text) && args.text == "SHOUT"`, Message: "no shouting"},
		policies.Rule{Name: "no-cwd", Phase: policies.PhaseList, Effect: policies.EffectDeny, When: `tool.name == "cwd"`},
	)
	cases := []struct{ name, tool, args string }{
		{"result", "fx__echo", `{"text":"hello"}`},
		{"refused", "fx__echo", `{"text":"SHOUT"}`},
		{"structured", "fx__add", `{"a":1,"b":2}`},
		{"tool error", "fx__fail", `{}`},
		{"bad arguments", "fx__echo", `{"text":42}`},
		{"hidden", "fx__cwd", `{}`},
		{"unknown", "fx__nope", `{}`},
	}
	for _, version := range []string{legacyVersion, modernVersion} {
		sid := ""
		if version == legacyVersion {
			sid = e.mustOpen(t, aliceToken)
		}
		for _, tc := range cases {
			t.Run(version+"/"+tc.name, func(t *testing.T) {
				slow := e.rawCall(t, version, sid, tc.tool, tc.args, true)
				fast := e.rawCall(t, version, sid, tc.tool, tc.args, false)
				sm, smt := slow.message(t)
				fm, fastType := fast.message(t)
				if smt != "text/event-stream" && slow.status == http.StatusOK {
					t.Errorf("with a progress token: %s, want go-sdk's event stream", smt)
				}
				if fastType != "application/json" && tc.name != "unknown" { // go-sdk answers a name it does not have
					t.Errorf("without one: %s, want the gateway's own JSON answer", fastType)
				}
				if tc.name != "unknown" && fast.header.Get("Content-Length") != strconv.Itoa(len(fast.body)) {
					t.Errorf("Content-Length %q for a %d-byte answer, want its length: the answer goes out whole, not as a chunked body", fast.header.Get("Content-Length"), len(fast.body))
				}
				if fast.status != slow.status {
					t.Errorf("status %d, go-sdk's %d", fast.status, slow.status)
				}
				if diff := cmp.Diff(sm, fm); diff != "" {
					t.Errorf("answer differs from go-sdk's (-go-sdk +gateway):\n%s", diff)
				}
			})
		}
	}
}

// TestFastCallStaysOffTheStream: what may send more than the answer on a
// call's response goes through go-sdk, as an event stream: a legacy client
// that set a log level or declared elicitation, a 2026-07-28 call that
// asks for log messages; and a request go-sdk refuses is refused as
// before (a body over the limit, a batch, headers that do not match).
func TestFastCallStaysOffTheStream(t *testing.T) {
	e := newEnv(t, []string{"fx"})
	echo := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fx__echo","arguments":{"text":"x"}}}`
	t.Run("log level set", func(t *testing.T) {
		sid := e.mustOpen(t, aliceToken)
		if a := e.send(t, http.MethodPost, "/mcp", aliceToken, sid, `{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"debug"}}`); a.status != http.StatusOK {
			t.Fatalf("setLevel: %d %s", a.status, a.body)
		}
		if _, mt := e.send(t, http.MethodPost, "/mcp", aliceToken, sid, echo).message(t); mt != "text/event-stream" {
			t.Errorf("call after setLevel: %s, want go-sdk's stream", mt)
		}
	})
	t.Run("elicitation declared", func(t *testing.T) {
		init := strings.Replace(initializeBody, `"capabilities":{}`, `"capabilities":{"elicitation":{}}`, 1)
		a := e.send(t, http.MethodPost, "/mcp", aliceToken, "", init)
		sid := a.header.Get("Mcp-Session-Id")
		if a.status != http.StatusOK || sid == "" {
			t.Fatalf("initialize: %d %s", a.status, a.body)
		}
		e.send(t, http.MethodPost, "/mcp", aliceToken, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		if _, mt := e.send(t, http.MethodPost, "/mcp", aliceToken, sid, echo).message(t); mt != "text/event-stream" {
			t.Errorf("call of a client that can be asked: %s, want go-sdk's stream", mt)
		}
	})
	t.Run("modern log level", func(t *testing.T) {
		body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"` + mcp.MetaKeyProtocolVersion + `":"` + modernVersion + `","` + mcp.MetaKeyLogLevel + `":"debug","` + mcp.MetaKeyClientCapabilities + `":{},"` + mcp.MetaKeyClientInfo + `":{"name":"t","version":"1"}},"name":"fx__echo","arguments":{"text":"x"}}}`
		a := e.sendModern(t, "fx__echo", body)
		if _, mt := a.message(t); mt != "text/event-stream" {
			t.Errorf("2026-07-28 call with a log level: %s, want go-sdk's stream", mt)
		}
	})
	t.Run("refused as before", func(t *testing.T) {
		sid := e.mustOpen(t, aliceToken)
		huge := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fx__echo","arguments":{"text":"` + strings.Repeat("x", 5<<20) + `"}}}`
		if a := e.send(t, http.MethodPost, "/mcp", aliceToken, sid, huge); a.status != http.StatusRequestEntityTooLarge {
			t.Errorf("a body over the limit: %d %s, want 413", a.status, clipBody(a.body))
		}
		if a := e.send(t, http.MethodPost, "/mcp", aliceToken, sid, "["+echo+"]"); a.status != http.StatusBadRequest {
			t.Errorf("a batch: %d %s, want go-sdk's 400", a.status, clipBody(a.body))
		}
		if a := e.send(t, http.MethodPost, "/mcp", aliceToken, sid, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":`); a.status != http.StatusBadRequest {
			t.Errorf("a broken body: %d %s, want go-sdk's 400", a.status, clipBody(a.body))
		}
		// DNS rebinding: a loopback listener reached under another name.
		h := http.Header{}
		h.Set("Host", "attacker.example")
		h.Set("Authorization", "Bearer "+aliceToken)
		h.Set("Mcp-Session-Id", sid)
		if a := e.do(t, http.MethodPost, "/mcp", h, echo); a.status != http.StatusForbidden {
			t.Errorf("a call naming another host: %d %s, want go-sdk's 403", a.status, clipBody(a.body))
		}
		a := e.send(t, http.MethodPost, "/mcp", aliceToken, sid, echo)
		if _, mt := a.message(t); mt != "application/json" {
			t.Fatalf("the same call under its own name: %s, want the gateway's answer", mt)
		}
		body := strings.Replace(echo, `"params":{`, `"params":{"_meta":{"`+mcp.MetaKeyProtocolVersion+`":"`+modernVersion+`"},`, 1)
		if a := e.sendModern(t, "fx__other", body); a.status != http.StatusBadRequest {
			t.Errorf("Mcp-Name naming another tool: %d %s, want go-sdk's 400", a.status, clipBody(a.body))
		}
	})
}

// sendModern posts a 2026-07-28 tools/call body with the headers that
// name it (Mcp-Name: name).
func (e *env) sendModern(t *testing.T, name, body string) answer {
	t.Helper()
	h := http.Header{}
	h.Set("Authorization", "Bearer "+aliceToken)
	h.Set("Mcp-Protocol-Version", modernVersion)
	h.Set("Mcp-Method", "tools/call")
	h.Set("Mcp-Name", name)
	return e.do(t, http.MethodPost, "/mcp", h, body)
}

func clipBody(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// TestSessionIdleWithFastCalls: a legacy session whose client only calls
// tools (answered by the gateway itself, never seen by go-sdk) stays open
// past session_timeout as long as it calls; idle for that long, it ends.
func TestSessionIdleWithFastCalls(t *testing.T) {
	bin := testbin.Build(t, wellbehavedPkg)
	e := newEnvConfig(t, &config.Config{Servers: []config.Server{stdioServer("fx", bin)},
		Gateway: config.Gateway{SessionTimeout: 2 * time.Second}})
	sid := e.mustOpen(t, aliceToken)
	for i := range 10 { // 3 s of calls, half as long again as the timeout, 300 ms apart
		if _, mt := e.rawCall(t, legacyVersion, sid, "fx__echo", `{"text":"x"}`, false).message(t); mt != "application/json" {
			t.Fatalf("call %d: %s, want the gateway's own answer", i, mt)
		}
		time.Sleep(300 * time.Millisecond)
	}
	deadline := time.Now().Add(waitBound)
	for {
		time.Sleep(200 * time.Millisecond)
		a := e.rawCall(t, legacyVersion, sid, "fx__echo", `{"text":"x"}`, true) // go-sdk's path: 404 once it is gone
		if a.status == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session is still open after %s idle", waitBound)
		}
		time.Sleep(3 * time.Second) // idle now, longer than the timeout
	}
}

// TestFastCallCancelled: a client that gives up a call the gateway
// answers itself (no progress token) cancels it upstream, in both eras,
// and the entry says cancelled: the call ends with its HTTP request, as
// go-sdk's client and the TypeScript SDK's end it.
func TestFastCallCancelled(t *testing.T) {
	e := newEnv(t, []string{"fx"})
	for _, version := range []string{legacyVersion, modernVersion} {
		t.Run(version, func(t *testing.T) {
			cs := e.connect(t, "/mcp", aliceToken, version, nil)
			before := cancelledSlow(t, e)
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fx__slow", Arguments: map[string]any{"ms": 60000}}); err == nil {
				t.Fatal("a cancelled call succeeded")
			}
			deadline := time.Now().Add(waitBound)
			for cancelledSlow(t, e) == before {
				if time.Now().After(deadline) {
					t.Fatalf("no new cancelled entry of slow (last: %q)", lastStatus(t, e, "slow"))
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// cancelledSlow counts alice's cancelled entries of the slow tool.
func cancelledSlow(t *testing.T, e *env) int {
	t.Helper()
	p := host.Principal{Name: "alice"}
	sessions, err := e.h.Sessions(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range sessions {
		entries, _, err := e.h.Entries(t.Context(), p, s.ID, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, en := range entries {
			if en.Tool == "slow" && en.Status == store.StatusCancelled {
				n++
			}
		}
	}
	return n
}

// TestFastCallKeepAlive: the write deadline of an answer the gateway
// writes itself does not outlive it: a kept-alive connection's next
// answer, later than the stall, is whole.
func TestFastCallKeepAlive(t *testing.T) {
	defer gateway.SetWriteStall(300 * time.Millisecond)()
	e := newEnv(t, []string{"fx"})
	sid := e.mustOpen(t, aliceToken)
	for i := range 3 {
		if i > 0 {
			time.Sleep(600 * time.Millisecond) // twice the stall, on the same connection
		}
		a := e.rawCall(t, legacyVersion, sid, "fx__echo", `{"text":"x"}`, false)
		if m, mt := a.message(t); mt != "application/json" || m["result"] == nil {
			t.Fatalf("call %d: %s %v, want the gateway's own answer", i, mt, m)
		}
	}
}
