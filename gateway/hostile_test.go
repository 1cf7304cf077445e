package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/gateway"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/mcphost/mcphost/policies"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const revenuePkg = "github.com/mcphost/mcphost/testdata/servers/revenue"

// TestUpstreamDiesMidCall: the server is killed while a gateway call runs
// on it; the client gets an error at once (within the test's bound), not a
// hang, and the entry says what happened.
func TestUpstreamDiesMidCall(t *testing.T) {
	for _, version := range []string{legacyVersion, modernVersion} {
		t.Run(version, func(t *testing.T) {
			e := newEnv(t, []string{"fx"})
			got := make(chan struct{}, 1)
			params := &mcp.CallToolParams{Name: "fx__slow", Arguments: map[string]any{"ms": 600000}}
			params.SetProgressToken("p")
			errc := make(chan error, 1)
			cs2 := e.connect(t, "/mcp", aliceToken, version, &mcp.ClientOptions{
				ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
					select {
					case got <- struct{}{}:
					default:
					}
				},
			})
			go func() {
				_, err := cs2.CallTool(t.Context(), params)
				errc <- err
			}()
			select {
			case <-got: // the call is running upstream
			case <-time.After(waitBound):
				t.Fatal("no progress")
			}
			pid := e.h.Servers()[0].PID
			if pid <= 0 {
				t.Fatal("no pid")
			}
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-errc:
				if err == nil {
					t.Fatal("the call succeeded after its server died")
				}
				if !strings.Contains(err.Error(), "connection") && !strings.Contains(err.Error(), "session") {
					t.Errorf("error %q does not say the connection ended", err)
				}
			case <-time.After(waitBound):
				t.Fatal("the call hung after its server died")
			}
		})
	}
}

// TestRequestBodyLimit: a body over 4 MiB is refused before it is read
// whole.
func TestRequestBodyLimit(t *testing.T) {
	e := newEnv(t, []string{"fx"})
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fx__echo","arguments":{"text":"` + strings.Repeat("a", 5<<20) + `"}}}`
	for _, version := range []string{legacyVersion, modernVersion} {
		req, _ := http.NewRequest("POST", e.base+"/mcp", strings.NewReader(big))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+aliceToken)
		req.Header.Set("Mcp-Protocol-Version", version)
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "fx__echo")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge && resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: a 5 MiB body got %d, want 413 (or 400)", version, resp.StatusCode)
		}
	}
}

// TestReloadDuringBurst: a reload that adds a server while gateway calls
// run fails none of them, and legacy sessions hear list_changed and list
// the new server's tools.
func TestReloadDuringBurst(t *testing.T) {
	e := newEnv(t, []string{"fx"})
	changed := make(chan struct{}, 16)
	var notified atomic.Int64
	watcher := e.connect(t, "/mcp", aliceToken, legacyVersion, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			notified.Add(1)
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []error
	calls := 0
	for _, version := range []string{legacyVersion, modernVersion, legacyVersion, modernVersion} {
		cs := e.connect(t, "/mcp", aliceToken, version, nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				res, err := cs.CallTool(context.WithoutCancel(ctx), &mcp.CallToolParams{Name: "fx__echo", Arguments: map[string]any{"text": "burst"}})
				mu.Lock()
				calls++
				if err == nil && (res.IsError || textOf(res) != "burst") {
					err = errors.New("bad result: " + textOf(res))
				}
				if err != nil {
					failures = append(failures, err)
				}
				mu.Unlock()
			}
		}()
	}
	for started := false; !started; { // the reload must land inside the burst
		mu.Lock()
		started = calls > 0
		mu.Unlock()
		time.Sleep(time.Millisecond) // polling for the first call, bounded by the test's timeout
	}
	cfg := *e.cfg
	cfg.Servers = append(slices.Clone(cfg.Servers), stdioServer("extra", testbin.Build(t, wellbehavedPkg)))
	if _, err := e.h.Reload(t.Context(), &cfg); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(waitBound)
	for !slices.Contains(toolNames(t, watcher), "extra__echo") {
		if time.Now().After(deadline) {
			t.Fatal("extra__echo never listed after the reload")
		}
		select {
		case <-changed:
		case <-time.After(100 * time.Millisecond):
		}
	}
	stop()
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d of %d calls failed during the reload, first: %v", len(failures), calls, failures[0])
	}
	if calls == 0 {
		t.Fatal("no calls ran")
	}
	// The catalog may be listed before go-sdk's debounced notification
	// goes out; it must still come.
	for notified.Load() == 0 {
		select {
		case <-changed:
		case <-time.After(waitBound):
			t.Fatal("the legacy session heard no tools/list_changed")
		}
	}
}

