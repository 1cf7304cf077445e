package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcphost/mcphost/internal/benchrules"
	"github.com/mcphost/mcphost/negotiate"
)

// side is one thing the clients call: the upstream itself or a proxy in
// front of it.
type side struct {
	name  string
	url   string // the Streamable HTTP endpoint
	token string // the bearer token, "" for none
	tool  string // the echo tool's name there
	proc  *child // the proxy process; nil for direct
	// olderLegacyOK accepts any version before 2026-07-28 in the legacy
	// run: TBXark answers 2025-06-18, and nothing in a tools/call differs.
	olderLegacyOK bool
}

// sideInfo is what the report says of a side in one era.
type sideInfo struct {
	Name       string `json:"name"`
	What       string `json:"what"`
	Endpoint   string `json:"endpoint,omitempty"`
	PID        int    `json:"pid,omitempty"`
	Negotiated string `json:"negotiated,omitempty"`
	// Dropped says why the side was left out of this era's measures;
	// Failed marks a drop that was not a version mismatch (the run then
	// fails).
	Dropped string `json:"dropped,omitempty"`
	Failed  bool   `json:"failed,omitempty"`
}

// readyLimit bounds how long a side may take to start and answer.
const readyLimit = 60 * time.Second

// upstreamServer is the server name mcphost and TBXark give the upstream;
// mcphost's gateway names its tool upstreamServer + "__echo".
const upstreamServer = "up"

// startUpstream runs the wellbehaved fixture as a stateless Streamable
// HTTP server (both eras) and returns it with its endpoint.
func (r *runner) startUpstream(ctx context.Context) (*child, string, error) {
	c, err := startChild("upstream", []string{r.bins.Wellbehaved, "-http", "127.0.0.1:0", "-stateless"}, nil, r.logPath("upstream"))
	if err != nil {
		return nil, "", err
	}
	url, err := c.firstLine(ctx, readyLimit)
	if err == nil && !strings.HasPrefix(url, "http://127.0.0.1:") {
		err = fmt.Errorf("the upstream printed %q, want its http://127.0.0.1:PORT/mcp URL", url)
	}
	if err != nil {
		c.stop()
		return nil, "", err
	}
	return c, url, nil
}

// startSide starts the proxy of side name for the era of version (direct
// starts nothing).
func (r *runner) startSide(ctx context.Context, name, version string) (*side, error) {
	switch name {
	case sideDirect:
		return &side{name: name, url: r.upstream, tool: "echo"}, nil
	case sideRelay:
		c, err := startChild("relay", []string{r.bins.Self, relayCommand, "-upstream", r.upstream, "-listen", "127.0.0.1:0", "-version", version},
			nil, r.logPath("relay-"+version))
		if err != nil {
			return nil, err
		}
		url, err := c.firstLine(ctx, readyLimit)
		if err != nil {
			c.stop()
			return nil, err
		}
		return &side{name: name, url: url, tool: "echo", proc: c}, nil
	case sideTBX:
		return r.startTBX(ctx, version)
	case sideMcphost:
		return r.startMcphost(ctx, version)
	}
	return nil, fmt.Errorf("unknown side %q", name)
}

// tbxConfig is TBXark/mcp-proxy's configuration (its config.go: the V2
// format): one Streamable HTTP server in front of one Streamable HTTP
// upstream, bearer tokens checked, no log line per request.
func tbxConfig(addr, upstream, token string) ([]byte, error) {
	type options struct {
		LogEnabled bool     `json:"logEnabled"`
		AuthTokens []string `json:"authTokens"`
	}
	cfg := map[string]any{
		"mcpProxy": map[string]any{
			"baseURL": "http://" + addr,
			"addr":    addr,
			"name":    "bakeoff-tbx",
			"version": "1",
			"type":    "streamable-http",
			"options": options{LogEnabled: false, AuthTokens: []string{token}},
		},
		"mcpServers": map[string]any{
			upstreamServer: map[string]any{"transportType": "streamable-http", "url": upstream},
		},
	}
	return json.MarshalIndent(cfg, "", "  ")
}

// startTBX runs TBXark/mcp-proxy on a free port (it cannot listen on port
// 0 and report it; a port taken meanwhile makes it exit, and it is tried
// again). It serves the upstream at /up/mcp.
func (r *runner) startTBX(ctx context.Context, version string) (*side, error) {
	token := newToken()
	var lastErr error
	for range 3 {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		b, err := tbxConfig(addr, r.upstream, token)
		if err != nil {
			return nil, err
		}
		path := filepath.Join(r.o.Out, "tbx-"+version+".json")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return nil, err
		}
		c, err := startChild("tbx", []string{r.bins.TBX, "-config", path, "-expand-env=false"}, nil, r.logPath("tbx-"+version))
		if err != nil {
			return nil, err
		}
		// It exits at once when the port is taken.
		select {
		case <-c.done:
			lastErr = fmt.Errorf("tbx exited at start; see %s", c.log.Name())
			continue
		case <-time.After(300 * time.Millisecond):
		case <-ctx.Done():
			c.stop()
			return nil, ctx.Err()
		}
		return &side{name: sideTBX, url: "http://" + addr + "/" + upstreamServer + "/mcp", token: token, tool: "echo", proc: c, olderLegacyOK: true}, nil
	}
	return nil, lastErr
}

