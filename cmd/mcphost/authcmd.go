package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/termsafe"
	"github.com/mcphost/mcphost/oauth"
)

const authUsage = `Usage:
  mcphost auth login  [-config FILE] [-url URL] SERVER   sign in to SERVER: prints a URL to open, waits
  mcphost auth logout [-config FILE] [-url URL] SERVER   sign out of SERVER (tokens revoked and deleted)
  mcphost auth status [-config FILE] [-url URL] [-json] [SERVER]
                                                         who is signed in where

The commands talk to the running daemon (mcphost serve): its listen and
data_dir come from the config, the token from $MCPHOST_TOKEN or the owner
token in data_dir. Nothing opens a browser: open the printed URL yourself.
`

// loginWait bounds how long login waits for the browser.
const loginWait = oauth.FlowTTL

// authCmd is `mcphost auth login|logout|status`.
func (e *env) authCmd(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, authUsage)
		return exitUsage
	}
	sub := args[0]
	fs := e.newFlagSet("auth "+sub, "[-config FILE] [-url URL] SERVER")
	fs.Usage = func() { fmt.Fprint(e.stderr, authUsage) }
	cfgPath := fs.String("config", "", "the daemon's config `FILE` (default: the embedded default config)")
	url := fs.String("url", "", "the daemon's `URL` (default: from the config's listen)")
	asJSON := fs.Bool("json", false, "status: print JSON")
	if code := parseFlags(fs, args[1:]); code >= 0 {
		return code
	}
	server := fs.Arg(0)
	switch {
	case sub != "login" && sub != "logout" && sub != "status", fs.NArg() > 1,
		sub != "status" && server == "":
		fmt.Fprint(e.stderr, authUsage)
		return exitUsage
	}
	d, code := e.daemon("auth "+sub, *cfgPath, *url)
	if code >= 0 {
		return code
	}
	switch sub {
	case "login":
		return e.authLogin(ctx, d, server)
	case "logout":
		if err := d.do(ctx, http.MethodDelete, "/api/v1/servers/"+neturl.PathEscape(server)+"/auth", http.StatusNoContent, nil); err != nil {
			fmt.Fprintf(e.stderr, "mcphost auth logout: %v\n", err)
			return exitFailure
		}
		fmt.Fprintf(e.stdout, "signed out of %s\n", termsafe.Line(server))
		return exitOK
	default:
		return e.authStatus(ctx, d, server, *asJSON)
	}
}

// daemonAPI is the running daemon's API with a bearer token.
type daemonAPI struct {
	base, token string
	client      *http.Client
}

// daemon finds the running daemon of a config; code ≥ 0 is an exit code.
func (e *env) daemon(cmd, cfgPath, url string) (*daemonAPI, int) {
	cfg, ok := e.loadConfig(cfgPath)
	if !ok {
		return nil, exitUsage
	}
	base := strings.TrimSuffix(url, "/")
	if base == "" {
		if _, port, _ := net.SplitHostPort(cfg.Listen); port == "0" {
			fmt.Fprintf(e.stderr, "mcphost %s: the config listens on %s, a port the daemon chose when it started; give -url (serve prints it)\n", cmd, cfg.Listen)
			return nil, exitUsage
		}
		base = daemonURL(cfg)
	}
	token, err := gatewayToken(cfg, "")
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost %s: %v\n", cmd, err)
		return nil, exitUsage
	}
	return &daemonAPI{base: base, token: token, client: &http.Client{Timeout: 2 * time.Minute}}, -1
}

// do makes one request and decodes a JSON answer into out.
func (d *daemonAPI) do(ctx context.Context, method, path string, want int, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, d.base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := d.client.Do(req)
	if err != nil {
		var ue *neturl.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("the daemon at %s does not answer (is mcphost serve running?): %v", d.base, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		var apiErr struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		_ = json.Unmarshal(body, &apiErr)
		msg := apiErr.Error.Message
		if msg == "" {
			msg = strings.TrimSpace(string(body))
		}
		if resp.StatusCode == http.StatusUnauthorized {
			return fmt.Errorf("the daemon did not accept the token (%s, or the owner token in data_dir)", tokenEnv)
		}
		return fmt.Errorf("the daemon answered %d: %s", resp.StatusCode, termsafe.Line(msg))
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return fmt.Errorf("the daemon's answer: %v", err)
		}
	}
	return nil
}