// TestAskThroughClient: an `ask` rule is put to a legacy client that can
// elicit (approve runs the call, decline refuses it with a readable tool
// error); a client that cannot elicit waits for the WebShell's answer.
func TestAskThroughClient(t *testing.T) {
	e := newEnv(t, []string{"fx"},
		policies.Rule{Name: "ask-echo", Phase: policies.PhaseCall, Effect: policies.EffectAsk, When: `tool.name == "echo"`, Message: "echo needs a yes"})
	answer := make(chan bool, 1)
	cs := e.connect(t, "/mcp", aliceToken, legacyVersion, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if !strings.Contains(r.Params.Message, "echo needs a yes") {
				return nil, errors.New("unexpected message: " + r.Params.Message)
			}
			if <-answer {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
			}
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	answer <- true
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "fx__echo", Arguments: map[string]any{"text": "yes"}})
	if err != nil || res.IsError || textOf(res) != "yes" {
		t.Fatalf("approved call = %+v, %v", res, err)
	}
	answer <- false
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "fx__echo", Arguments: map[string]any{"text": "no"}})
	if err != nil || !res.IsError || !strings.Contains(textOf(res), "not approved") {
		t.Fatalf("declined call = %+v, %v; want a tool error saying it was not approved", res, err)
	}

	// A 2026-07-28 client that can elicit is asked in an input_required
	// round of the gateway's own (go-sdk's client answers it and retries).
	for _, approve := range []bool{true, false} {
		asked := 0
		mc := e.connect(t, "/mcp", aliceToken, modernVersion, &mcp.ClientOptions{
			ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked++
				if !strings.Contains(r.Params.Message, "echo needs a yes") {
					return nil, errors.New("unexpected message: " + r.Params.Message)
				}
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": approve}}, nil
			},
		})
		res, err := mc.CallTool(t.Context(), &mcp.CallToolParams{Name: "fx__echo", Arguments: map[string]any{"text": "round"}})
		if err != nil {
			t.Fatalf("modern ask (approve %v): %v", approve, err)
		}
		if asked != 1 {
			t.Fatalf("the modern client was asked %d times, want once", asked)
		}
		if approve && (res.IsError || textOf(res) != "round") {
			t.Fatalf("approved modern call = %+v", res)
		}
		if !approve && (!res.IsError || !strings.Contains(textOf(res), "not approved")) {
			t.Fatalf("declined modern call = %+v, want a tool error saying it was not approved", res)
		}
	}

	// A 2026-07-28 client that cannot elicit: the WebShell answers.
	modern := e.connect(t, "/mcp", aliceToken, modernVersion, nil)
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := modern.CallTool(t.Context(), &mcp.CallToolParams{Name: "fx__echo", Arguments: map[string]any{"text": "webshell"}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	p := host.Principal{Name: "alice"}
	deadline := time.Now().Add(waitBound)
	var pending []host.Approval
	for len(pending) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no approval pending for the WebShell")
		}
		time.Sleep(10 * time.Millisecond)
		pending = e.h.PendingApprovals(p)
	}
	if pending[0].Origin != host.OriginGateway || pending[0].Client != "gateway-test" {
		t.Errorf("approval origin %q, client %q, want gateway and the client's name", pending[0].Origin, pending[0].Client)
	}
	if err := e.h.Answer(p, pending[0].ID, true); err != nil {
		t.Fatal(err)
	}
	if res := <-done; res == nil || res.IsError || textOf(res) != "webshell" {
		t.Fatalf("WebShell-approved call = %+v", res)
	}
}

