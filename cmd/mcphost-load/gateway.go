package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcphost/mcphost/internal/apiclient"
	"github.com/mcphost/mcphost/negotiate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Doors the load and the soak can go through.
const (
	doorGateway = "gateway" // an MCP client of /mcp, as agents use mcphost
	doorAPI     = "api"     // POST /api/v1/sessions/{id}/calls, as the WebShell does
)

// gwClient is one worker's MCP client of the gateway's /mcp: a go-sdk
// client of one era, as one principal, under a client name of its own
// (the gateway titles the worker's transcript sessions after it). A call
// that finds the session gone (its replica died: 404) or the connection
// closed drops it, and the next call connects again, as an agent does; any
// other failed call (a 502 from the balancer, an error answer) leaves the
// session as it is.
type gwClient struct {
	endpoint  string // http://HOST:PORT/mcp
	principal principalPlan
	version   string // the protocol version the client pins
	name      string // clientInfo.name
	hc        *http.Client

	mu       sync.Mutex
	cs       *mcp.ClientSession
	acked    []int64  // the call numbers the gateway answered without error
	missing  []string // ids of the sessions a call found gone (404)
	connects int
}

const gwClientVersion = "1"

// newGWClient makes the client of worker w, which calls as p in era
// legacy (2025-11-25) for even w and modern (2026-07-28) for odd w.
func newGWClient(base string, w int, p principalPlan) *gwClient {
	version := negotiate.LegacyVersion
	if w%2 == 1 {
		version = negotiate.ModernVersion
	}
	t := &http.Transport{MaxIdleConns: 4, MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute, DisableCompression: true}
	return &gwClient{
		endpoint:  base + "/mcp",
		principal: p,
		version:   version,
		name:      "mcphost-load-w" + strconv.Itoa(w),
		hc:        &http.Client{Transport: bearerTransport{token: p.Token, next: t}},
	}
}

// title is the transcript session title the gateway gives this client.
func (g *gwClient) title() string { return "Gateway: " + g.name + " " + gwClientVersion }

// bearerTransport adds the principal's token to every request.
type bearerTransport struct {
	token string
	next  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// session returns the client's session, connecting when it has none.
func (g *gwClient) session(ctx context.Context) (*mcp.ClientSession, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cs != nil {
		return g.cs, nil
	}
	client := mcp.NewClient(&mcp.Implementation{Name: g.name, Version: gwClientVersion}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cs, err := client.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: g.endpoint, HTTPClient: g.hc},
		&mcp.ClientSessionOptions{ProtocolVersion: g.version})
	if err != nil {
		return nil, fmt.Errorf("gateway %s client %s: connect: %w", g.version, g.name, err)
	}
	if got := cs.InitializeResult().ProtocolVersion; got != g.version {
		cs.Close()
		return nil, fmt.Errorf("gateway %s client %s: negotiated %s", g.version, g.name, got)
	}
	g.cs = cs
	g.connects++
	return cs, nil
}

// sessionID is the client's current session id ("" for none, and for a
// 2026-07-28 client, which has no session).
func (g *gwClient) sessionID() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cs == nil {
		return ""
	}
	return g.cs.ID()
}

// missingSessions returns the ids of the sessions calls found gone.
func (g *gwClient) missingSessions() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.missing)
}

// drop closes cs if it is still the client's session.
func (g *gwClient) drop(cs *mcp.ClientSession) {
	g.mu.Lock()
	if g.cs == cs {
		g.cs = nil
	}
	g.mu.Unlock()
	cs.Close()
}

