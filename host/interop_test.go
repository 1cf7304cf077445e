package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/mcphost/mcphost/negotiate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The interoperability tests run MCP servers other people wrote, from npm,
// pinned in testdata/interop/package-lock.json.

// everythingPkg is the official TypeScript example server, version pinned in
// testdata/interop/package.json.
const everythingPkg = "@modelcontextprotocol/server-everything"

// everythingServer returns the path of server-everything's dist/index.js
// (see testbin.Interop).
func everythingServer(t *testing.T) string {
	t.Helper()
	return filepath.Join(testbin.Interop(t, "..", everythingPkg), "node_modules", everythingPkg, "dist", "index.js")
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// lineWatcher is a process's stderr: it keeps a bounded copy of the output
// and closes found once a line containing marker has been written.
type lineWatcher struct {
	marker string
	found  chan struct{}

	mu   sync.Mutex
	buf  bytes.Buffer
	seen bool
}

func (w *lineWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf.Len() < 64<<10 {
		w.buf.Write(p)
	}
	if !w.seen && strings.Contains(w.buf.String(), w.marker) {
		w.seen = true
		close(w.found)
	}
	return len(p), nil
}

func (w *lineWatcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// startEverythingHTTP runs `node index.js mode` with PORT set to a free port
// and waits, at most 30 s, until the server logs that it listens. The
// process is killed at the end of the test, after the host is closed. It
// returns the port.
func startEverythingHTTP(t *testing.T, index, mode, readyLine string) int {
	t.Helper()
	const attempts = 3 // the free port may be taken before node binds it
	for attempt := 1; ; attempt++ {
		port := freePort(t)
		ctx, cancel := context.WithCancel(context.Background())
		cmd := exec.CommandContext(ctx, "node", index, mode)
		cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
		cmd.Dir = filepath.Dir(index)
		cmd.WaitDelay = 5 * time.Second
		stderr := &lineWatcher{marker: readyLine, found: make(chan struct{})}
		cmd.Stderr = stderr // stdout (console.log chatter) goes to /dev/null
		if err := cmd.Start(); err != nil {
			cancel()
			t.Fatalf("start node %s %s: %v", index, mode, err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		stop := func() {
			cancel()
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				t.Errorf("node %s did not exit within 10s of SIGKILL", mode)
			}
		}

		wait, waitCancel := context.WithTimeout(t.Context(), 30*time.Second)
		select {
		case <-stderr.found:
			waitCancel()
			t.Cleanup(stop) // registered before the host's, so it runs after it
			t.Logf("node %s listens on 127.0.0.1:%d", mode, port)
			return port
		case err := <-exited:
			waitCancel()
			cancel()
			if strings.Contains(stderr.String(), "already in use") && attempt < attempts {
				t.Logf("port %d was taken, trying another", port)
				continue
			}
			t.Fatalf("node %s exited before listening (%v); stderr:\n%s", mode, err, stderr)
		case <-wait.Done():
			waitCancel()
			stop()
			t.Fatalf("node %s did not log %q within 30s; stderr:\n%s", mode, readyLine, stderr)
		}
	}
}

func toolNames(t *testing.T, h *host.Host, server string) []string {
	t.Helper()
	tools, err := h.Tools(server)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Tool.Name)
	}
	return names
}

// TestInteropEverythingStdio runs the official TypeScript example server over
// stdio and exercises discovery, several kinds of results and progress.
func TestInteropEverythingStdio(t *testing.T) {
	index := everythingServer(t)
	s := stdioServer("everything", "node", index, "stdio")
	s.Sandbox.Read = []string{testbin.Interop(t, "..", everythingPkg)} // node runs its script and its node_modules
	h := startHost(t, host.Options{}, s)

	st := mustStatus(t, h, "everything")
	if st.State != host.StateReady {
		t.Fatalf("state = %s, want ready (last error: %s)", st.State, st.LastError)
	}
	if st.Era != host.EraLegacy || st.ProtocolVersion != negotiate.LegacyVersion {
		t.Errorf("era %q protocol %q, want legacy %s", st.Era, st.ProtocolVersion, negotiate.LegacyVersion)
	}
	if st.ServerInfo == nil || st.ServerInfo.Name == "" {
		t.Errorf("serverInfo = %+v, want a name", st.ServerInfo)
	} else {
		t.Logf("serverInfo %s %s; %d tools, %d prompts, %d resources, %d templates",
			st.ServerInfo.Name, st.ServerInfo.Version, st.Tools, st.Prompts, st.Resources, st.ResourceTemplates)
	}
	if st.PID == 0 {
		t.Error("no pid for a running stdio server")
	}
	if st.Tools < 10 || st.Prompts < 1 || st.Resources < 7 || st.ResourceTemplates < 1 {
		t.Errorf("tools/prompts/resources/templates = %d/%d/%d/%d, want >= 10/1/7/1",
			st.Tools, st.Prompts, st.Resources, st.ResourceTemplates)
	}

	names := toolNames(t, h, "everything")
	for _, want := range []string{"echo", "get-sum", "get-tiny-image", "trigger-long-running-operation", "get-structured-content"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}
	prompts, err := h.Prompts("everything")
	if err != nil || len(prompts) != st.Prompts {
		t.Errorf("Prompts: %d prompts, %v; status says %d", len(prompts), err, st.Prompts)
	}
	resources, templates, err := h.Resources("everything")
	if err != nil {
		t.Fatal(err)
	}
	if len(resources) != st.Resources || len(templates) != st.ResourceTemplates {
		t.Errorf("Resources: %d resources, %d templates; status says %d, %d", len(resources), len(templates), st.Resources, st.ResourceTemplates)
	}
	uris := map[string]bool{}
	for _, r := range resources {
		if r.URI == "" || uris[r.URI] {
			t.Errorf("resource URI %q is empty or listed twice", r.URI)
		}
		uris[r.URI] = true
	}

	t.Run("echo", func(t *testing.T) {
		res := mustCallWithin(t, h, "everything", "echo", `{"message":"hi"}`)
		if got := textOf(res); !strings.Contains(got, "hi") || res.IsError {
			t.Errorf("echo = %q (isError %v), want it to contain hi", got, res.IsError)
		}
	})
	t.Run("get-sum", func(t *testing.T) {
		res := mustCallWithin(t, h, "everything", "get-sum", `{"a":2,"b":3}`)
		if got := textOf(res); !strings.Contains(got, "5") || res.IsError {
			t.Errorf("get-sum = %q (isError %v), want it to contain 5", got, res.IsError)
		}
	})
	t.Run("get-tiny-image", func(t *testing.T) {
		res := mustCallWithin(t, h, "everything", "get-tiny-image", `{}`)
		var img *mcp.ImageContent
		for _, c := range res.Content {
			if ic, ok := c.(*mcp.ImageContent); ok {
				img = ic
			}
		}
		if img == nil {
			t.Fatalf("no image content in %d blocks", len(res.Content))
		}
		if img.MIMEType != "image/png" || !bytes.HasPrefix(img.Data, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("image %s of %d bytes, want a PNG", img.MIMEType, len(img.Data))
		}
	})
	t.Run("get-structured-content", func(t *testing.T) {
		res := mustCallWithin(t, h, "everything", "get-structured-content", `{"location":"New York"}`)
		if res.IsError || res.StructuredContent == nil {
			t.Fatalf("isError %v, structuredContent %v: want structured content (text %q)", res.IsError, res.StructuredContent, textOf(res))
		}
		raw, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		var weather struct {
			Temperature *float64 `json:"temperature"`
			Conditions  string   `json:"conditions"`
		}
		if err := json.Unmarshal(raw, &weather); err != nil || weather.Temperature == nil || weather.Conditions == "" {
			t.Errorf("structuredContent %s (%v), want temperature and conditions", raw, err)
		}
	})
	t.Run("trigger-long-running-operation progress", func(t *testing.T) {
		var tool *mcp.Tool
		tools, _ := h.Tools("everything")
		for _, tl := range tools {
			if tl.Tool.Name == "trigger-long-running-operation" {
				tool = tl.Tool
			}
		}
		if tool == nil {
			t.Fatal("no trigger-long-running-operation tool")
		}
		schema, _ := json.Marshal(tool.InputSchema)
		for _, prop := range []string{`"duration"`, `"steps"`} {
			if !bytes.Contains(schema, []byte(prop)) {
				t.Errorf("input schema %s lacks %s", schema, prop)
			}
		}

		var mu sync.Mutex
		var got []host.Progress
		res, err := callWithin(t, h, host.CallToolRequest{
			Server: "everything", Tool: "trigger-long-running-operation",
			Arguments:  json.RawMessage(`{"duration":1,"steps":3}`),
			OnProgress: func(p host.Progress) { mu.Lock(); got = append(got, p); mu.Unlock() },
		})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(textOf(res), "completed") {
			t.Errorf("text = %q", textOf(res))
		}
		mu.Lock()
		defer mu.Unlock()
		if len(got) != 3 {
			t.Fatalf("%d progress notifications reached OnProgress by the time the call returned (%+v), want the 3 steps", len(got), got)
		}
		for i, p := range got {
			if p.Total != 3 || p.Progress < 1 || p.Progress > 3 || (i > 0 && p.Progress <= got[i-1].Progress) {
				t.Errorf("progress %d = %+v (all: %+v), want increasing steps of 3", i, p, got)
			}
		}
		t.Logf("%d progress notifications: %+v", len(got), got)
	})
}

// TestInteropEverythingHTTP runs the official TypeScript example server over
// streamable HTTP and over the 2024-11-05 HTTP+SSE transport, each its own
// process on a free loopback port.
func TestInteropEverythingHTTP(t *testing.T) {
	index := everythingServer(t)
	cases := []struct {
		mode, readyLine, transport, path string
	}{
		// dist/transports/streamableHttp.js: "MCP Streamable HTTP Server listening on port N"
		{"streamableHttp", "listening on port", config.TransportStreamableHTTP, "/mcp"},
		// dist/transports/sse.js: "Server is running on port N"
		{"sse", "Server is running on port", config.TransportSSE, "/sse"},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			port := startEverythingHTTP(t, index, tc.mode, tc.readyLine)
			url := "http://127.0.0.1:" + strconv.Itoa(port) + tc.path
			h := startHost(t, host.Options{}, remoteServer("everything", tc.transport, url))
			st := mustStatus(t, h, "everything")
			if st.State != host.StateReady {
				t.Fatalf("state = %s, want ready (last error: %s)", st.State, st.LastError)
			}
			if st.Era != host.EraLegacy || st.ProtocolVersion != negotiate.LegacyVersion {
				t.Errorf("era %q protocol %q, want legacy %s", st.Era, st.ProtocolVersion, negotiate.LegacyVersion)
			}
			if st.ServerInfo == nil || st.ServerInfo.Name == "" || st.Tools < 10 {
				t.Errorf("serverInfo %+v with %d tools, want a name and >= 10 tools", st.ServerInfo, st.Tools)
			}
			res := mustCallWithin(t, h, "everything", "echo", `{"message":"hi over `+tc.mode+`"}`)
			if got := textOf(res); !strings.Contains(got, "hi over "+tc.mode) || res.IsError {
				t.Errorf("echo = %q (isError %v)", got, res.IsError)
			}
			res = mustCallWithin(t, h, "everything", "get-sum", `{"a":2,"b":3}`)
			if got := textOf(res); !strings.Contains(got, "5") {
				t.Errorf("get-sum = %q", got)
			}
		})
	}
}