// TestAppsThroughGateway: an App tool keeps its ui:// link, rewritten on
// /mcp and kept on the passthrough endpoint; reading it returns the HTML
// the WebShell would render; an `app` rule that refuses the App refuses the
// read with its reason.
func TestAppsThroughGateway(t *testing.T) {
	bin := testbin.Build(t, revenuePkg)
	rev := stdioServer("revenue", bin)
	e := newEnvServers(t, []config.Server{rev},
		policies.Rule{Name: "no-apps-for-bob", Phase: policies.PhaseApp, Effect: policies.EffectDeny, When: `principal.name == "bob"`, Message: "bob gets text"})
	for _, tc := range []struct{ path, uri string }{
		{"/mcp", "ui://revenue+revenue-dashboard"},
		{"/mcp/servers/revenue", "ui://revenue-dashboard"},
	} {
		cs := e.connect(t, tc.path, aliceToken, modernVersion, nil)
		if caps := cs.InitializeResult().Capabilities; caps == nil || caps.Extensions["io.modelcontextprotocol/ui"] == nil {
			t.Fatalf("%s does not advertise the Apps extension: %+v", tc.path, caps)
		}
		tools, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var link string
		for _, tl := range tools.Tools {
			if ui, ok := tl.Meta["ui"].(map[string]any); ok {
				link, _ = ui["resourceUri"].(string)
			}
		}
		if link != tc.uri {
			t.Fatalf("%s: the App tool links %q, want %q", tc.path, link, tc.uri)
		}
		rr, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: link})
		if err != nil {
			t.Fatalf("%s: reading the App: %v", tc.path, err)
		}
		if c := rr.Contents[0]; c.MIMEType != "text/html;profile=mcp-app" || !strings.Contains(c.Text, "<html") || c.URI != tc.uri {
			t.Fatalf("%s: App resource %s %q (%d bytes)", tc.path, c.URI, c.MIMEType, len(c.Text))
		}
	}
	bob := e.connect(t, "/mcp", bobToken, modernVersion, nil)
	if _, err := bob.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "ui://revenue+revenue-dashboard"}); err == nil || !strings.Contains(err.Error(), "bob gets text") {
		t.Fatalf("bob's App read: %v, want the app rule's refusal", err)
	}
}

// TestHeaderParams: an upstream tool whose schema asks for an argument in
// an Mcp-Param-* header (x-mcp-header, SEP-2243) is listed with the
// annotation, a 2026-07-28 call that leaves the header out is refused, and
// the stdio bridge, whose client has no headers, adds it from the listing.
func TestHeaderParams(t *testing.T) {
	up := mcp.NewServer(&mcp.Implementation{Name: "headers", Version: "1"}, nil)
	up.AddTool(&mcp.Tool{Name: "lookup", InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"]}`)},
		func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "looked up " + string(r.Params.Arguments)}}}, nil
		})
	e := newEnvServers(t, []config.Server{serveUpstream(t, "hd", up)})
	cs := e.connect(t, "/mcp", aliceToken, modernVersion, nil)
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if raw, _ := json.Marshal(tools); !strings.Contains(string(raw), `"x-mcp-header":"Region"`) {
		t.Fatalf("tools/list lost the annotation: %s", raw)
	}
	// go-sdk's own client sends the header.
	if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "hd__lookup", Arguments: map[string]any{"region": "EMEA"}}); err != nil || res.IsError {
		t.Fatalf("go-sdk call = %+v, %v", res, err)
	}
	// A raw 2026-07-28 call without it is refused.
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hd__lookup","arguments":{"region":"EMEA"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest("POST", e.base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	req.Header.Set("Mcp-Protocol-Version", modernVersion)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "hd__lookup")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(got), "looked up") {
		t.Fatalf("a call without its Mcp-Param-Region header was served: %s", got)
	}

	// Through the bridge: a stdio client lists, then calls; the bridge adds
	// the header (a value that needs base64 too).
	clientIn, bridgeOut := io.Pipe()
	bridgeIn, clientOut := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- gateway.Bridge(context.Background(), bridgeIn, bridgeOut, gateway.BridgeOptions{URL: e.base + "/mcp", Token: aliceToken})
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "stdio", Version: "1"}, nil)
	bridged, err := client.Connect(t.Context(), &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, &mcp.ClientSessionOptions{ProtocolVersion: modernVersion})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bridged.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	for _, region := range []string{"APAC", "Zürich "} {
		res, err := bridged.CallTool(t.Context(), &mcp.CallToolParams{Name: "hd__lookup", Arguments: map[string]any{"region": region}})
		if err != nil || res.IsError || !strings.Contains(textOf(res), "looked up") {
			t.Fatalf("bridged call (%q) = %+v, %v", region, res, err)
		}
	}
	bridged.Close()
	clientOut.Close()
	if err := <-done; err != nil {
		t.Fatalf("bridge: %v", err)
	}
}

