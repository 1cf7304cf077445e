package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioClient connects go-sdk's client to `mcphost ARGS...` over stdio.
func stdioClient(t *testing.T, bin, version string, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(t.Context(), daemonBound)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect to mcphost %v: %v\nstderr:\n%s", args, err, stderr.String())
	}
	t.Cleanup(func() {
		if err := cs.Close(); err != nil && !strings.Contains(err.Error(), "signal") {
			t.Logf("close: %v\nstderr:\n%s", err, stderr.String())
		}
	})
	return cs
}

func listAndCall(t *testing.T, cs *mcp.ClientSession, tool string) {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, tool) {
		t.Fatalf("tools/list has no %s: %v", tool, names)
	}
	out, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "over stdio"}})
	if err != nil || out.IsError {
		t.Fatalf("call %s = %+v, %v", tool, out, err)
	}
	if tc, ok := out.Content[0].(*mcp.TextContent); !ok || tc.Text != "over stdio" {
		t.Fatalf("call %s returned %+v", tool, out.Content)
	}
}

// TestGatewayStdioBridge drives `mcphost gateway -stdio` with go-sdk's
// stdio client in both eras, bridged to a running daemon that it finds
// through the config's data_dir (the owner token), and its progress.
func TestGatewayStdioBridge(t *testing.T) {
	bin := testbin.Build(t, mcphostPkg)
	dir := t.TempDir()
	cfg := writeDaemonConfig(t, dir, "127.0.0.1:0", filepath.Join(dir, "state"), "")
	d := startDaemon(t, bin, cfg)
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer client.CloseIdleConnections()
	d.waitReady(t, client, d.subscribe(t, client))
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			cs := stdioClient(t, bin, version, "gateway", "-stdio", "-config", cfg, "-url", d.base+"/mcp")
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("negotiated %s through the bridge, want %s", got, version)
			}
			listAndCall(t, cs, "fx__echo")
			params := &mcp.CallToolParams{Name: "fx__slow", Arguments: map[string]any{"ms": 300}}
			params.SetProgressToken("p1")
			if _, err := cs.CallTool(t.Context(), params); err != nil {
				t.Fatalf("slow: %v", err)
			}
			one := stdioClient(t, bin, version, "gateway", "-stdio", "-config", cfg, "-url", d.base+"/mcp/servers/fx")
			listAndCall(t, one, "echo")
		})
	}
}

// TestGatewayStandalone runs the host inside `mcphost gateway -stdio
// -standalone` when no daemon runs.
func TestGatewayStandalone(t *testing.T) {
	bin := testbin.Build(t, mcphostPkg)
	dir := t.TempDir()
	cfg := writeDaemonConfig(t, dir, "127.0.0.1:0", filepath.Join(dir, "state"), "")
	cs := stdioClient(t, bin, "2025-11-25", "gateway", "-stdio", "-standalone", "-config", cfg)
	listAndCall(t, cs, "fx__echo")
}

// TestGatewayConfigSnippets: each client's snippet names the endpoint and
// the token (or the stdio bridge with its token file), as that client's
// config file wants.
func TestGatewayConfigSnippets(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg"))
	t.Setenv(tokenEnv, "")
	dataDir := filepath.Join(dir, "state")
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	token := strings.Repeat("ab", 32)
	if err := os.WriteFile(filepath.Join(dataDir, ownerTokenFile), []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "mcphost.hcl")
	if err := os.WriteFile(cfg, []byte("listen = \"127.0.0.1:7781\"\ndata_dir = \""+dataDir+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(dir, "xdg", "mcphost", "tokens", "owner@127.0.0.1_7781.token")
	bridge := []string{`"-stdio"`, `"-url"`, `"http://127.0.0.1:7781/mcp"`, `"-token-file"`, `"` + tokenFile + `"`}
	for _, tc := range []struct {
		args   []string
		want   []string
		format string // json, toml or sh
	}{
		{[]string{"cursor"}, []string{`"url": "http://127.0.0.1:7781/mcp"`, `"Authorization": "Bearer ` + token + `"`, `"mcpServers"`}, "json"},
		{[]string{"vscode"}, []string{`"type": "http"`, `"servers"`, `"url": "http://127.0.0.1:7781/mcp"`, `"Authorization": "Bearer ${input:mcphost-token}"`, `"type": "promptString"`, `"password": true`}, "json"},
		{[]string{"vscode", "-stdio"}, append([]string{`"type": "stdio"`}, bridge...), "json"},
		{[]string{"claude"}, append([]string{`"mcpServers"`, `"gateway"`}, bridge...), "json"},
		{[]string{"claude-code"}, []string{"claude mcp add --transport http mcphost http://127.0.0.1:7781/mcp --header 'Authorization: Bearer " + token + "'"}, "sh"},
		{[]string{"claude-code", "-stdio"}, []string{"claude mcp add mcphost -- ", " gateway -stdio -url http://127.0.0.1:7781/mcp -token-file " + tokenFile}, "sh"},
		{[]string{"cursor", "-server", "revenue"}, []string{`"url": "http://127.0.0.1:7781/mcp/servers/revenue"`}, "json"},
		{[]string{"qwen"}, []string{`"httpUrl": "http://127.0.0.1:7781/mcp"`, `"Bearer ` + token + `"`}, "json"},
		{[]string{"gemini"}, []string{`"httpUrl": "http://127.0.0.1:7781/mcp"`, `"Bearer ` + token + `"`}, "json"},
		{[]string{"gemini", "-stdio"}, bridge, "json"},
		{[]string{"codex"}, []string{"[mcp_servers.mcphost]\n", `url = "http://127.0.0.1:7781/mcp"`, `http_headers = { Authorization = "Bearer ` + token + `" }`}, "toml"},
		{[]string{"codex", "-stdio"}, []string{"[mcp_servers.mcphost]\n", `args = ["gateway", "-stdio", "-url", "http://127.0.0.1:7781/mcp", "-token-file", "` + tokenFile + `"]`}, "toml"},
		{[]string{"inspector"}, []string{`"type": "streamable-http"`, `"url": "http://127.0.0.1:7781/mcp"`, `"Bearer ` + token + `"`}, "json"},
		{[]string{"windsurf"}, []string{`"serverUrl": "http://127.0.0.1:7781/mcp"`, `"Bearer ` + token + `"`}, "json"},
		{[]string{"zed"}, []string{`"context_servers"`, `"url": "http://127.0.0.1:7781/mcp"`, `"Bearer ` + token + `"`}, "json"},
		{[]string{"zed", "-url", "https://gw.example:8443/"}, []string{`"url": "https://gw.example:8443/mcp"`}, "json"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"gateway", "config"}, tc.args[0])
			args = append(append(args, "-config", cfg), tc.args[1:]...)
			if code := run(t.Context(), args, nil, &stdout, &stderr); code != exitOK {
				t.Fatalf("exit %d\nstderr:\n%s", code, stderr.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("snippet has no %s:\n%s", w, stdout.String())
				}
			}
			if tc.format == "json" && !json.Valid(stdout.Bytes()) {
				t.Errorf("snippet is not JSON:\n%s", stdout.String())
			}
		})
	}
	if b, err := os.ReadFile(tokenFile); err != nil || strings.TrimSpace(string(b)) != token {
		t.Errorf("token file %s: %q, %v", tokenFile, b, err)
	}
	var stderr bytes.Buffer
	if code := run(t.Context(), []string{"gateway", "config", "emacs"}, nil, &bytes.Buffer{}, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "windsurf") {
		t.Fatalf("an unknown client: exit %d, stderr %q", code, stderr.String())
	}
}
