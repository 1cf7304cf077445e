package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/apps"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAppSourceValidator pins the loopback rule of App CSP sources
// (RATIONALE.md, "App CSP: no loopback sources").
func TestAppSourceValidator(t *testing.T) {
	stdio := config.Server{Name: "s", Transport: config.TransportStdio, Command: "x"}
	remote := config.Server{Name: "r", Transport: config.TransportStreamableHTTP, URL: "https://mcp.example.com/mcp"}
	local := config.Server{Name: "l", Transport: config.TransportStreamableHTTP, URL: "http://127.0.0.1:9000/mcp"}
	localName := config.Server{Name: "n", Transport: config.TransportSSE, URL: "http://localhost:9000/sse"}
	local6 := config.Server{Name: "6", Transport: config.TransportStreamableHTTP, URL: "http://[::1]:9000/mcp"}
	h := &Host{}
	h.cur.Store(&generation{cfg: &config.Config{Listen: "127.0.0.1:7777"}})

	tests := []struct {
		server config.Server
		source string
		ok     bool
	}{
		{stdio, "https://api.example.com", true},
		{stdio, "http://localhost:3000", false},
		{stdio, "http://127.0.0.1:7777", false},
		{stdio, "http://2130706433:7777", false},
		{stdio, "ws://app.localhost", false},
		{remote, "http://localhost:3000", false},
		{remote, "wss://rt.example.com:8443", true},
		{remote, "https://a.com; script-src *", false},
		{local, "http://localhost:9000", true},
		{local, "http://127.0.0.1:3000", true},
		{local, "http://127.0.0.1:7777", false}, // the daemon itself
		{local, "http://localhost:7777", false},
		{local, "https://api.example.com", true},
		{localName, "ws://localhost:9000", true},
		{local6, "http://localhost:9000", true},
	}
	for _, tt := range tests {
		t.Run(tt.server.Name+" "+tt.source, func(t *testing.T) {
			err := h.appSourceValidator(tt.server)(tt.source)
			if (err == nil) != tt.ok {
				t.Errorf("source %q for server %s: %v, want ok=%v", tt.source, tt.server.Name, err, tt.ok)
			}
		})
	}
}

// TestAppCSPDropsDaemonBoundPort: with listen = "127.0.0.1:0" the daemon's
// port is the one the listener got, and an App of a loopback remote server
// still may not name it: the CSP source on that port is dropped (for the
// reason errDaemonSource), while loopback sources on other ports, the
// server's own among them, are kept.
func TestAppCSPDropsDaemonBoundPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	daemon := "http://127.0.0.1:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	daemonName := "http://localhost:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)

	// The App's server, on loopback, names the daemon, itself and another
	// local port in its CSP.
	const otherSrc = "http://127.0.0.1:1"
	appLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	self := "http://" + appLn.Addr().String()
	s := mcp.NewServer(&mcp.Implementation{Name: "appserver", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "show", InputSchema: json.RawMessage(`{"type":"object"}`),
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://app"}}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "text"}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "ui://app", Name: "app", MIMEType: apps.MIMEType},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
				URI: "ui://app", MIMEType: apps.MIMEType, Text: "<!doctype html><p>app</p>",
				Meta: mcp.Meta{"ui": map[string]any{"csp": map[string]any{
					"connectDomains": []any{daemon, self, otherSrc, daemonName},
				}}},
			}}}, nil
		})
	appSrv := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)}
	go appSrv.Serve(appLn)
	t.Cleanup(func() { appSrv.Close() })

	st, err := store.Open(t.Context(), t.TempDir()+"/m.db", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv := config.Server{
		Name: "app", Transport: config.TransportStreamableHTTP, URL: self + "/mcp",
		VersionNegotiation: config.NegotiationLegacy, DiscoveryTimeout: 20 * time.Second, CallTimeout: time.Minute,
		Enabled: true, Apps: config.AppsAuto, AppResourceMaxBytes: apps.DefaultMaxBytes, AppResourceTimeout: 5 * time.Second,
	}
	h, err := New(&config.Config{Listen: "127.0.0.1:0", Servers: []config.Server{srv}}, Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	h.Start(ctx)
	serveCtx, stopServe := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- h.Serve(serveCtx, ln, http.NotFoundHandler()) }()
	t.Cleanup(func() {
		stopServe()
		<-served
		if err := h.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if err := h.WaitSettled(ctx); err != nil {
		t.Fatal(err)
	}
	// The listener is open, so this request waits until Serve accepts it.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, daemon+"/", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("the daemon did not answer: %v", err)
	}
	resp.Body.Close()

	if err := h.appSourceValidator(srv)(daemon); !errors.Is(err, errDaemonSource) {
		t.Errorf("validator(%s) = %v, want errDaemonSource", daemon, err)
	}
	p := Principal{Name: "owner"}
	sess, err := h.CreateSession(ctx, p, "apps")
	if err != nil {
		t.Fatal(err)
	}
	e, err := h.Call(ctx, SessionCall{Principal: p, SessionID: sess.ID, Server: "app", Tool: "show", Arguments: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	var d apps.Display
	if err := json.Unmarshal(e.Display, &d); err != nil || d.CSP == nil || d.HTML == "" {
		t.Fatalf("display %s (%v)", e.Display, err)
	}
	if diff := cmp.Diff([]string{self, otherSrc}, d.CSP.ConnectDomains); diff != "" {
		t.Errorf("connectDomains (-want +got):\n%s", diff)
	}
	wantDropped := []string{fmt.Sprintf("connectDomains: %q", daemon), fmt.Sprintf("connectDomains: %q", daemonName)}
	if diff := cmp.Diff(wantDropped, d.Dropped); diff != "" {
		t.Errorf("dropped (-want +got):\n%s", diff)
	}
}