// serveUpstream serves up over Streamable HTTP on loopback (go-sdk's
// stateless mode, both eras) and returns a server block for it, named
// name, that the host negotiates.
func serveUpstream(t *testing.T, name string, up *mcp.Server) config.Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, &mcp.StreamableHTTPOptions{Stateless: true})}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return config.Server{
		Name: name, Transport: config.TransportStreamableHTTP, URL: "http://" + ln.Addr().String(),
		VersionNegotiation: config.NegotiationAuto, HTTPProbeTimeout: config.HTTPProbeTimeoutFallback,
		DiscoveryTimeout: 20 * time.Second, CallTimeout: time.Minute, Enabled: true, Apps: config.AppsAuto,
	}
}

// TestForgedMeta: the reserved io.modelcontextprotocol/* _meta keys a
// client sends are not what the server sees; the gateway's own upstream
// request carries mcphost's.
func TestForgedMeta(t *testing.T) {
	up := mcp.NewServer(&mcp.Implementation{Name: "meta", Version: "1"}, nil)
	up.AddTool(&mcp.Tool{Name: "seen", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			raw, _ := json.Marshal(r.Params.Meta)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(raw)}}}, nil
		})
	e := newEnvServers(t, []config.Server{serveUpstream(t, "mt", up)})
	for _, version := range []string{legacyVersion, modernVersion} {
		cs := e.connect(t, "/mcp", aliceToken, version, nil)
		params := &mcp.CallToolParams{Name: "mt__seen", Arguments: map[string]any{}, Meta: mcp.Meta{
			"io.modelcontextprotocol/related-task": map[string]any{"taskId": "forged"},
			"io.modelcontextprotocol/clientInfo":   map[string]any{"name": "forged", "version": "0"},
			"io.modelcontextprotocol/logLevel":     "forged",
		}}
		res, err := cs.CallTool(t.Context(), params)
		if err != nil || res.IsError {
			t.Fatalf("%s: call = %+v, %v", version, res, err)
		}
		seen := textOf(res)
		if strings.Contains(seen, "forged") {
			t.Fatalf("%s: the server saw the client's reserved _meta: %s", version, seen)
		}
		if version == modernVersion && !strings.Contains(seen, `"name":"mcphost"`) {
			t.Fatalf("%s: the server's request does not carry mcphost's clientInfo: %s", version, seen)
		}
	}
}

// TestToolsListFlood: one client lists as fast as it can from four
// goroutines while another calls; every list is the same and complete, and
// the other client's calls are served throughout.
func TestToolsListFlood(t *testing.T) {
	e := newEnv(t, []string{"fx"},
		policies.Rule{Name: "no-fail", Phase: policies.PhaseList, Effect: policies.EffectDeny, When: `tool.name == "fail"`})
	flooder := e.connect(t, "/mcp", bobToken, modernVersion, nil)
	want := strings.Join(toolNames(t, flooder), ",")
	if want == "" || strings.Contains(want, "fx__fail") {
		t.Fatalf("tools: %s", want)
	}
	caller := e.connect(t, "/mcp", aliceToken, legacyVersion, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				res, err := flooder.ListTools(context.Background(), nil)
				if err != nil {
					errs <- err
					return
				}
				var names []string
				for _, tl := range res.Tools {
					names = append(names, tl.Name)
				}
				if got := strings.Join(names, ","); got != want {
					errs <- fmt.Errorf("a list changed under the flood: %s", got)
					return
				}
			}
		}()
	}
	for i := range 20 {
		res, err := caller.CallTool(t.Context(), &mcp.CallToolParams{Name: "fx__echo", Arguments: map[string]any{"text": fmt.Sprint(i)}})
		if err != nil || textOf(res) != fmt.Sprint(i) {
			t.Fatalf("call %d during the flood = %+v, %v", i, res, err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
