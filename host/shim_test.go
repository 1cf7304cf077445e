package host_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/fixture"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type postHeaders struct {
	method, protocol, name string
}

// TestStandardHeadersOnEveryPost checks that every POST to a Streamable HTTP
// server carries MCP-Protocol-Version and Mcp-Method, and tools/call carries
// Mcp-Name, on a legacy session (where go-sdk leaves them out and the host's
// header shim fills them in) and on a modern one (where go-sdk sets them).
func TestStandardHeadersOnEveryPost(t *testing.T) {
	for _, tc := range []struct {
		name      string
		stateless bool
		mode      string
		era       string
	}{
		{"legacy session", false, config.NegotiationLegacy, host.EraLegacy},
		{"modern session", true, config.NegotiationAuto, host.EraModern},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var posts []postHeaders
			handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fixture.NewServer() },
				&mcp.StreamableHTTPOptions{Stateless: tc.stateless})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					mu.Lock()
					posts = append(posts, postHeaders{
						method:   r.Header.Get("Mcp-Method"),
						protocol: r.Header.Get("MCP-Protocol-Version"),
						name:     r.Header.Get("Mcp-Name"),
					})
					mu.Unlock()
				}
				handler.ServeHTTP(w, r)
			}))
			t.Cleanup(srv.Close)

			s := remoteServer("fx", config.TransportStreamableHTTP, srv.URL)
			s.VersionNegotiation = tc.mode
			s.HTTPProbeTimeout = config.HTTPProbeTimeoutFallback
			h := startHost(t, host.Options{}, s)
			st := mustStatus(t, h, "fx")
			if st.State != host.StateReady || st.Era != tc.era {
				t.Fatalf("state %s era %s (%s), want ready %s", st.State, st.Era, st.LastError, tc.era)
			}
			if got := textOf(call(t, h, "fx", "echo", `{"text":"headers"}`)); got != "headers" {
				t.Fatalf("echo = %q", got)
			}

			mu.Lock()
			defer mu.Unlock()
			sawCall, sawInit := false, false
			for i, p := range posts {
				if p.method == "" || p.protocol == "" {
					t.Errorf("POST %d (%s) lacks a standard header: Mcp-Method %q, MCP-Protocol-Version %q", i, p.method, p.method, p.protocol)
				}
				switch p.method {
				case "tools/call":
					sawCall = true
					if p.name != "echo" {
						t.Errorf("tools/call carried Mcp-Name %q, want echo", p.name)
					}
				case "initialize":
					sawInit = true
				}
			}
			if !sawCall {
				t.Error("no tools/call POST was seen")
			}
			if tc.era == host.EraLegacy && !sawInit {
				t.Error("a legacy session without an initialize POST")
			}
			if tc.era == host.EraModern && sawInit {
				t.Error("a modern session sent initialize")
			}
		})
	}
}

// TestHeaderMismatchRelistsAndRetries: a server that answers the first
// tools/call with -32020 (HeaderMismatch) gets a fresh tools/list and one
// retry, which succeeds.
func TestHeaderMismatchRelistsAndRetries(t *testing.T) {
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fixture.NewServer() }, nil)
	var mu sync.Mutex
	calls, lists, rejected := 0, 0, false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		switch r.Header.Get("Mcp-Method") {
		case "tools/list":
			lists++
		case "tools/call":
			calls++
			if !rejected {
				rejected = true
				mu.Unlock()
				var msg struct {
					ID json.RawMessage `json:"id"`
				}
				body, _ := io.ReadAll(r.Body)
				json.Unmarshal(body, &msg)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32020,"message":"header mismatch: Mcp-Param-Region"}}`, msg.ID)
				return
			}
		}
		mu.Unlock()
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	h := startHost(t, host.Options{}, remoteServer("fx", config.TransportStreamableHTTP, srv.URL))
	mu.Lock()
	listsBefore := lists
	mu.Unlock()
	if got := textOf(call(t, h, "fx", "echo", `{"text":"retried"}`)); got != "retried" {
		t.Fatalf("echo = %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 2 {
		t.Errorf("%d tools/call requests, want 2 (the rejected one and the retry)", calls)
	}
	if lists != listsBefore+1 {
		t.Errorf("tools/list requests went from %d to %d, want one more", listsBefore, lists)
	}
}
