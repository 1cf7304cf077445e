//go:build unix

package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/gateway"
	"github.com/mcphost/mcphost/host/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxFlood bounds the flood tool's notifications (64 MiB of 4 KiB ones,
// far more than the kernel's buffers and a stream's queue hold): it ends
// a flood that the test's condition never stops.
const maxFlood = 16384

// tickWait bounds how long the tick tool waits for its client to hear its
// progress (and log message): it keeps a broken test from hanging.
const tickWait = 20 * time.Second

// floodServer is an upstream whose tools a stalling client and its victims
// call on one shared session:
//
//	flood {bytes}         progress notifications of bytes bytes each until
//	                      enough says so (at most maxFlood), then holds
//	                      until released (or cancelled)
//	tick {id, log}        a log message "tick ID" (when log), three progress
//	                      notifications, then waits until the client has
//	                      heard them (marked by the test) and answers
//	                      "ticked", or after tickWait "not heard: …"
//
// and one resource, test://r, that clients may subscribe to.
type floodServer struct {
	up      *mcp.Server
	release chan struct{}
	// enough reports whether the flood has done its part (the test sets
	// it once the gateway is up).
	enough atomic.Pointer[func() bool]

	mu    sync.Mutex
	heard map[string]chan struct{}
}

func newFloodServer() *floodServer {
	f := &floodServer{release: make(chan struct{}), heard: map[string]chan struct{}{}}
	f.up = mcp.NewServer(&mcp.Implementation{Name: "flood", Version: "1"}, &mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	f.up.AddTool(&mcp.Tool{Name: "flood", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Bytes int }
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		msg := strings.Repeat("x", in.Bytes)
		enough := *f.enough.Load()
		tok := req.Params.GetProgressToken()
		for i := 0; tok != nil && i < maxFlood && (i%50 != 0 || !enough()); i++ {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Message: msg})
		}
		select {
		case <-f.release:
		case <-ctx.Done():
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "flooded"}}}, nil
	})
	f.up.AddTool(&mcp.Tool{Name: "tick", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct {
			ID  string
			Log bool
		}
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		wait := []string{"progress " + in.ID}
		if in.Log {
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "tick " + in.ID})
			wait = append(wait, "log "+in.ID)
		}
		tok := req.Params.GetProgressToken()
		for i := 1; i <= 3 && tok != nil; i++ {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3})
		}
		timeout := time.NewTimer(tickWait)
		defer timeout.Stop()
		for _, key := range wait {
			select {
			case <-f.heardCh(key):
			case <-timeout.C:
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "not heard: " + key}}}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ticked"}}}, nil
	})
	f.up.AddResource(&mcp.Resource{URI: "test://r", Name: "r", MIMEType: "text/plain"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://r", MIMEType: "text/plain", Text: "r"}}}, nil
	})
	return f
}

func (f *floodServer) heardCh(key string) chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch, ok := f.heard[key]
	if !ok {
		ch = make(chan struct{})
		f.heard[key] = ch
	}
	return ch
}

// hear marks key heard by a client.
func (f *floodServer) hear(key string) {
	ch := f.heardCh(key)
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// victim is a go-sdk client of another principal that must hear a shared
// server while a client of the same server stalls.
type victim struct {
	cs       *mcp.ClientSession
	mu       sync.Mutex
	progress map[any]int
	changed  chan struct{}
	updated  chan string
}

func newVictim(t *testing.T, e *env, f *floodServer, version string) *victim {
	v := &victim{progress: map[any]int{}, changed: make(chan struct{}, 1), updated: make(chan string, 1)}
	v.cs = e.connect(t, "/mcp", aliceToken, version, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			v.mu.Lock()
			v.progress[r.Params.ProgressToken]++
			n := v.progress[r.Params.ProgressToken]
			v.mu.Unlock()
			if id, ok := r.Params.ProgressToken.(string); ok && n == 3 {
				f.hear("progress " + id)
			}
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			if s, ok := r.Params.Data.(string); ok && strings.HasPrefix(s, "tick ") {
				f.hear("log " + strings.TrimPrefix(s, "tick "))
			}
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case v.changed <- struct{}{}:
			default:
			}
		},
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			select {
			case v.updated <- r.Params.URI:
			default:
			}
		},
	})
	return v
}

