package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcphost/mcphost/gateway"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/boot"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/shellquote"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tokenEnv names the environment variable that carries a principal's token
// to the gateway commands.
const tokenEnv = "MCPHOST_TOKEN"

const gatewayUsage = `usage:
  mcphost gateway -stdio -url URL [-token-file FILE] [-v]
      a bridge from stdin/stdout to the daemon at URL (its base URL or its
      /mcp endpoint) with one credential: -token-file, else $MCPHOST_TOKEN;
      the config is not read
  mcphost gateway -stdio [-config FILE] [-server NAME | -endpoint NAME] [-url URL] [-token-file FILE] [-standalone [-as NAME]] [-v]
      the same bridge to the config's daemon (its listen), with the owner
      token from data_dir when no credential is given; -standalone runs the
      host in this process instead, when no daemon runs
  mcphost gateway config CLIENT [-config FILE] [-as NAME] [-url URL] [-server NAME] [-stdio]
      print what to paste into that client's configuration; CLIENT is one of
      ` + gatewayClientNames + `
`

func (e *env) gateway(ctx context.Context, args []string) int {
	if len(args) > 0 && args[0] == "config" {
		return e.gatewayConfig(args[1:])
	}
	fs := e.newFlagSet("gateway", "-stdio [flags] | config CLIENT")
	fs.Usage = func() { e.gatewayHelp(fs) }
	stdio := fs.Bool("stdio", false, "serve MCP on stdin/stdout")
	cfgPath := fs.String("config", "", "config `FILE` (default: ./mcphost.hcl, else ~/.config/mcphost/mcphost.hcl, else the embedded default)")
	server := fs.String("server", "", "serve one server's passthrough endpoint (/mcp/servers/`NAME`)")
	endpoint := fs.String("endpoint", "", "serve a named endpoint (/mcp/endpoints/`NAME`)")
	url := fs.String("url", "", "the daemon's base `URL` or its /mcp endpoint (default: from the config's listen)")
	tokenFile := fs.String("token-file", "", "read the bearer token from `FILE` (default: $MCPHOST_TOKEN, else data_dir's owner token)")
	standalone := fs.Bool("standalone", false, "run the host in this process instead of bridging to a daemon")
	as := fs.String("as", "owner", "with -standalone: the principal `NAME` the policies see")
	verbose := fs.Bool("v", false, "log on stderr")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if !*stdio || fs.NArg() > 0 {
		e.gatewayHelp(fs)
		return exitUsage
	}
	if *server != "" && *endpoint != "" {
		fmt.Fprintln(e.stderr, "mcphost gateway: -server and -endpoint are exclusive")
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
		cfg, ok := e.loadConfig(*cfgPath)
		if !ok {
			return exitUsage
		}
		return e.gatewayStandalone(ctx, cfg, path, *as, logger)
	}
	// With -url and a credential the bridge needs nothing of the config:
	// a client that starts it (Claude Desktop, Gemini) need not hold the
	// config's other secrets, nor a shell's environment.
	token, err := bridgeCredential(*tokenFile)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost gateway: %v\n", err)
		return exitUsage
	}
	var target string
	if *url != "" {
		if target, err = endpointURL(*url, path); err != nil {
			fmt.Fprintf(e.stderr, "mcphost gateway: -url: %v\n", err)
			return exitUsage
		}
	}
	if token == "" || target == "" {
		cfg, ok := e.loadConfig(*cfgPath)
		if !ok {
			return exitUsage
		}
		if target == "" {
			target = daemonURL(cfg) + path
		}
		if token == "" {
			if token, err = gatewayToken(cfg); err != nil {
				fmt.Fprintf(e.stderr, "mcphost gateway: %v\n", err)
				return exitUsage
			}
		}
	}
	err = gateway.Bridge(ctx, e.stdin, e.stdout, gateway.BridgeOptions{URL: target, Token: token, Logger: logger})
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(e.stderr, "mcphost gateway: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// gatewayHelp prints the usage of gateway, its flags and its help text.
func (e *env) gatewayHelp(fs *flag.FlagSet) {
	fmt.Fprint(e.stderr, gatewayUsage)
	if fs != nil {
		fmt.Fprintln(e.stderr, "flags of gateway -stdio:")
		fs.PrintDefaults()
	}
	fmt.Fprintf(e.stderr, "\n%s", commandHelp["gateway"])
}

// bridgeCredential is the token the bridge was given: the -token-file's,
// else $MCPHOST_TOKEN; "" when neither was.
func bridgeCredential(file string) (string, error) {
	if file == "" {
		return strings.TrimSpace(os.Getenv(tokenEnv)), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("-token-file: %v", err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("-token-file %s is empty: it should hold one bearer token", file)
	}
	return t, nil
}

// endpointURL is the gateway endpoint at path (/mcp, /mcp/servers/NAME)
// of the daemon raw names: its base URL (http://host:7777, a prefix behind
// a proxy) or its /mcp endpoint alike. A URL already naming an endpoint
// under /mcp/ is kept as it is.
func endpointURL(raw, path string) (string, error) {
	u, err := neturl.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not an http(s) URL such as http://127.0.0.1:7777", raw)
	}
	p := strings.TrimRight(u.Path, "/")
	if !strings.Contains(p, gateway.PathAggregate+"/") {
		p = strings.TrimSuffix(p, gateway.PathAggregate) + path
	}
	u.Path, u.RawPath = p, ""
	return u.String(), nil
}

// daemonURL is the base URL of the daemon a config runs.
func daemonURL(cfg *config.Config) string {
	_, port, _ := net.SplitHostPort(cfg.Listen)
	return "http://" + net.JoinHostPort(urlHost(cfg.Listen), port)
}

// gatewayToken returns the bearer token to send the config's daemon:
// $MCPHOST_TOKEN, else the owner token the daemon keeps in data_dir.
func gatewayToken(cfg *config.Config) (string, error) {
	if t := strings.TrimSpace(os.Getenv(tokenEnv)); t != "" {
		return t, nil
	}
	path := filepath.Join(cfg.DataDir, ownerTokenFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if len(cfg.Principals) > 0 {
			return "", fmt.Errorf("the config has principals (%s), so there is no owner token: set %s to your principal's token, or use -token-file FILE", principalNames(cfg), tokenEnv)
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

// gatewayClients are the clients gateway config writes snippets for, with
// where each keeps its MCP servers (said on stderr). The JSON ones that
// hold an entry {URLKEY: URL, "headers": {...}} (or the bridge's command
// and args) in an object TOP give those two keys; the others are written
// by a case of their own.
var gatewayClients = []struct{ name, where, top, urlKey string }{
	{"claude", "Claude Desktop: the mcpServers of claude_desktop_config.json (Settings > Developer > Edit Config); it runs the stdio bridge", "mcpServers", ""},
	{"claude-code", "Claude Code: run this command line", "", ""},
	{"cursor", "Cursor: the mcpServers of ~/.cursor/mcp.json (or .cursor/mcp.json in a project)", "mcpServers", "url"},
	{"vscode", "VS Code: .vscode/mcp.json (or the user mcp.json: MCP: Open User Configuration)", "", ""},
	// Qwen Code and Gemini CLI read url as the old SSE transport; httpUrl
	// is Streamable HTTP.
	{"qwen", "Qwen Code: the mcpServers of ~/.qwen/settings.json (or .qwen/settings.json in a project)", "mcpServers", "httpUrl"},
	{"gemini", "Gemini CLI: the mcpServers of ~/.gemini/settings.json (or .gemini/settings.json in a project)", "mcpServers", "httpUrl"},
	{"codex", "Codex: ~/.codex/config.toml", "", ""},
	{"inspector", "MCP Inspector: a file for --config FILE --server mcphost", "", ""},
	{"windsurf", "Windsurf: the mcpServers of ~/.codeium/windsurf/mcp_config.json", "mcpServers", "serverUrl"},
	{"zed", "Zed: the context_servers of its settings.json (zed: open settings)", "context_servers", "url"},
}

const gatewayClientNames = "claude (Claude Desktop), claude-code, cursor, vscode, qwen, gemini, codex,\n      inspector, windsurf or zed"

// gatewayConfig prints a client's configuration snippet: the daemon's
// endpoint with one principal's credential. HTTP snippets carry the token
// in the header the client keeps in its file (VS Code asks for it
// instead); stdio snippets run the bridge with -url and -token-file, a file
// of the token alone that this writes with mode 0600, so the client needs
// neither the config nor an environment variable.
func (e *env) gatewayConfig(args []string) int {
	fs := e.newFlagSet("gateway config", "CLIENT [-config FILE] [-as NAME] [-url URL] [-server NAME] [-stdio]")
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "usage: mcphost gateway config CLIENT [-config FILE] [-as NAME] [-url URL] [-server NAME] [-stdio]")
		fs.PrintDefaults()
		fmt.Fprintf(e.stderr, "\n%s", commandHelp["gateway"])
	}
	cfgPath := fs.String("config", "", "config `FILE` (default: ./mcphost.hcl, else ~/.config/mcphost/mcphost.hcl, else the embedded default)")
	as := fs.String("as", "", "the principal `NAME` whose token the snippet carries (default: $MCPHOST_TOKEN, else the owner's)")
	url := fs.String("url", "", "the daemon's base `URL` or its /mcp endpoint (default: from the config's listen)")
	server := fs.String("server", "", "point the client at one server's passthrough endpoint (/mcp/servers/`NAME`)")
	stdio := fs.Bool("stdio", false, "configure the stdio bridge (with a token file) instead of the HTTP endpoint")
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
	where, top, urlKey := "", "", ""
	for _, c := range gatewayClients {
		if c.name == client {
			where, top, urlKey = c.where, c.top, c.urlKey
		}
	}
	if where == "" || fs.NArg() > 1 || (fs.NArg() == 1 && fs.Arg(0) != client) {
		fmt.Fprintf(e.stderr, "mcphost gateway config: name the client: %s\n", gatewayClientNames)
		return exitUsage
	}
	path := gateway.PathAggregate
	if *server != "" {
		path += "/servers/" + *server
	}
	cred, code := e.snippetCredential(*cfgPath, *as, *url, path)
	if code >= 0 {
		return code
	}
	exe := selfExecutable()
	if strings.Contains(exe, "go-build") {
		fmt.Fprintln(e.stderr, "mcphost: this mcphost is a temporary `go run` build; install it (go install ./cmd/mcphost) and put that path in the snippet")
		exe = "mcphost"
	}
	whose := "your token"
	if cred.principal != "" {
		whose = cred.principal + "'s token"
	}
	// The stdio bridge and VS Code's prompt need the token outside the
	// snippet: in a file only the user can read.
	bridge := client == "claude" || *stdio
	tokenFile := ""
	if bridge || client == "vscode" {
		var err error
		if tokenFile, err = writeTokenFile(cred); err != nil {
			fmt.Fprintf(e.stderr, "mcphost gateway config: %v\n", err)
			return exitFailure
		}
		fmt.Fprintf(e.stderr, "mcphost: wrote %s to %s (mode 0600)\n", whose, tokenFile)
	}
	fmt.Fprintf(e.stderr, "mcphost: for %s\n", where)
	bridgeArgs := []string{"gateway", "-stdio", "-url", cred.url, "-token-file", tokenFile}
	bridgeEntry := map[string]any{"command": exe, "args": bridgeArgs}
	auth := map[string]string{"Authorization": "Bearer " + cred.token}
	switch {
	case bridge:
		fmt.Fprintln(e.stderr, "mcphost: the client runs the stdio bridge, which reads the token from that file; the snippet holds no secret")
	case client == "vscode":
		fmt.Fprintln(e.stderr, "mcphost: VS Code asks for the token the first time it starts the server and keeps it in its secret storage: paste the contents of that file")
	default:
		fmt.Fprintf(e.stderr, "mcphost: the snippet holds %s: keep the file it goes into private\n", whose)
	}
	var snippet any
	switch client {
	case "claude-code":
		if bridge {
			fmt.Fprintln(e.stdout, shellquote.Join(append([]string{"claude", "mcp", "add", "mcphost", "--", exe}, bridgeArgs...)...))
		} else {
			fmt.Fprintln(e.stdout, shellquote.Join("claude", "mcp", "add", "--transport", "http", "mcphost", cred.url, "--header", "Authorization: Bearer "+cred.token))
		}
		return exitOK
	case "codex":
		fmt.Fprintln(e.stdout, "[mcp_servers.mcphost]")
		if bridge {
			fmt.Fprintf(e.stdout, "command = %s\nargs = [%s]\n", tomlString(exe), tomlStrings(bridgeArgs))
		} else {
			fmt.Fprintf(e.stdout, "url = %s\nhttp_headers = { Authorization = %s }\n", tomlString(cred.url), tomlString("Bearer "+cred.token))
		}
		return exitOK
	case "vscode":
		if bridge {
			snippet = map[string]any{"servers": map[string]any{"mcphost": map[string]any{"type": "stdio", "command": exe, "args": bridgeArgs}}}
			break
		}
		snippet = map[string]any{
			"inputs": []any{map[string]any{
				"type": "promptString", "id": "mcphost-token", "password": true,
				"description": fmt.Sprintf("mcphost: %s for %s (in %s)", whose, cred.url, tokenFile),
			}},
			"servers": map[string]any{"mcphost": map[string]any{
				"type": "http", "url": cred.url,
				"headers": map[string]string{"Authorization": "Bearer ${input:mcphost-token}"},
			}},
		}
	case "inspector":
		// Without a type the Inspector takes an entry for stdio.
		entry := map[string]any{"type": "streamable-http", "url": cred.url, "headers": auth}
		if bridge {
			entry = map[string]any{"type": "stdio", "command": exe, "args": bridgeArgs}
		}
		snippet = map[string]any{"mcpServers": map[string]any{"mcphost": entry}}
	default:
		entry := bridgeEntry
		if !bridge {
			entry = map[string]any{urlKey: cred.url, "headers": auth}
		}
		snippet = map[string]any{top: map[string]any{"mcphost": entry}}
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	_ = enc.Encode(snippet)
	return exitOK
}

// snippetCred is the endpoint and credential a snippet names.
type snippetCred struct {
	url       string // the endpoint
	token     string
	principal string // whose token, "" when unknown ($MCPHOST_TOKEN)
}

// snippetCredential finds the endpoint and the credential of gateway
// config: -as NAME's token from the config, else $MCPHOST_TOKEN, else the
// owner token in data_dir. With -url and $MCPHOST_TOKEN it reads no config
// (a principal's laptop need not hold the other principals' secrets). A
// code >= 0 means the command must stop with it.
func (e *env) snippetCredential(cfgPath, as, url, path string) (snippetCred, int) {
	var c snippetCred
	if url != "" {
		u, err := endpointURL(url, path)
		if err != nil {
			fmt.Fprintf(e.stderr, "mcphost gateway config: -url: %v\n", err)
			return c, exitUsage
		}
		c.url = u
	}
	env := strings.TrimSpace(os.Getenv(tokenEnv))
	if as == "" && env != "" && c.url != "" {
		c.token = env
		return c, -1
	}
	cfg, ok := e.loadConfig(cfgPath)
	if !ok {
		return c, exitUsage
	}
	if c.url == "" {
		c.url = daemonURL(cfg) + path
	}
	switch {
	case as != "" && as != host.OwnerName:
		t, err := cliToken(cfg, as)
		if err != nil {
			fmt.Fprintf(e.stderr, "mcphost gateway config: %v; the config's principals: %s\n", err, principalNames(cfg))
			return c, exitUsage
		}
		c.token, c.principal = t, as
	case env != "":
		c.token = env
	default:
		t, err := gatewayToken(cfg)
		if err != nil {
			if len(cfg.Principals) > 0 {
				fmt.Fprintf(e.stderr, "mcphost gateway config: the config has principals (%s) and no owner: name yours with -as NAME, or set %s to your token\n", principalNames(cfg), tokenEnv)
			} else {
				fmt.Fprintf(e.stderr, "mcphost gateway config: %v\n", err)
			}
			return c, exitUsage
		}
		c.token, c.principal = t, host.OwnerName
	}
	return c, -1
}

// principalNames lists the config's principals for a message.
func principalNames(cfg *config.Config) string {
	names := make([]string, len(cfg.Principals))
	for i, p := range cfg.Principals {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// writeTokenFile writes the credential's token, alone, to a file of mode
// 0600 under the user's config directory, named after the principal and
// the daemon, and returns its path.
func writeTokenFile(c snippetCred) (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no directory for the token file: %v", err)
	}
	dir = filepath.Join(dir, "mcphost", "tokens")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("the token file's directory: %v", err)
	}
	who := c.principal
	if who == "" {
		who = "token"
	}
	daemon := c.url
	if u, err := neturl.Parse(c.url); err == nil {
		daemon = u.Host
	}
	name := safeFileName(who) + "@" + safeFileName(daemon) + ".token"
	f, err := os.CreateTemp(dir, ".token-*")
	if err != nil {
		return "", fmt.Errorf("the token file: %v", err)
	}
	_, werr := f.WriteString(c.token + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	path := filepath.Join(dir, name)
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("writing the token file %s: %v", path, werr)
	}
	return path, nil
}

// safeFileName keeps letters, digits, '.', '-' and '_' of s and turns
// anything else into '_'.
func safeFileName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// tomlString is s as a TOML basic string (JSON's escapes are TOML's).
func tomlString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// tomlStrings is ss as the items of a TOML array.
func tomlStrings(ss []string) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = tomlString(s)
	}
	return strings.Join(out, ", ")
}
