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
	"github.com/mcphost/mcphost/host/internal/generation"
	"github.com/mcphost/mcphost/host/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAppSourceValidator pins the network rule of App CSP sources
// (RATIONALE.md, "App CSP: no loopback, private or link-local sources"): a
// source on loopback, a private or a link-local network is kept only for a
// server on the same one, judged by the address in the server's URL.
func TestAppSourceValidator(t *testing.T) {
	stdio := config.Server{Name: "s", Transport: config.TransportStdio, Command: "x"}
	remote := config.Server{Name: "r", Transport: config.TransportStreamableHTTP, URL: "https://mcp.example.com/mcp"}
	local := config.Server{Name: "l", Transport: config.TransportStreamableHTTP, URL: "http://127.0.0.1:9000/mcp"}
	localName := config.Server{Name: "n", Transport: config.TransportSSE, URL: "http://localhost:9000/sse"}
	local6 := config.Server{Name: "6", Transport: config.TransportStreamableHTTP, URL: "http://[::1]:9000/mcp"}
	ten := config.Server{Name: "10", Transport: config.TransportStreamableHTTP, URL: "http://10.1.2.3:8080/mcp"}
	lan := config.Server{Name: "lan", Transport: config.TransportSSE, URL: "http://192.168.1.20/sse"}
	ula := config.Server{Name: "ula", Transport: config.TransportStreamableHTTP, URL: "http://[fd12::5]:8080/mcp"}
	mapped := config.Server{Name: "mapped", Transport: config.TransportStreamableHTTP, URL: "http://[::ffff:10.9.9.9]/mcp"}
	linkLocal := config.Server{Name: "ll", Transport: config.TransportStreamableHTTP, URL: "http://169.254.7.7/mcp"}
	named := config.Server{Name: "named", Transport: config.TransportStreamableHTTP, URL: "http://mcp.internal:8080/mcp"}
	h := &Host{}
	h.gens.cur.Store(generation.New(&config.Config{Listen: "127.0.0.1:7777"}))

	tests := []struct {
		server config.Server
		source string
		ok     bool
	}{
		// Private and link-local sources: dropped unless the server's
		// address is in the same block.
		{stdio, "http://10.0.0.1:8080", false},
		{stdio, "http://192.168.1.1", false},
		{stdio, "http://169.254.169.254", false},
		{stdio, "https://172.20.0.1", false},
		{stdio, "http://100.64.1.1", false},
		{stdio, "http://10.1", false}, // 10.0.0.1
		{stdio, "https://*.10.0.0.1", false},
		{remote, "http://10.0.0.1", false},
		{remote, "http://169.254.1.1", false},
		{local, "http://10.0.0.1", false},
		{local, "http://192.168.1.1", false},
		{ten, "http://10.0.0.1:8080", true},
		{ten, "ws://10.200.0.1", true},
		{ten, "http://0xa000001", true},
		{ten, "http://192.168.1.1", false},
		{ten, "http://172.16.0.1", false},
		{ten, "http://127.0.0.1:3000", false}, // on 10/8, not on loopback
		{ten, "http://169.254.169.254", false},
		{ten, "https://api.example.com", true},
		{lan, "http://192.168.1.1", true},
		{lan, "http://192.168.200.1:8443", true},
		{lan, "http://10.0.0.1", false},
		{ula, "http://10.0.0.1", false},
		{mapped, "http://10.0.0.1", true},
		{linkLocal, "http://169.254.1.1", true},
		{linkLocal, "http://169.254.169.254", false}, // metadata: never
		{linkLocal, "http://10.0.0.1", false},
		{named, "http://10.0.0.1", false}, // the server's name is not resolved
		{named, "https://api.example.com", true},

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

// TestAppCSPDropsPrivateSources resolves an App whose CSP names private,
// link-local, metadata and loopback addresses, through apps.Resolve with
// the host's validator: each source off the server's network is dropped,
// and its Dropped entry names the source and the reason.
func TestAppCSPDropsPrivateSources(t *testing.T) {
	h := &Host{}
	h.gens.cur.Store(generation.New(&config.Config{Listen: "127.0.0.1:7777"}))
	sources := []any{
		"https://api.example.com",
		"http://10.0.0.1:8080",
		"http://192.168.1.1",
		"http://169.254.169.254",
		"wss://[fd00::1]:443",
		"http://127.0.0.1:3000",
		"http://999.1.1.1",
	}
	reader := fakeReader{&mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
		URI: "ui://app", MIMEType: apps.MIMEType, Text: "<!doctype html><p>app</p>",
		Meta: mcp.Meta{"ui": map[string]any{"csp": map[string]any{"connectDomains": sources, "frameDomains": []any{"http://169.254.169.254"}}}},
	}}}}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "text"}}}
	resolve := func(s config.Server) *apps.Display {
		d := apps.Resolve(t.Context(), reader, s.Name, apps.Link{ResourceURI: "ui://app"}, nil, res, apps.Options{
			ServerAdvertises: true, ValidSource: h.appSourceValidator(s),
		})
		if d == nil || d.HTML == "" || d.CSP == nil {
			t.Fatalf("no App for %s: %+v", s.Name, d)
		}
		return d
	}
	notOn := "and the App's server is not on that network"
	tests := []struct {
		server      config.Server
		wantConnect []string
		wantDropped []string
	}{
		{
			config.Server{Name: "stdio", Transport: config.TransportStdio, Command: "x"},
			[]string{"https://api.example.com"},
			[]string{
				`connectDomains: "http://10.0.0.1:8080": names an address on the private network 10.0.0.0/8, ` + notOn,
				`connectDomains: "http://192.168.1.1": names an address on the private network 192.168.0.0/16, ` + notOn,
				`connectDomains: "http://169.254.169.254": names the cloud metadata address 169.254.169.254, which no App may reach`,
				`connectDomains: "wss://[fd00::1]:443": byte 6: a bracketed IP literal is not allowed`,
				`connectDomains: "http://127.0.0.1:3000": names this machine (loopback), and the App's server is not on loopback`,
				`connectDomains: "http://999.1.1.1": names a numeric host that is not an IPv4 address, which no browser can reach`,
				`frameDomains: "http://169.254.169.254": names the cloud metadata address 169.254.169.254, which no App may reach`,
			},
		},
		{
			config.Server{Name: "lan", Transport: config.TransportStreamableHTTP, URL: "http://10.20.30.40:8080/mcp"},
			[]string{"https://api.example.com", "http://10.0.0.1:8080"},
			[]string{
				`connectDomains: "http://192.168.1.1": names an address on the private network 192.168.0.0/16, ` + notOn,
				`connectDomains: "http://169.254.169.254": names the cloud metadata address 169.254.169.254, which no App may reach`,
				`connectDomains: "wss://[fd00::1]:443": byte 6: a bracketed IP literal is not allowed`,
				`connectDomains: "http://127.0.0.1:3000": names this machine (loopback), and the App's server is not on loopback`,
				`connectDomains: "http://999.1.1.1": names a numeric host that is not an IPv4 address, which no browser can reach`,
				`frameDomains: "http://169.254.169.254": names the cloud metadata address 169.254.169.254, which no App may reach`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.server.Name, func(t *testing.T) {
			d := resolve(tt.server)
			if diff := cmp.Diff(tt.wantConnect, d.CSP.ConnectDomains); diff != "" {
				t.Errorf("connectDomains (-want +got):\n%s", diff)
			}
			if len(d.CSP.FrameDomains) != 0 {
				t.Errorf("frameDomains = %q, want none", d.CSP.FrameDomains)
			}
			if diff := cmp.Diff(tt.wantDropped, d.Dropped); diff != "" {
				t.Errorf("dropped (-want +got):\n%s", diff)
			}
		})
	}
}

// fakeReader answers every resources/read with res.
type fakeReader struct{ res *mcp.ReadResourceResult }

func (r fakeReader) ReadResource(context.Context, string) (*mcp.ReadResourceResult, error) {
	return r.res, nil
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
	wantDropped := []string{fmt.Sprintf("connectDomains: %q: %v", daemon, errDaemonSource), fmt.Sprintf("connectDomains: %q: %v", daemonName, errDaemonSource)}
	if diff := cmp.Diff(wantDropped, d.Dropped); diff != "" {
		t.Errorf("dropped (-want +got):\n%s", diff)
	}
}