// tick calls fl__tick with progress token id and wants its result, which
// the server gives only once the victim heard the call's progress (and
// its log message, with log).
func (v *victim) tick(t *testing.T, id string, log bool) {
	t.Helper()
	params := &mcp.CallToolParams{Name: "fl__tick", Arguments: map[string]any{"id": id, "log": log}}
	params.SetProgressToken(id)
	ctx, cancel := context.WithTimeout(t.Context(), waitBound)
	defer cancel()
	res, err := v.cs.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("%s: tools/call: %v", id, err)
	}
	if got := textOf(res); got != "ticked" {
		v.mu.Lock()
		n := v.progress[id]
		v.mu.Unlock()
		t.Fatalf("%s: the server says %q (the client heard %d of 3 progress notifications)", id, got, n)
	}
}

// TestStalledClient: a gateway client that calls a tool with a progress
// token and never reads its stream (a raw connection with a tiny receive
// buffer) holds up nothing the shared server sends to other clients: a
// 2025-11-25 and a 2026-07-28 client of another principal get their
// progress, log message and result, and hear list_changed and
// resources/updated, while the stalled stream's queue stays bounded (its
// notifications are dropped and counted). Both eras of stalling client;
// with session_mode = "per_client" too, which gives a 2026-07-28 client
// no session of its own.
func TestStalledClient(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mode    string
		stalled string // the stalling client's era
	}{
		{"shared/legacy-stalls", config.SessionShared, legacyVersion},
		{"per_client/modern-stalls", config.SessionPerClient, modernVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFloodServer()
			blk := serveLegacyUpstream(t, "fl", f.up, 8)
			blk.SessionMode = tc.mode
			e := newEnvServers(t, []config.Server{blk})
			t.Cleanup(func() { close(f.release) }) // before the env's cleanup

			legacy := newVictim(t, e, f, legacyVersion)
			modern := newVictim(t, e, f, modernVersion)
			if err := legacy.cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
				t.Fatal(err)
			}
			if err := legacy.cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "fl+test://r"}); err != nil {
				t.Fatal(err)
			}
			// Before the stall, so a failure below is the stall's.
			legacy.tick(t, "legacy-before", true)
			modern.tick(t, "modern-before", false)

			// bob floods his own stream with progress notifications of 4 KiB
			// until the gateway drops some: the kernel's buffers and the
			// stream's queue are full.
			dropped := above(e.gw, "mcphost_gateway_notifications_dropped_total", 0)
			f.enough.Store(&dropped)
			flood := map[string]any{"name": "fl__flood", "arguments": map[string]any{"bytes": 4096},
				"_meta": map[string]any{"progressToken": "flood"}}
			stallCall(t, e, bobToken, tc.stalled, flood)
			waitFor(t, "notifications dropped", func() bool { return metric(t, e.gw, "mcphost_gateway_notifications_dropped_total") > 0 })

			legacy.tick(t, "legacy-during", true)
			modern.tick(t, "modern-during", false)
			// A server's list_changed and resources/updated reach the
			// legacy session (a 2026-07-28 client hears them only on a
			// listen stream).
			f.up.AddTool(&mcp.Tool{Name: "late", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
			select {
			case <-legacy.changed:
			case <-time.After(waitBound):
				t.Fatal("the legacy client did not hear tools/list_changed")
			}
			if err := f.up.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: "test://r"}); err != nil {
				t.Fatal(err)
			}
			select {
			case uri := <-legacy.updated:
				if uri != "fl+test://r" {
					t.Fatalf("resources/updated for %q, want fl+test://r", uri)
				}
			case <-time.After(waitBound):
				t.Fatal("the legacy client did not hear resources/updated")
			}
		})
	}
}

