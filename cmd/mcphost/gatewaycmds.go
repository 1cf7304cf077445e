package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcphost/mcphost/gateway"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/boot"
	"github.com/mcphost/mcphost/host/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tokenEnv names the environment variable that carries a principal's token
// to the gateway commands.
const tokenEnv = "MCPHOST_TOKEN"

const gatewayUsage = `usage:
  mcphost gateway -stdio [-config FILE] [-server NAME | -endpoint NAME] [-url URL] [-token-file FILE] [-standalone [-as NAME]] [-v]
      serve MCP on stdin/stdout for stdio-only clients: by default a bridge to
      the running daemon (its /mcp, with the owner token from data_dir or
      $MCPHOST_TOKEN); -standalone runs the host in this process instead
  mcphost gateway config claude|claude-code|cursor|vscode [-config FILE] [-server NAME] [-stdio]
      print what to paste into that client's configuration
`

func (e *env) gateway(ctx context.Context, args []string) int {
	if len(args) > 0 && args[0] == "config" {
		return e.gatewayConfig(args[1:])
	}
	fs := e.newFlagSet("gateway", "-stdio [flags] | config CLIENT")
	fs.Usage = func() { fmt.Fprint(e.stderr, gatewayUsage) }
	stdio := fs.Bool("stdio", false, "serve MCP on stdin/stdout")
	cfgPath := fs.String("config", "", "config `FILE` (default: ./mcphost.hcl, else ~/.config/mcphost/mcphost.hcl, else the embedded default)")
	server := fs.String("server", "", "serve one server's passthrough endpoint (/mcp/servers/`NAME`)")
	endpoint := fs.String("endpoint", "", "serve a named endpoint (/mcp/endpoints/`NAME`)")
	url := fs.String("url", "", "the daemon's MCP `URL` (default: from the config's listen)")
	tokenFile := fs.String("token-file", "", "read the bearer token from `FILE` (default: $MCPHOST_TOKEN, else data_dir's owner token)")
	standalone := fs.Bool("standalone", false, "run the host in this process instead of bridging to a daemon")
	as := fs.String("as", "owner", "with -standalone: the principal `NAME` the policies see")
	verbose := fs.Bool("v", false, "log on stderr")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if !*stdio || fs.NArg() > 0 {
		fmt.Fprint(e.stderr, gatewayUsage)
		return exitUsage
	}
	if *server != "" && *endpoint != "" {
		fmt.Fprintln(e.stderr, "mcphost gateway: -server and -endpoint are exclusive")
		return exitUsage
	}
	cfg, ok := e.loadConfig(*cfgPath)
	if !ok {
		return exitUsage
	}
	path := gateway.PathAggregate
	switch {
	case *server != "":
		path += "/servers/" + *server
	case *endpoint != "":
		path += "/endpoints/" + *endpoint
	}
	logger := e.newLogger(slog.LevelInfo, *verbose)
	if *standalone {
		return e.gatewayStandalone(ctx, cfg, path, *as, logger)
	}
	token, err := gatewayToken(cfg, *tokenFile)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost gateway: %v\n", err)
		return exitUsage
	}
	target := *url
	if target == "" {
		target = daemonURL(cfg) + path
	}
	err = gateway.Bridge(ctx, e.stdin, e.stdout, gateway.BridgeOptions{URL: target, Token: token, Logger: logger})
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(e.stderr, "mcphost gateway: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// daemonURL is the base URL of the daemon a config runs.
func daemonURL(cfg *config.Config) string {
	_, port, _ := net.SplitHostPort(cfg.Listen)
	return "http://" + net.JoinHostPort(urlHost(cfg.Listen), port)
}

// gatewayToken returns the bearer token the bridge sends: the -token-file,
// else $MCPHOST_TOKEN, else the owner token the daemon keeps in data_dir.
func gatewayToken(cfg *config.Config, file string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("-token-file: %v", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	if t := strings.TrimSpace(os.Getenv(tokenEnv)); t != "" {
		return t, nil
	}
	path := filepath.Join(cfg.DataDir, ownerTokenFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if len(cfg.Principals) > 0 {
			return "", fmt.Errorf("the config has principals, so there is no owner token: set %s to a principal's token (or use -token-file)", tokenEnv)
		}
		return "", fmt.Errorf("no owner token at %s: start the daemon once (mcphost serve) or use -standalone", path)
	}
	if err != nil {
		return "", fmt.Errorf("reading the owner token: %v", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// gatewayStandalone runs the host in-process and serves the endpoint on
// stdio: what the daemon would do, for one client, when no daemon runs.
func (e *env) gatewayStandalone(ctx context.Context, cfg *config.Config, path, as string, logger *slog.Logger) int {
	p, err := principalFor(cfg, as)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost gateway: %v\n", err)
		return exitUsage
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		fmt.Fprintf(e.stderr, "mcphost gateway: data_dir: %v\n", err)
		return exitFailure
	}
	st, err := boot.OpenStore(ctx, cfg, logger)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost gateway: %v\n", err)
		return exitFailure
	}
	defer st.Close()
	h, err := host.New(cfg, host.Options{
		Logger: logger.With("component", "host"), Version: version(), Restart: true, Store: st,
		PluginCacheDir: boot.PluginCacheDir(cfg, logger),
	})
	if err != nil {
		e.printHostError(cfg, err)
		return exitUsage
	}
	defer h.Close()
	h.Start(context.WithoutCancel(ctx))
	if err := h.WaitSettled(ctx); err != nil {
		return exitFailure
	}
	gw := gateway.New(h, gateway.Options{Logger: logger, Version: version()})
	defer gw.Close()
	caller := host.Caller{Principal: p, Admin: p.Name == host.OwnerName}
	err = gw.ServeStdio(ctx, path, caller, &mcp.IOTransport{Reader: io.NopCloser(e.stdin), Writer: nopWriteCloser{e.stdout}})
	if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) && !errors.Is(err, mcp.ErrConnectionClosed) {
		fmt.Fprintf(e.stderr, "mcphost gateway: %v\n", err)
		return exitFailure
	}
	return exitOK
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// gatewayConfig prints a client's configuration snippet.
func (e *env) gatewayConfig(args []string) int {
	fs := e.newFlagSet("gateway config", "claude|claude-code|cursor|vscode [-config FILE] [-server NAME] [-stdio]")
	cfgPath := fs.String("config", "", "config `FILE` (default: ./mcphost.hcl, else ~/.config/mcphost/mcphost.hcl, else the embedded default)")
	server := fs.String("server", "", "point the client at one server's passthrough endpoint")
	stdio := fs.Bool("stdio", false, "configure the stdio bridge instead of the HTTP endpoint")
	var client string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		client, args = args[0], args[1:]
	}
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if client == "" && fs.NArg() == 1 {
		client = fs.Arg(0)
	}
	cfg, ok := e.loadConfig(*cfgPath)
	if !ok {
		return exitUsage
	}
	path := gateway.PathAggregate
	if *server != "" {
		path += "/servers/" + *server
	}
	url := daemonURL(cfg) + path
	token, terr := gatewayToken(cfg, "")
	if terr != nil {
		token = "<TOKEN>"
		fmt.Fprintf(e.stderr, "mcphost: %v; replace <TOKEN> with it\n", terr)
	} else {
		fmt.Fprintln(e.stderr, "mcphost: the snippet holds your token: keep the file it goes into private")
	}
	exe := selfExecutable()
	if strings.Contains(exe, "go-build") {
		fmt.Fprintln(e.stderr, "mcphost: this mcphost is a temporary `go run` build; install it (go install ./cmd/mcphost) and put that path in the snippet")
		exe = "mcphost"
	}
	stdioArgs := []string{"gateway", "-stdio"}
	if *cfgPath != "" {
		abs, _ := filepath.Abs(*cfgPath)
		stdioArgs = append(stdioArgs, "-config", abs)
	}
	if *server != "" {
		stdioArgs = append(stdioArgs, "-server", *server)
	}
	stdioEntry := map[string]any{"command": exe, "args": stdioArgs}
	if terr != nil && len(cfg.Principals) > 0 {
		stdioEntry["env"] = map[string]string{tokenEnv: token}
	}
	auth := map[string]string{"Authorization": "Bearer " + token}
	var snippet any
	switch client {
	case "claude":
		// Claude Desktop's claude_desktop_config.json runs local servers
		// over stdio.
		snippet = map[string]any{"mcpServers": map[string]any{"mcphost": stdioEntry}}
	case "claude-code":
		if *stdio {
			fmt.Fprintf(e.stdout, "claude mcp add mcphost -- %s %s\n", exe, strings.Join(stdioArgs, " "))
		} else {
			fmt.Fprintf(e.stdout, "claude mcp add --transport http mcphost %s --header \"Authorization: Bearer %s\"\n", url, token)
		}
		return exitOK
	case "cursor":
		entry := map[string]any{"url": url, "headers": auth}
		if *stdio {
			entry = stdioEntry
		}
		snippet = map[string]any{"mcpServers": map[string]any{"mcphost": entry}}
	case "vscode":
		entry := map[string]any{"type": "http", "url": url, "headers": auth}
		if *stdio {
			entry = map[string]any{"type": "stdio", "command": stdioEntry["command"], "args": stdioEntry["args"]}
			if env, ok := stdioEntry["env"]; ok {
				entry["env"] = env
			}
		}
		snippet = map[string]any{"servers": map[string]any{"mcphost": entry}}
	default:
		fmt.Fprintf(e.stderr, "mcphost gateway config: name the client: claude (Claude Desktop), claude-code, cursor or vscode\n")
		return exitUsage
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	_ = enc.Encode(snippet)
	return exitOK
}