// call makes call number n: tool with the text marked as this call's
// (callText), and records n as acknowledged when the gateway answered
// without error.
func (g *gwClient) call(ctx context.Context, tool string, n int64, text string) (*mcp.CallToolResult, error) {
	cs, err := g.session(ctx)
	if err != nil {
		return nil, err
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": text}})
	if err != nil {
		if missing := errors.Is(err, mcp.ErrSessionMissing); missing || errors.Is(err, mcp.ErrConnectionClosed) {
			if missing {
				g.mu.Lock()
				g.missing = append(g.missing, cs.ID())
				g.mu.Unlock()
			}
			g.drop(cs)
		}
		return nil, fmt.Errorf("gateway %s client %s: %s: %w", g.version, g.name, tool, err)
	}
	if !res.IsError {
		g.mu.Lock()
		g.acked = append(g.acked, n)
		g.mu.Unlock()
	}
	return res, nil
}

func (g *gwClient) close() {
	g.mu.Lock()
	cs := g.cs
	g.cs = nil
	g.mu.Unlock()
	if cs != nil {
		cs.Close()
	}
	g.hc.CloseIdleConnections()
}

// callText is the echo text of call n of a worker: a marker the transcript
// check finds the call by, padded to size bytes.
func callText(n int64, size int) string {
	m := "call-" + strconv.FormatInt(n, 10) + " "
	if len(m) >= size {
		return m
	}
	return m + strings.Repeat("x", size-len(m))
}

// callNumber reads the marker of callText back; ok is false for text that
// has none.
func callNumber(text string) (int64, bool) {
	rest, ok := strings.CutPrefix(text, "call-")
	if !ok {
		return 0, false
	}
	num, _, _ := strings.Cut(rest, " ")
	n, err := strconv.ParseInt(num, 10, 64)
	return n, err == nil && n >= 0
}

// resultText joins the text blocks of a result.
func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// gwTool is the gateway's name of a server's echo tool on /mcp.
func gwTool(server string) string { return server + "__echo" }

// gatewayCalls returns the callFunc of the gateway door: worker w calls
// through clients[w], call i to target (w+i) % len(targets), numbered so
// that no two calls of the run share a number.
func gatewayCalls(clients []*gwClient, targets []serverPlan, textBytes int) callFunc {
	tools := make([]string, len(targets))
	for t, s := range targets {
		tools[t] = gwTool(s.Name)
	}
	var seqMu sync.Mutex
	seq := int64(0)
	return func(ctx context.Context, w, i int) (int, error) {
		t := (w + i) % len(targets)
		seqMu.Lock()
		seq++
		n := seq
		seqMu.Unlock()
		res, err := clients[w].call(ctx, tools[t], n, callText(n, textBytes))
		if err != nil {
			return 0, err
		}
		if res.IsError {
			return 0, fmt.Errorf("gateway call to %s: isError: %.200s", tools[t], resultText(res))
		}
		return targets[t].Kind, nil
	}
}

// gatewaySanity proves the policies and the plugin act on the gateway's
// calls too: rule r6 answers the blocked principal's call with an error
// result that carries its message, and redact replaces a secret.
func (r *runner) gatewaySanity(ctx context.Context, base string, principals []principalPlan, target string) error {
	blocked := newGWClient(base, 0, principals[len(principals)-1])
	blocked.name = "mcphost-load-sanity"
	defer blocked.close()
	res, err := blocked.call(ctx, gwTool(target), 0, "hello")
	switch {
	case err != nil:
		return fmt.Errorf("gateway sanity: %w", err)
	case !r.o.Policies:
		if res.IsError {
			r.fail("gateway sanity: without policies the blocked principal's call failed: %s", resultText(res))
		}
	case !res.IsError || !strings.Contains(resultText(res), "blocked group"):
		r.fail("gateway sanity: rule r6 should answer the blocked principal's call with its message; got isError=%v %q", res.IsError, resultText(res))
	default:
		r.res.Sanity.GatewayPolicy = "rule r6 answered the blocked principal's gateway call: " + resultText(res)
	}
	for _, w := range []int{0, 1} {
		c := newGWClient(base, w, principals[0])
		c.name = "mcphost-load-sanity"
		res, err := c.call(ctx, gwTool(target), 0, secretText)
		c.close()
		if err != nil {
			return fmt.Errorf("gateway sanity: %w", err)
		}
		txt := resultText(res)
		switch {
		case res.IsError:
			r.fail("gateway sanity (%s): echo of a secret failed: %s", c.version, txt)
		case r.o.Plugin == pluginRedact && (strings.Contains(txt, "sk-ABCDEF") || !strings.Contains(txt, "[REDACTED]")):
			r.fail("gateway sanity (%s): redact left the secret in the result: %s", c.version, txt)
		case r.o.Plugin == pluginRedact:
			r.res.Sanity.GatewayPlugin = append(r.res.Sanity.GatewayPlugin, c.version+": redact replaced the secret in a gateway echo result")
		}
	}
	return nil
}

// gatewayTranscript is what the transcript holds of the gateway's calls.
type gatewayTranscript struct {
	Clients      int   `json:"clients"`
	Acknowledged int64 `json:"acknowledged"`
	// Recorded is the number of the workers' entries read back; Found the
	// acknowledged calls among them. Lost = Acknowledged - Found must be 0.
	Recorded int64 `json:"recorded"`
	Found    int64 `json:"found"`
	Lost     int64 `json:"lost"`
	// Unacknowledged are recorded calls the client never heard answered
	// (a call cut by a fault after its entry was written): allowed.
	Unacknowledged int64    `json:"unacknowledged"`
	Duplicates     int64    `json:"duplicates"`
	Sessions       int      `json:"sessions"`
	Problems       []string `json:"problems,omitempty"`
}

// checkGatewayTranscript reads back every worker's transcript sessions
// (the sessions of its principal titled after its client name; a
// 2025-11-25 client that connected again has several, and so has a
// 2026-07-28 client served by several replicas) and finds every
// acknowledged call in them by its marker. With exact set (a single
// daemon, no faults) every recorded call must also be acknowledged.
func checkGatewayTranscript(ctx context.Context, c *apiclient.Client, clients []*gwClient, exact bool) gatewayTranscript {
	gt := gatewayTranscript{Clients: len(clients)}
	type listed struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	byPrincipal := map[string][]listed{}
	for _, g := range clients {
		p := g.principal
		if _, ok := byPrincipal[p.Name]; ok {
			continue
		}
		var ss []listed
		if err := c.WithToken(p.Token).Sessions(ctx, &ss); err != nil {
			gt.Problems = append(gt.Problems, describe(err).Error())
		}
		byPrincipal[p.Name] = ss
	}
	for _, g := range clients {
		g.mu.Lock()
		acked := append([]int64(nil), g.acked...)
		g.mu.Unlock()
		gt.Acknowledged += int64(len(acked))
		seen := map[int64]int{}
		for _, s := range byPrincipal[g.principal.Name] {
			if s.Title != g.title() {
				continue
			}
			gt.Sessions++
			err := eachEntry(ctx, c, s.ID, g.principal.Token, func(e pagedEntry) {
				var args struct{ Text string }
				if json.Unmarshal(e.Arguments, &args) != nil {
					return
				}
				if n, ok := callNumber(args.Text); ok {
					seen[n]++
					gt.Recorded++
				}
			})
			if err != nil {
				gt.Problems = append(gt.Problems, fmt.Sprintf("%s: %v", g.name, err))
			}
		}
		ackedSet := make(map[int64]bool, len(acked))
		for _, n := range acked {
			ackedSet[n] = true
			if seen[n] > 0 {
				gt.Found++
			}
		}
		var lost []string
		for _, n := range acked {
			if seen[n] == 0 && len(lost) < 5 {
				lost = append(lost, strconv.FormatInt(n, 10))
			}
		}
		for n, k := range seen {
			if k > 1 {
				gt.Duplicates += int64(k - 1)
			}
			if !ackedSet[n] {
				gt.Unacknowledged++
			}
		}
		if len(lost) > 0 {
			gt.Problems = append(gt.Problems, fmt.Sprintf("%s (%s, %s): acknowledged calls missing from the transcript, e.g. %s",
				g.name, g.version, g.principal.Name, strings.Join(lost, ", ")))
		}
	}
	gt.Lost = gt.Acknowledged - gt.Found
	if gt.Duplicates > 0 {
		gt.Problems = append(gt.Problems, fmt.Sprintf("%d calls are recorded more than once", gt.Duplicates))
	}
	if exact && gt.Unacknowledged > 0 {
		gt.Problems = append(gt.Problems, fmt.Sprintf("%d recorded calls were never acknowledged, with no fault in the run", gt.Unacknowledged))
	}
	return gt
}

// pagedEntry is the part of an entry the gateway check reads.
type pagedEntry struct {
	Seq       int64           `json:"seq"`
	Status    string          `json:"status"`
	Arguments json.RawMessage `json:"arguments"`
}

// eachEntry reads every entry of session id, 500 at a time.
func eachEntry(ctx context.Context, c *apiclient.Client, id, token string, fn func(pagedEntry)) error {
	c = c.WithToken(token)
	after := int64(0)
	for {
		var page []pagedEntry
		next, more, err := c.Entries(ctx, id, after, 500, &page)
		if err != nil {
			return describe(err)
		}
		for _, e := range page {
			fn(e)
		}
		if !more || len(page) == 0 {
			return nil
		}
		after = next
	}
}