// mcphostConfig renders the daemon's configuration for the era of
// version: one principal with unbounded limits, the transcript with sync
// "normal", the gateway, one server block to the shared upstream, and the
// ten call rules.
func mcphostConfig(dataDir, upstream, token, version string) string {
	negotiation := "legacy"
	if version >= negotiate.ModernVersion {
		negotiation = "auto"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Generated by mcphost-bakeoff for the %s run.\n", version)
	fmt.Fprintf(&b, "listen    = \"127.0.0.1:0\"\ndata_dir  = %q\nlog_level = \"warn\"\n", dataDir)
	b.WriteString("\nstore {\n  sync = \"normal\"\n}\n")
	fmt.Fprintf(&b, "\nserver %q {\n  url                 = %q\n  version_negotiation = %q\n}\n", upstreamServer, upstream, negotiation)
	// The bake-off measures the daemon, not the limits put on a
	// principal: 0 is no bound.
	fmt.Fprintf(&b, "\nprincipal \"bench\" {\n  token  = %q\n  groups = [\"bench\"]\n  rate_limit {\n    calls_per_second = 0\n    concurrent_calls = 0\n  }\n}\n", token)
	b.WriteString("\ngateway {\n  enabled = true\n}\n")
	b.WriteString(benchrules.CallHCL)
	return b.String()
}

// startMcphost runs `mcphost serve` with a generated configuration and
// its data_dir in a temporary directory, and waits for its ready file.
func (r *runner) startMcphost(ctx context.Context, version string) (*side, error) {
	dataDir, err := os.MkdirTemp("", "bakeoff-mcphost-")
	if err != nil {
		return nil, err
	}
	r.cleanup = append(r.cleanup, func() { os.RemoveAll(dataDir) })
	token := newToken()
	cfgPath := filepath.Join(r.o.Out, "mcphost-"+version+".hcl")
	if err := os.WriteFile(cfgPath, []byte(mcphostConfig(dataDir, r.upstream, token, version)), 0o600); err != nil {
		return nil, err
	}
	ready := filepath.Join(dataDir, "ready")
	c, err := startChild("mcphost", []string{r.bins.Mcphost, "serve", "-config", cfgPath, "-ready-file", ready}, nil, r.logPath("mcphost-"+version))
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(readyLimit)
	for {
		if base := readFirst(ready); base != "" {
			return &side{name: sideMcphost, url: base + "/mcp", token: token, tool: upstreamServer + "__echo", proc: c}, nil
		}
		if c.exited() {
			return nil, fmt.Errorf("mcphost exited at start; see %s", c.log.Name())
		}
		if time.Now().After(deadline) {
			c.stop()
			return nil, fmt.Errorf("mcphost wrote no ready file within %v; see %s", readyLimit, c.log.Name())
		}
		select {
		case <-ctx.Done():
			c.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// errVersion marks a side that negotiated another version than its era's.
var errVersion = errors.New("negotiated another version")

// await connects to s until it lists the tool and answers one call
// correctly, within readyLimit, and checks the version it negotiated.
func (r *runner) await(ctx context.Context, s *side, version string) (negotiated string, err error) {
	deadline := time.Now().Add(readyLimit)
	for {
		c, err := connect(ctx, s, version, r.o.CallTimeout)
		if err == nil {
			negotiated = c.negotiated()
			if !versionOK(negotiated, version, s.olderLegacyOK) {
				c.close()
				return negotiated, fmt.Errorf("%w: %s, want %s", errVersion, negotiated, version)
			}
			err = c.check(ctx)
			c.close()
			if err == nil {
				return negotiated, nil
			}
		}
		if s.proc != nil && s.proc.exited() {
			return "", fmt.Errorf("%w (the process exited; see %s)", err, s.proc.log.Name())
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return "", fmt.Errorf("not ready within %v: %w", readyLimit, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// versionOK says whether a side that negotiated got may run in the era of
// want.
func versionOK(got, want string, olderLegacyOK bool) bool {
	if got == want {
		return true
	}
	return olderLegacyOK && want < negotiate.ModernVersion && got != "" && got < negotiate.ModernVersion
}

func newToken() string {
	b := make([]byte, 24)
	rand.Read(b) // crypto/rand does not fail on Linux
	return hex.EncodeToString(b)
}
