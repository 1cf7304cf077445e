package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/httpapi"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/fixture"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fuzzRoutes are the routes whose JSON bodies FuzzRequestBodies sends; the
// session routes use one session of alice's. %s is the session id.
var fuzzRoutes = []struct {
	name, path string
	emptyOK    bool // an empty body is a valid request
}{
	{"create session", "/api/v1/sessions", true},
	{"call", "/api/v1/sessions/%s/calls", false},
	{"app message", "/api/v1/sessions/%s/app-messages", false},
	{"app link", "/api/v1/sessions/%s/app-links", false},
	{"approval answer", "/api/v1/approvals/a_0123456789abcdef", false},
	{"elicitation answer", "/api/v1/elicitations/e_0123456789abcdef", false},
}

// FuzzRequestBodies sends arbitrary bodies, as application/json with
// alice's token, to the POST routes that decode JSON (createSession, call,
// appMessage, appLink, answer) of a real handler over a real host: the
// in-process fixture server over Streamable HTTP (call_timeout 200ms, so a
// fuzzed slow call ends), a deny and an ask policy, and a store in a
// temporary directory. The route is
// route % len(fuzzRoutes). Properties: no panic (the recovery middleware
// would answer 500); never a 500 or any 5xx but 503 not_ready; every answer
// is JSON, and every error answer is {"error":{"code","message"}} with a
// valid UTF-8 message; a body that is not one JSON value (after an empty
// one where that is allowed) is a 400 or 413. TestRequestContentType and
// TestCalls cover the same routes with known bodies. Seeds:
// testdata/fuzz/FuzzRequestBodies.
func FuzzRequestBodies(f *testing.F) {
	f.Add(uint8(0), []byte(`{"title":"fuzz"}`))
	f.Add(uint8(1), []byte(`{"server":"fx","tool":"echo","arguments":{"text":"hi"},"callId":"c-1"}`))
	f.Add(uint8(1), []byte(`{"server":"fx","tool":"add","arguments":{"a":1000,"b":1}}`))
	f.Add(uint8(1), []byte(`{"server":"fx","tool":"fail","arguments":{}}`))
	f.Add(uint8(2), []byte(`{"appEntryId":"e_0123456789abcdef","role":"user","content":[{"type":"text","text":"hi"}]}`))
	f.Add(uint8(3), []byte(`{"appEntryId":"e_0123456789abcdef","url":"https://example.com/"}`))
	f.Add(uint8(4), []byte(`{"decision":"approve"}`))
	f.Add(uint8(5), []byte(`{"action":"accept","content":{"name":"x"}}`))

	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fixture.NewServer() }, nil))
	upstream := httptest.NewServer(mux)
	f.Cleanup(func() {
		upstream.CloseClientConnections()
		upstream.Close()
	})
	st, err := store.Open(context.Background(), filepath.Join(f.TempDir(), "mcphost.db"), nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	fx := config.Server{
		Name: "fx", Transport: config.TransportStreamableHTTP, URL: upstream.URL + "/mcp",
		VersionNegotiation: config.NegotiationLegacy, DiscoveryTimeout: 20 * time.Second,
		CallTimeout: 200 * time.Millisecond, Enabled: true,
	}
	// Policies are on, so fuzzed calls also take the 403 denied_by_policy
	// path (add with a big a) and the ask path (fail), whose approval
	// nobody gives: it expires quickly, and the call is denied.
	cfg, diags := config.Parse([]byte(`
policy "no-big-adds" {
  phase   = "call"
  effect  = "deny"
  when    = "tool.name == 'add' && has(args.a) && type(args.a) == double && args.a > 100.0"
  message = "too big"
}
policy "ask-before-failing" {
  phase   = "call"
  effect  = "ask"
  when    = "tool.name == 'fail'"
  message = "Fail?"
}
`), "fuzz.hcl", config.Options{})
	if diags.HasErrors() {
		f.Fatal(diags)
	}
	cfg.Servers = []config.Server{fx}
	cfg.Principals = []config.Principal{{Name: "alice", Token: aliceToken}}
	h, err := host.New(cfg, host.Options{Store: st, ApprovalTimeout: 20 * time.Millisecond})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { h.Close() }) // before the store and the upstream (cleanups run last first)
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	h.Start(context.Background())
	if err := h.WaitSettled(ctx); err != nil {
		f.Fatal(err)
	}
	if s, _ := h.Server("fx"); s.State != host.StateReady {
		f.Fatalf("fx: %s (%s)", s.State, s.LastError)
	}
	sess, err := h.CreateSession(ctx, host.Principal{Name: "alice"}, "fuzz")
	if err != nil {
		f.Fatal(err)
	}
	// The WebShell's credential: it may make every one of these requests,
	// the App ones included (a token gets 403 for those before its body is
	// read).
	cred, _, err := h.WebShellSignIn(aliceToken)
	if err != nil {
		f.Fatal(err)
	}
	const hostName = "mcphost.test"
	handler := httpapi.New(h, httpapi.Options{Hosts: []string{hostName}, Version: "fuzz"})

	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		r := fuzzRoutes[int(route)%len(fuzzRoutes)]
		path := strings.Replace(r.path, "%s", sess.ID, 1)
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		req.Host = hostName
		req.Header.Set("Authorization", "Bearer "+cred)
		req.Header.Set("Content-Type", "application/json")
		rctx, cancel := context.WithTimeout(req.Context(), waitBound)
		defer cancel()
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req.WithContext(rctx))
		if rctx.Err() != nil {
			t.Fatalf("%s: no answer within %s", r.name, waitBound)
		}

		status, answer := rec.Code, rec.Body.Bytes()
		if status >= 500 && status != http.StatusServiceUnavailable {
			t.Fatalf("%s: status %d for body %q: %s", r.name, status, body, answer)
		}
		if !json.Valid(answer) {
			t.Fatalf("%s: status %d with a body that is not JSON: %q", r.name, status, answer)
		}
		trimmed := bytes.TrimSpace(body)
		if status < 300 {
			if !json.Valid(trimmed) && !(r.emptyOK && len(trimmed) == 0) {
				t.Fatalf("%s: status %d for a body that is not JSON: %q", r.name, status, body)
			}
			return
		}
		var e struct {
			Error *struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(answer, &e); err != nil || e.Error == nil || e.Error.Code == "" || e.Error.Message == "" || !utf8.ValidString(e.Error.Message) {
			t.Fatalf("%s: status %d with error body %s", r.name, status, answer)
		}
		if len(trimmed) > 0 && !json.Valid(trimmed) && status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge {
			t.Fatalf("%s: status %d for a body that is not JSON, want 400: %q", r.name, status, body)
		}
	})
}