// authLogin starts a sign-in, prints its launch URL and waits for it.
func (e *env) authLogin(ctx context.Context, d *daemonAPI, server string) int {
	var f oauth.Flow
	if err := d.do(ctx, http.MethodPost, "/api/v1/servers/"+neturl.PathEscape(server)+"/auth/start", http.StatusCreated, &f); err != nil {
		fmt.Fprintf(e.stderr, "mcphost auth login: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(e.stdout, "To sign in to %s, open this URL in a browser (it works once, until %s):\n\n  %s\n\n",
		termsafe.Line(server), f.ExpiresAt.Local().Format("15:04"), termsafe.Line(f.LaunchURL))
	if u, err := neturl.Parse(d.base); err == nil {
		if h := u.Hostname(); h == "127.0.0.1" || h == "localhost" || h == "::1" {
			fmt.Fprintf(e.stdout, "The browser must reach %s; from another machine, forward the port first: ssh -L %s:%s:%s THIS-HOST\n\n", d.base, u.Port(), h, u.Port())
		}
	}
	start := time.Now()
	deadline := start.Add(loginWait)
	for time.Now().Before(deadline) {
		var st oauth.Flow
		if err := d.do(ctx, http.MethodGet, "/api/v1/auth/flows/"+neturl.PathEscape(f.ID)+"?wait=30s", http.StatusOK, &st); err != nil {
			fmt.Fprintf(e.stderr, "mcphost auth login: %v\n", err)
			return exitFailure
		}
		switch st.State {
		case oauth.FlowDone:
			fmt.Fprintf(e.stdout, "signed in to %s\n", termsafe.Line(server))
			return exitOK
		case oauth.FlowFailed:
			fmt.Fprintf(e.stderr, "mcphost auth login: the sign-in failed: %s\n", termsafe.Line(st.Error))
			return exitFailure
		case oauth.FlowLaunched:
			fmt.Fprintf(e.stdout, "the browser went to the authorization server; waiting for it to come back (%s)\n", time.Since(start).Round(time.Second))
		default:
			fmt.Fprintf(e.stdout, "waiting for the URL to be opened (%s)\n", time.Since(start).Round(time.Second))
		}
		if ctx.Err() != nil {
			return exitFailure
		}
	}
	fmt.Fprintf(e.stderr, "mcphost auth login: the sign-in was not completed within %s; run the command again\n", loginWait)
	return exitFailure
}

// authStatus prints who is signed in where and which servers wait for a
// sign-in.
func (e *env) authStatus(ctx context.Context, d *daemonAPI, server string, asJSON bool) int {
	var creds struct {
		Credentials []oauth.Status `json:"credentials"`
	}
	q := ""
	if server != "" {
		q = "?server=" + neturl.QueryEscape(server)
	}
	if err := d.do(ctx, http.MethodGet, "/api/v1/auth"+q, http.StatusOK, &creds); err != nil {
		fmt.Fprintf(e.stderr, "mcphost auth status: %v\n", err)
		return exitFailure
	}
	var list struct {
		Servers []host.ServerStatus `json:"servers"`
	}
	if err := d.do(ctx, http.MethodGet, "/api/v1/servers", http.StatusOK, &list); err != nil {
		fmt.Fprintf(e.stderr, "mcphost auth status: %v\n", err)
		return exitFailure
	}
	servers := list.Servers
	var waiting []host.ServerStatus
	for _, s := range servers {
		if (server == "" || s.Name == server) && (s.State == host.StateNeedsAuth || s.State == host.StateAuthError) {
			waiting = append(waiting, s)
		}
	}
	if asJSON {
		out, _ := json.MarshalIndent(map[string]any{"credentials": creds.Credentials, "waiting": waiting}, "", "  ")
		e.stdout.Write(append(out, '\n'))
		return exitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tPRINCIPAL\tISSUER\tSCOPES\tEXPIRES\tREFRESH")
	for _, c := range creds.Credentials {
		exp := "-"
		if !c.ExpiresAt.IsZero() {
			exp = c.ExpiresAt.Local().Format(time.DateTime)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%t\n", termsafe.Line(c.Server), termsafe.Line(c.Principal), termsafe.Line(c.Issuer),
			termsafe.Line(strings.Join(c.Scopes, " ")), exp, c.Refresh)
	}
	tw.Flush()
	for _, s := range waiting {
		fmt.Fprintf(e.stdout, "%s: %s: %s\n", termsafe.Line(s.Name), s.State, termsafe.Line(s.LastError))
	}
	return exitOK
}