// TestStalledStreamEnded: a stream that takes nothing for the stall bound
// is ended: the connection is closed (the client reads what the kernel
// held, then EOF), it is counted, and the daemon serves on.
func TestStalledStreamEnded(t *testing.T) {
	defer gateway.SetWriteStall(500 * time.Millisecond)()
	f := newFloodServer()
	e := newEnvServers(t, []config.Server{serveLegacyUpstream(t, "fl", f.up, 8)})
	t.Cleanup(func() { close(f.release) })
	for _, version := range []string{legacyVersion, modernVersion} {
		before := metric(t, e.gw, "mcphost_gateway_streams_stalled_total")
		ended := above(e.gw, "mcphost_gateway_streams_stalled_total", before)
		f.enough.Store(&ended)
		flood := map[string]any{"name": "fl__flood", "arguments": map[string]any{"bytes": 4096},
			"_meta": map[string]any{"progressToken": "flood"}}
		conn := stallCall(t, e, bobToken, version, flood)
		waitFor(t, version+": a stream ended for stalling", func() bool { return metric(t, e.gw, "mcphost_gateway_streams_stalled_total") > before })
		_ = conn.SetReadDeadline(time.Now().Add(waitBound))
		if _, err := io.Copy(io.Discard, conn); err != nil && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("%s: reading the stalled stream: %v, want the connection closed", version, err)
		}
		v := newVictim(t, e, f, version)
		v.tick(t, "after-"+version, false)
	}
}

// stallCall sends a tools/call with params on a connection whose receive
// buffer is tiny, as token, in the given era (a 2025-11-25 session is
// initialized first, on another connection), and never reads the answer.
func stallCall(t *testing.T, e *env, token, version string, params map[string]any) net.Conn {
	t.Helper()
	addr := strings.TrimPrefix(e.base, "http://")
	headers := map[string]string{"Mcp-Protocol-Version": version}
	if version == legacyVersion {
		headers["Mcp-Session-Id"] = initLegacy(t, e, token)
	} else {
		meta := params["_meta"].(map[string]any)
		meta["io.modelcontextprotocol/protocolVersion"] = version
		meta["io.modelcontextprotocol/clientInfo"] = map[string]any{"name": "stall", "version": "1"}
		meta["io.modelcontextprotocol/clientCapabilities"] = map[string]any{}
		headers["Mcp-Method"] = "tools/call"
		headers["Mcp-Name"] = params["name"].(string)
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	if err != nil {
		t.Fatal(err)
	}
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 2048)
		}); err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.DialContext(t.Context(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	var req strings.Builder
	fmt.Fprintf(&req, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n", addr, token, len(body))
	for k, v := range headers {
		fmt.Fprintf(&req, "%s: %s\r\n", k, v)
	}
	req.WriteString("\r\n")
	req.Write(body)
	if _, err := io.WriteString(conn, req.String()); err != nil {
		t.Fatal(err)
	}
	return conn
}

// initLegacy opens a 2025-11-25 session as token and returns its id.
func initLegacy(t *testing.T, e *env, token string) string {
	t.Helper()
	post := func(sid, body string) *http.Response {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", e.base+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", legacyVersion)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, bufio.NewReader(resp.Body)); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode/100 != 2 {
			t.Fatalf("%s: %s", body, resp.Status)
		}
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+legacyVersion+`","capabilities":{},"clientInfo":{"name":"stall","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("initialize: no Mcp-Session-Id")
	}
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return sid
}

// metric returns the value of a gateway metric without labels.
func metric(t *testing.T, gw *gateway.Gateway, name string) uint64 {
	t.Helper()
	n, err := metricValue(gw, name)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func metricValue(gw *gateway.Gateway, name string) (uint64, error) {
	var b strings.Builder
	if err := gw.WriteMetrics(&b); err != nil {
		return 0, err
	}
	for line := range strings.Lines(b.String()) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+" "); ok {
			return strconv.ParseUint(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("no metric %s in:\n%s", name, b.String())
}

// above returns whether a gateway metric is above n, for a goroutine
// other than the test's (an error counts as above: the test's own
// reading of the metric reports it).
func above(gw *gateway.Gateway, name string, n uint64) func() bool {
	return func() bool {
		v, err := metricValue(gw, name)
		return err != nil || v > n
	}
}
