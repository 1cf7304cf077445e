package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// echoText is the argument of every call: 43 characters, the size of the
// result bakeoff.md's upstream tool returned.
const echoText = "The quick brown fox jumps over the lazy dog"

// newTransport is one caller's own connections: loopback only, so no proxy
// from the environment.
func newTransport() *http.Transport {
	return &http.Transport{Proxy: nil, MaxIdleConns: 4, MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute, DisableCompression: true}
}

// bearer adds a token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// caller is one client of a side: a go-sdk session with an http.Transport
// of its own, pinned to one protocol version.
type caller struct {
	side *side
	cs   *mcp.ClientSession
	tr   *http.Transport
	args map[string]any
	// timeout bounds each call.
	timeout time.Duration
}

// connect opens a caller's session to s, pinned to version.
func connect(ctx context.Context, s *side, version string, timeout time.Duration) (*caller, error) {
	tr := newTransport()
	var rt http.RoundTripper = tr
	if s.token != "" {
		rt = bearer{token: s.token, next: tr}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcphost-bakeoff", Version: "1"}, nil)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cs, err := client.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: s.url, HTTPClient: &http.Client{Transport: rt}},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		tr.CloseIdleConnections()
		return nil, fmt.Errorf("%s: connect %s: %w", s.name, s.url, err)
	}
	return &caller{side: s, cs: cs, tr: tr, args: map[string]any{"text": echoText}, timeout: timeout}, nil
}

// negotiated is the protocol version the session runs.
func (c *caller) negotiated() string {
	if r := c.cs.InitializeResult(); r != nil {
		return r.ProtocolVersion
	}
	return ""
}

// call makes one tools/call and checks that it echoed the text.
func (c *caller) call(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	res, err := c.cs.CallTool(cctx, &mcp.CallToolParams{Name: c.side.tool, Arguments: c.args})
	if err != nil {
		return fmt.Errorf("%s: call %s: %w", c.side.name, c.side.tool, err)
	}
	if res.IsError {
		return fmt.Errorf("%s: call %s: tool error %q", c.side.name, c.side.tool, resultText(res))
	}
	if got := resultText(res); got != echoText {
		return fmt.Errorf("%s: call %s: got %q, want %q", c.side.name, c.side.tool, got, echoText)
	}
	return nil
}

// check lists the tools (the side's tool must be there) and makes one
// call.
func (c *caller) check(ctx context.Context) error {
	lctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	res, err := c.cs.ListTools(lctx, nil)
	if err != nil {
		return fmt.Errorf("%s: list tools: %w", c.side.name, err)
	}
	if !slices.ContainsFunc(res.Tools, func(t *mcp.Tool) bool { return t.Name == c.side.tool }) {
		names := make([]string, len(res.Tools))
		for i, t := range res.Tools {
			names[i] = t.Name
		}
		return fmt.Errorf("%s: tool %s not listed (listed: %v)", c.side.name, c.side.tool, names)
	}
	return c.call(ctx)
}

// close ends the session and the caller's connections.
func (c *caller) close() {
	c.cs.Close()
	c.tr.CloseIdleConnections()
}

// resultText is the text of a result's first text block, or "".
func resultText(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}
